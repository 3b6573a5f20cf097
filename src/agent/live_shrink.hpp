// SPDX-License-Identifier: GPL-2.0-or-later
// A live in-place shrink (pollux.elastic): sched/pollux keeps some of the job's nodes; the
// workers on the others leave at an agreeing step, the rest re-form without a restart, and
// the rank-0 agent then shrinks the job to the kept nodes.
#pragma once

#include <set>
#include <string>
#include <vector>

namespace pollux::agent {

struct LiveShrink {
  std::vector<std::string> kept;  // the nodes the job keeps, in the step's order
  std::vector<int> leaving;       // the global ranks of the workers on the other nodes
  bool requested = false;         // `resize leave=...` sent to the trainer
  bool done = false;              // the trainer re-formed without the leavers
};

// The shrink of a step on `step_nodes` (in SLURM_NODEID order, `per_node` workers each:
// node i holds ranks i*per_node ... (i+1)*per_node-1) to the nodes in `decided`. Empty
// `leaving` where nothing would leave or rank 0's node would (no live shrink then).
LiveShrink liveShrinkOf(const std::vector<std::string>& step_nodes, int per_node,
                        const std::set<std::string>& decided);

// The trainer's message: `resize leave=R,R,...` (pollux.protocol).
std::string resizeRequest(const std::vector<int>& leaving);

}  // namespace pollux::agent
