// SPDX-License-Identifier: GPL-2.0-or-later
#include "backoff.hpp"

#include <algorithm>
#include <cmath>

namespace pollux::agent {

Backoff::Backoff(double first_s, double max_s, unsigned seed)
    : first_s_(first_s), max_s_(std::max(first_s, max_s)), random_(seed) {}

double Backoff::nextDelay() {
  const double base = std::min(max_s_, first_s_ * std::ldexp(1.0, std::min(failures_, 30)));
  ++failures_;
  return base / 2 + std::uniform_real_distribution<double>(0, base / 2)(random_);
}

}  // namespace pollux::agent
