// SPDX-License-Identifier: GPL-2.0-or-later
// Test support: where the AdaptDL traces shipped with the package are, for unit tests.
#pragma once

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace pollux::testing {

// POLLUX_TRACES, which `make check` sets to the source tree's data/adaptdl/traces.
inline std::string shippedTraces() {
  const char* traces = std::getenv("POLLUX_TRACES");
  if (!traces) throw std::runtime_error("POLLUX_TRACES is not set (run through make check)");
  return traces;
}

}  // namespace pollux::testing
