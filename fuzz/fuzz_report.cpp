// SPDX-License-Identifier: GPL-2.0-or-later
// libFuzzer target: the goodput report body the plugin parses from any HTTP client, and the
// plugin's reply the agent parses.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/invalid_input.hpp"
#include "common/schema/goodput_report.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  try {
    const auto report = pollux::schema::parseGoodputReport(body);
    pollux::schema::reportToJson(report);
  } catch (const pollux::InvalidInput&) {
  }
  try {
    pollux::schema::parseReportReply(body);
  } catch (const pollux::InvalidInput&) {
  }
  return 0;
}
