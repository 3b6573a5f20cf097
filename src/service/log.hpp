// SPDX-License-Identifier: GPL-2.0-or-later
// How the service writes to slurmctld's log: one call per line.
#pragma once

#include <functional>
#include <string>

namespace pollux::service {

enum class LogLevel { kError, kInfo, kDebug };
using Log = std::function<void(LogLevel level, const std::string& message)>;

}  // namespace pollux::service
