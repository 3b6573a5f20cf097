// SPDX-License-Identifier: GPL-2.0-or-later
#include "rate_limiter.hpp"

#include <algorithm>

namespace pollux::service {

RateLimiter::RateLimiter(double rate_per_s)
    : rate_(rate_per_s), tokens_(rate_per_s), last_(std::chrono::steady_clock::now()) {}

bool RateLimiter::tryAcquire() {
  std::lock_guard<std::mutex> guard(mutex_);
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - last_).count();
  last_ = now;
  tokens_ = std::min(rate_, tokens_ + elapsed * rate_);
  if (tokens_ < 1.0) return false;
  tokens_ -= 1.0;
  return true;
}

}  // namespace pollux::service
