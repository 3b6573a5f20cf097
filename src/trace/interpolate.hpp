// SPDX-License-Identifier: GPL-2.0-or-later
// Piecewise-linear interpolation helpers shared by the profile and validation-curve lookups.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace pollux::trace {

// The value at x is (1 - weight) * value[lo] + weight * value[hi]; x is clamped to the keys.
struct Bracket {
  size_t lo;
  size_t hi;
  double weight;
};

// `keys` must be sorted ascending and non-empty.
inline Bracket bracket(const std::vector<double>& keys, double x) {
  const auto upper = std::lower_bound(keys.begin(), keys.end(), x);
  if (upper == keys.begin()) return {0, 0, 0.0};
  if (upper == keys.end()) return {keys.size() - 1, keys.size() - 1, 0.0};
  const size_t hi = static_cast<size_t>(upper - keys.begin());
  const size_t lo = hi - 1;
  return {lo, hi, (x - keys[lo]) / (keys[hi] - keys[lo])};
}

inline double blend(double lo_value, double hi_value, double weight) {
  return lo_value + weight * (hi_value - lo_value);
}

}  // namespace pollux::trace
