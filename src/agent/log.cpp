// SPDX-License-Identifier: GPL-2.0-or-later
#include "log.hpp"

#include <unistd.h>

namespace pollux::agent {
namespace {

std::string& prefix() {
  static std::string value = "pollux-agent: ";
  return value;
}

}  // namespace

void setLogPrefix(const std::string& value) { prefix() = value; }

void logLine(const std::string& message) {
  const std::string line = prefix() + message + "\n";
  if (write(STDERR_FILENO, line.data(), line.size()) < 0) return;  // nowhere else to say it
}

}  // namespace pollux::agent
