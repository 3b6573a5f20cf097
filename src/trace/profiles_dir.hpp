// SPDX-License-Identifier: GPL-2.0-or-later
// Where the application profiles shipped with the package are.
#pragma once

#include <string>

namespace pollux::trace {

// The shipped AdaptDL traces: $POLLUX_DATADIR/data/adaptdl/traces if set, else the installed
// copy, else the source tree's (uninstalled runs).
std::string defaultProfilesDir();

}  // namespace pollux::trace
