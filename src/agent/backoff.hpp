// SPDX-License-Identifier: GPL-2.0-or-later
// Retry delays after failed reports: exponential with "equal jitter" (half fixed, half random),
// so agents that lost slurmctld together do not come back together.
#pragma once

#include <random>

namespace pollux::agent {

class Backoff {
 public:
  Backoff(double first_s, double max_s, unsigned seed);
  // The delay before the next attempt; each call doubles the base up to max_s.
  double nextDelay();
  void reset() { failures_ = 0; }
  int failures() const { return failures_; }

 private:
  double first_s_;
  double max_s_;
  int failures_ = 0;
  std::mt19937 random_;
};

}  // namespace pollux::agent
