// SPDX-License-Identifier: GPL-2.0-or-later
// Builders of nodes and jobs shared by the policy tests.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "policy.hpp"

namespace pollux::policy::testing {

// `count` nodes named <prefix>0, <prefix>1, ... with `gpus` GPUs of `type` each.
std::vector<Node> nodesOf(const std::string& type, int count, int gpus,
                          const std::string& prefix);

// An adaptive job with a measured model on `type` that scales well up to a few dozen GPUs.
Job adaptiveJob(const std::string& id, int min_gpus, int max_gpus, const std::string& type);

Job rigidJob(const std::string& id, int gpus);

}  // namespace pollux::policy::testing

namespace pollux::policy {

// Readable GoogleTest output for allocations.
void PrintTo(const Allocation& allocation, std::ostream* out);

}  // namespace pollux::policy
