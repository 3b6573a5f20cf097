// SPDX-License-Identifier: GPL-2.0-or-later
// When a task of the job's step tells the step's other tasks to stop through Slurm (scancel
// --signal): a node whose part of the step has not started yet has no step daemon to take the
// signal, and slurmd drops it, so the signal is sent again at an interval for a while.
#pragma once

#include <chrono>
#include <optional>

namespace pollux::agent {

class StepStopSignal {
 public:
  using Clock = std::chrono::steady_clock;
  StepStopSignal(Clock::duration window, Clock::duration interval = std::chrono::seconds(2));
  // Whether to send the signal now: at the first call, then every interval within the window.
  bool due(Clock::time_point now = Clock::now());
  // Whether the window since the first signal is still open.
  bool open(Clock::time_point now = Clock::now()) const;

 private:
  Clock::duration window_;
  Clock::duration interval_;
  std::optional<Clock::time_point> first_;
  Clock::time_point next_;
};

}  // namespace pollux::agent
