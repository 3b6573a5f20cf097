// SPDX-License-Identifier: GPL-2.0-or-later
// Slurm's comma-separated name lists, as scontrol and sbatch take them (NodeList=, --exclude,
// --partition).
#pragma once

#include <string>
#include <vector>

namespace pollux {

// "n1,n2,n3" from {"n1", "n2", "n3"}; "" from none.
std::string commaJoined(const std::vector<std::string>& names);

}  // namespace pollux
