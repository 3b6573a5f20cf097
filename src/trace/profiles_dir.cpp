// SPDX-License-Identifier: GPL-2.0-or-later
#include "profiles_dir.hpp"

#include <cstdlib>
#include <filesystem>

#ifndef POLLUX_DATADIR
#error "POLLUX_DATADIR must name the installed data directory"
#endif
#ifndef POLLUX_SRCDIR
#error "POLLUX_SRCDIR must name the source tree"
#endif

namespace pollux::trace {

namespace fs = std::filesystem;

std::string defaultProfilesDir() {
  const fs::path traces = fs::path("data") / "adaptdl" / "traces";
  if (const char* override_dir = std::getenv("POLLUX_DATADIR")) {
    return (fs::path(override_dir) / traces).string();
  }
  const fs::path installed = fs::path(POLLUX_DATADIR) / traces;
  if (fs::is_directory(installed)) return installed.string();
  return (fs::path(POLLUX_SRCDIR) / traces).string();
}

}  // namespace pollux::trace
