// SPDX-License-Identifier: GPL-2.0-or-later
// libFuzzer target: SchedulerParameters (the input's first line) and pollux.conf (the rest).
#include <cstddef>
#include <cstdint>
#include <string>

#include "settings/settings.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const auto newline = input.find('\n');
  const std::string parameters = input.substr(0, newline);
  const std::string conf = newline == std::string::npos ? "" : input.substr(newline + 1);
  pollux::settings::parseConfig(conf, parameters);  // reports errors, never throws
  return 0;
}
