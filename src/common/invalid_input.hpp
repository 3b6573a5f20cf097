// SPDX-License-Identifier: GPL-2.0-or-later
// Error raised by the core when its inputs are unusable (NaN, infinite, out of range).
#pragma once

#include <stdexcept>
#include <string>

namespace pollux {

class InvalidInput : public std::invalid_argument {
 public:
  explicit InvalidInput(const std::string& what) : std::invalid_argument(what) {}
};

// Throws InvalidInput naming `what` unless `value` is finite and strictly positive.
void requirePositive(double value, const char* what);
// Throws InvalidInput naming `what` unless `value` is finite and >= 0.
void requireNonNegative(double value, const char* what);

}  // namespace pollux
