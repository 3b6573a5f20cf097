// SPDX-License-Identifier: GPL-2.0-or-later
// Slurm's AuthInfo setting, as slurm.conf gives it to slurmctld and to clients alike.
#pragma once

#include <string>

namespace pollux::auth {

// The munged socket named in an AuthInfo value: the `socket=PATH` option among its
// comma-separated options (option names case-insensitive, the last one counting, as Slurm
// reads them); empty for libmunge's default.
std::string mungeSocketFromAuthInfo(const std::string& auth_info);

}  // namespace pollux::auth
