// SPDX-License-Identifier: GPL-2.0-or-later
#include "step_stop.hpp"

namespace pollux::agent {

StepStopSignal::StepStopSignal(Clock::duration window, Clock::duration interval)
    : window_(window), interval_(interval) {}

bool StepStopSignal::due(Clock::time_point now) {
  if (!first_) {
    first_ = next_ = now;
  } else if (now < next_ || !open(now)) {
    return false;
  }
  next_ = now + interval_;
  return true;
}

bool StepStopSignal::open(Clock::time_point now) const {
  return !first_ || now - *first_ < window_;
}

}  // namespace pollux::agent
