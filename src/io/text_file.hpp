// SPDX-License-Identifier: GPL-2.0-or-later
// Reading a whole text file (configuration, certificates, saved state).
#pragma once

#include <optional>
#include <string>

namespace pollux::io {

// The file's contents; nullopt if it cannot be opened, with errno telling why (ENOENT: it
// does not exist).
std::optional<std::string> readTextFile(const std::string& path);

}  // namespace pollux::io
