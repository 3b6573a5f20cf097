// SPDX-License-Identifier: GPL-2.0-or-later
#include "step_schedule.hpp"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace pollux::emulate {

StepSchedule::StepSchedule(double time_scale, double start)
    : time_scale_(time_scale), deadline_(start) {
  if (!(time_scale > 0) || !std::isfinite(time_scale))
    throw std::invalid_argument("time scale must be > 0");
}

double StepSchedule::next(double profile_seconds, double now) {
  deadline_ = std::max(deadline_, now - kMaxLag) + wallSeconds(profile_seconds);
  return deadline_;
}

double monotonicNow() {
  timespec clock;
  clock_gettime(CLOCK_MONOTONIC, &clock);
  return double(clock.tv_sec) + double(clock.tv_nsec) * 1e-9;
}

void sleepUntil(double deadline) {
  timespec at;
  at.tv_sec = time_t(deadline);
  at.tv_nsec = std::min(999999999L, long((deadline - double(at.tv_sec)) * 1e9));
  clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nullptr);
}

}  // namespace pollux::emulate
