// SPDX-License-Identifier: GPL-2.0-or-later
// Test support: a fake environment for the readers of slurm_env.hpp and workers.hpp.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "slurm_env.hpp"

namespace pollux::agent::testing {

inline GetEnv fakeEnv(std::map<std::string, std::string> values) {
  return [values](const char* name) -> std::optional<std::string> {
    const auto found = values.find(name);
    if (found == values.end()) return std::nullopt;
    return found->second;
  };
}

}  // namespace pollux::agent::testing
