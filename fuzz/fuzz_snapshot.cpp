// SPDX-License-Identifier: GPL-2.0-or-later
// libFuzzer target: the policy snapshot pollux-policy reads on stdin.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/invalid_input.hpp"
#include "common/schema/snapshot_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    pollux::schema::parseSnapshot(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const pollux::InvalidInput&) {
  }
  return 0;
}
