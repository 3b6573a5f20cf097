// SPDX-License-Identifier: GPL-2.0-or-later
// A live in-place shrink (pollux.elastic): sched/pollux keeps some of the job's nodes; the
// workers on the others leave at an agreeing step, the rest re-form without a restart, and
// the rank-0 agent then shrinks the job to the kept nodes.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace pollux::agent {

struct LiveShrink {
  std::vector<std::string> kept;  // the nodes the job keeps, in the step's order
  std::vector<int> leaving;       // the global ranks of the workers on the other nodes
  bool requested = false;         // `resize leave=...` sent to the trainer
  bool done = false;              // the trainer re-formed without the leavers
  uint32_t part = 0;              // the leavers are the workers of this part of the job
};

// The shrink of a step on `step_nodes` (in SLURM_NODEID order, `per_node` workers each:
// node i holds ranks i*per_node ... (i+1)*per_node-1) to the nodes in `decided`. Empty
// `leaving` where nothing would leave or rank 0's node would (no live shrink then).
LiveShrink liveShrinkOf(const std::vector<std::string>& step_nodes, int per_node,
                        const std::set<std::string>& decided);

// The trainer's message: `resize leave=R,R,...` (pollux.protocol).
std::string resizeRequest(const std::vector<int>& leaving);

// A live growth through a part of the job (sched/pollux places the part on the nodes the job
// grows to, or on its own nodes where it doubles the job's GPUs; the launcher starts workers
// in it, which join at an agreeing step).
struct LiveJoin {
  uint32_t part = 0;        // the part's job id
  int joiners = 0;          // workers to join: its nodes x the step's workers per node
  int part_nodes = 0;       // nodes it adds to the step's (0 on the job's own nodes)
  int nodes_before = 0;     // the step's nodes and workers before the join
  int replicas_before = 0;
  bool requested = false;   // `resize join=N` sent to the trainer
  bool done = false;        // the joiners joined
  bool left = false;        // and left again (the part ended): this part is not joined again
};

// The trainer's message: `resize join=N` (pollux.protocol).
std::string joinRequest(int joiners);

// The leave of the workers that `join` brought, now `replicas` in all: they are the last
// ranks (joiners take the ranks after those that stay). Empty `leaving` where they have not
// joined or have left already.
LiveShrink partLeaveOf(const LiveJoin& join, int replicas);

// The live change the trainer is still to be asked for, a shrink before a join; empty where
// none is. It stays pending until a trainer received it (markRequested): one asked for before
// the trainer connected is sent again once it does.
std::string pendingRequest(const std::optional<LiveShrink>& shrink,
                           const std::optional<LiveJoin>& join);
void markRequested(std::optional<LiveShrink>& shrink, std::optional<LiveJoin>& join,
                   const std::string& received);

}  // namespace pollux::agent
