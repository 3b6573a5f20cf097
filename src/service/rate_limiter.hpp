// SPDX-License-Identifier: GPL-2.0-or-later
// A token bucket: at most `rate` events per second on average, bursts up to `rate`.
#pragma once

#include <chrono>
#include <mutex>

namespace pollux::service {

class RateLimiter {
 public:
  explicit RateLimiter(double rate_per_s);
  bool tryAcquire();

 private:
  std::mutex mutex_;
  double rate_;
  double tokens_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace pollux::service
