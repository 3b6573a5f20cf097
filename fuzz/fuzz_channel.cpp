// SPDX-License-Identifier: GPL-2.0-or-later
// libFuzzer target: one packet from a training process on pollux-agent's local channel.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "agent/channel_message.hpp"
#include "common/invalid_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    pollux::agent::parseTrainerMessage(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const pollux::InvalidInput&) {
  }
  return 0;
}
