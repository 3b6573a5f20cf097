// SPDX-License-Identifier: GPL-2.0-or-later
// Consistency checks of a scheduling snapshot.
#pragma once

#include "policy.hpp"

namespace pollux::policy {

// Throws pollux::InvalidInput naming the first problem: duplicate job ids or node names,
// negative GPUs, min_gpus < 1, min > max, a current allocation on an unknown node, of the
// wrong type or beyond a node's GPUs (alone or with other jobs), bad models, NaN anywhere, a
// budget with an empty name or below 0, a job naming a budget the snapshot lacks (or one
// twice, or taking nothing of it per GPU and per node). Jobs beyond a budget together are not an error (a site may lower a limit).
void validate(const Snapshot& snapshot);

}  // namespace pollux::policy
