// SPDX-License-Identifier: GPL-2.0-or-later
#include "invalid_input.hpp"

#include <cmath>
#include <sstream>

namespace pollux {

namespace {

[[noreturn]] void reject(double value, const char* what, const char* expected) {
  std::ostringstream message;
  message << what << " must be " << expected << ", got " << value;
  throw InvalidInput(message.str());
}

}  // namespace

void requirePositive(double value, const char* what) {
  if (!std::isfinite(value) || value <= 0.0) reject(value, what, "finite and > 0");
}

void requireNonNegative(double value, const char* what) {
  if (!std::isfinite(value) || value < 0.0) reject(value, what, "finite and >= 0");
}

}  // namespace pollux
