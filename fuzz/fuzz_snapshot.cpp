// libFuzzer target: the policy snapshot pollux-policy reads on stdin.
#include <cstddef>
#include <cstdint>
#include <string>

#include "invalid_input.hpp"
#include "report/snapshot_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    pollux::report::parseSnapshot(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const pollux::InvalidInput&) {
  }
  return 0;
}
