// SPDX-License-Identifier: GPL-2.0-or-later
// SHA-256 of report bodies, for the payload of their MUNGE credential (docs/design.md section 6.1).
#pragma once

#include <string>
#include <string_view>

namespace pollux::auth {

// Lowercase hex SHA-256 of `data` (64 characters). Throws std::runtime_error if libcrypto fails.
std::string sha256Hex(std::string_view data);

}  // namespace pollux::auth
