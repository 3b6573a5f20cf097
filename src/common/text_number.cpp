// SPDX-License-Identifier: GPL-2.0-or-later
#include "text_number.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace pollux {

std::optional<double> parseFiniteNumber(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789.+-eE") != std::string::npos) {
    return std::nullopt;
  }
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (*end != '\0' || errno == ERANGE || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::optional<long> parseInteger(const std::string& text, long min, long max) {
  if (text.empty() || text.find_first_not_of("0123456789+-") != std::string::npos) {
    return std::nullopt;
  }
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE || value < min || value > max) return std::nullopt;
  return value;
}

}  // namespace pollux
