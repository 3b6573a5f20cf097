// SPDX-License-Identifier: GPL-2.0-or-later
// A job's time left before its time limit, as squeue shows it, and a watch on that limit for
// a launcher that must act ahead of it.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

namespace pollux::agent {

// The job's time left as squeue prints it (%L: "[days-]hours:minutes:seconds" or
// "minutes:seconds"); "" where it has no limit or squeue cannot tell.
std::string timeLeftText(const std::string& job_id);

// The seconds in squeue's %L text; nullopt for any other text (UNLIMITED, NOT_SET, "").
std::optional<double> secondsLeft(const std::string& text);

// Whether the job's time limit ends it within `within_s` seconds, asking `time_left` (squeue's
// %L text) at most every `interval`: the limit may change (scontrol update TimeLimit=).
class TimeLimitWatch {
 public:
  using Clock = std::chrono::steady_clock;
  using TimeLeft = std::function<std::string()>;
  TimeLimitWatch(double within_s, TimeLeft time_left,
                 Clock::duration interval = std::chrono::seconds(10));
  bool due(Clock::time_point now = Clock::now());

 private:
  double within_s_;
  TimeLeft time_left_;
  Clock::duration interval_;
  std::optional<Clock::time_point> next_ask_;
  bool due_ = false;
};

}  // namespace pollux::agent
