// SPDX-License-Identifier: GPL-2.0-or-later
// When each emulated step ends in wall time. A step of P profile seconds lasts P / time_scale,
// counted from the previous step's deadline rather than from when the process woke up, so
// sleep overshoot does not accumulate over many short steps.
#pragma once

namespace pollux::emulate {

class StepSchedule {
 public:
  // Throws std::invalid_argument unless time_scale > 0.
  StepSchedule(double time_scale, double start);

  double wallSeconds(double profile_seconds) const { return profile_seconds / time_scale_; }
  // The deadline of a step of `profile_seconds` starting now. A schedule that fell more than
  // kMaxLag behind `now` (the process was stopped or starved) resumes from `now - kMaxLag`
  // rather than rushing through the steps it missed.
  double next(double profile_seconds, double now);

  static constexpr double kMaxLag = 0.5;

 private:
  double time_scale_;
  double deadline_;
};

// Seconds on CLOCK_MONOTONIC.
double monotonicNow();
// Sleeps until `deadline` (CLOCK_MONOTONIC, absolute) or a signal arrives.
void sleepUntil(double deadline);

}  // namespace pollux::emulate
