// SPDX-License-Identifier: GPL-2.0-or-later
// A live in-place shrink (pollux.elastic): sched/pollux keeps some of the job's nodes; the
// workers on the others leave at an agreeing step, the rest re-form without a restart, and
// the job's lead agent then shrinks the job to the kept nodes.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/model/params.hpp"
#include "common/schema/goodput_report.hpp"

namespace pollux::agent {

struct LiveShrink {
  // The nodes the job keeps, in the step's order; for a part's leave, the nodes the part
  // keeps (it is shrunk to them; none: it ends).
  std::vector<std::string> kept;
  // The workers that leave, by where they run (their ranks move with every change): those
  // of Slurm job `job` (the job's own step, or its part), on `nodes` where not empty.
  std::string job;
  std::vector<std::string> nodes;
  int leavers = 0;                // how many workers that is
  bool requested = false;         // `resize leave_job=...` sent to the trainer
  bool done = false;              // the trainer re-formed without the leavers
  uint32_t part = 0;              // the leavers are the workers of this part of the job
};

// The shrink of job `job`'s step on `step_nodes` (in SLURM_NODEID order, `per_node` workers
// each) to the nodes in `decided`: the workers of the others leave. No leavers where nothing
// would leave or the first node (the batch host) would (no live shrink then).
LiveShrink liveShrinkOf(const std::vector<std::string>& step_nodes, int per_node,
                        const std::set<std::string>& decided, const std::string& job);

// The trainer's message: `resize leave_job=J [leave_nodes=N,N...]` (pollux.protocol).
std::string resizeRequest(const LiveShrink& shrink);

// A live growth through a part of the job (sched/pollux places the part on the nodes the job
// grows to, or on its own nodes where it doubles the job's GPUs; the launcher starts workers
// in it, which join at an agreeing step). A job holds several parts at once, newest last: a
// part is joined once the one before it has joined, and the job shrinks off any of them (its
// workers leave by name, whatever their ranks).
struct LiveJoin {
  uint32_t part = 0;        // the part's job id
  int joiners = 0;          // workers to join: its nodes x the step's workers per node
  std::vector<std::string> nodes;  // the part's nodes
  int part_nodes = 0;       // nodes it adds to the step's and earlier parts' (0 on the job's)
  int nodes_before = 0;     // the step's nodes and workers before the join
  int replicas_before = 0;
  bool requested = false;   // `resize join=N` sent to the trainer
  bool done = false;        // the joiners joined
  bool left = false;        // and left again (the part ended): this part is not joined again
  std::string gpu_type = {};  // the part's, as the plugin tells it; empty: not told
  // When the lead saw the part run: its joiners' start-up is timed from then.
  std::chrono::steady_clock::time_point seen_running = {};
};

// The GPU type the job's workers train on: `own`, this node's, unless the workers of a part
// of another type have joined and not left (a live move to another type, before its old
// parts leave): then "", as a step on both types measures neither.
std::string trainingGpuType(const std::string& own, const std::vector<LiveJoin>& joins);

// The newest join whose part has not left; nullptr where none.
const LiveJoin* newestActiveJoin(const std::vector<LiveJoin>& joins);
LiveJoin* newestActiveJoin(std::vector<LiveJoin>& joins);

// Whether the running part `part` is to be joined now: it never was, and no join is in flight.
bool mayJoin(const std::vector<LiveJoin>& joins, uint32_t part);

// How many of `part_nodes` the job's workers do not run on yet: neither the step's nodes
// (nullopt where they cannot be listed) less those its workers left live (`step_nodes_left`),
// nor those of a part whose workers joined and have not left (a part that doubles the job's
// GPUs on its nodes adds none).
int nodesNewToJob(const std::vector<std::string>& part_nodes,
                  const std::optional<std::vector<std::string>>& step_nodes,
                  const std::vector<LiveJoin>& joins,
                  const std::set<std::string>& step_nodes_left = {});

// The join of part `part` on `part_nodes`, `new_nodes` of them new to the job's workers, to
// the step as `placement` has it: `workers_per_node` on each of the part's nodes (0: as many
// as the step has on each of its nodes).
LiveJoin joinOf(uint32_t part, const std::vector<std::string>& part_nodes, int new_nodes,
                const model::Placement& placement, int workers_per_node = 0);

// The trainer's message: `resize join=N` (pollux.protocol).
std::string joinRequest(int joiners);

// Whether the job's part, as the plugin shows it, is still to be acted on: wanted, pending,
// to leave, or running with its workers not (yet) joined. The job's lead agent then reports
// as often as it may, since the plugin and the agent move a part on by reports and their
// replies.
bool partInFlight(const std::optional<schema::PartStatus>& part,
                  const std::vector<LiveJoin>& joins);

// The leave of part `part`'s workers, the job now `replicas` in all, once they joined and
// while no join is in flight: the newest active join's replicas - replicas_before workers,
// an older one's joiners; `unknown_leavers` for a part these joins never had (its workers
// joined under an earlier lead: the part's nodes times the workers per node). None for a part
// that left, and never all of the job's workers.
LiveShrink partLeaveOf(const std::vector<LiveJoin>& joins, uint32_t part, int replicas,
                       int unknown_leavers = 0);

// The leave of part `part`'s workers on `leaving`, some of its nodes (the part is then shrunk
// to `kept`), `per_node` on each, the job now `replicas` in all: none while a join is in
// flight, and never all of the job's workers.
LiveShrink partNodesLeaveOf(const std::vector<LiveJoin>& joins, uint32_t part,
                            const std::vector<std::string>& leaving,
                            const std::vector<std::string>& kept, int per_node, int replicas);

// Follows the trainer's live change from `from` to `to` replicas that the leave of part
// `part`'s workers on `leaving` asked for: its join (where these joins have it) keeps its
// other nodes and workers, and the joins after it count their replicas and nodes before them
// without the leavers. The step's nodes after it, from `nodes` before.
int followPartNodesLeave(std::vector<LiveJoin>& joins, uint32_t part, int from, int to,
                         const std::vector<std::string>& leaving, int nodes);

// Follows the trainer's live change from `from` to `to` replicas that the leave of part
// `part`'s workers asked for: its join is left, and the joins after it count their replicas
// and nodes before them without its own. The step's nodes after it, from `nodes` before (for
// a part these joins never had, in proportion to the workers that left); nullopt where that
// part's join left already (followResize then follows the change).
std::optional<int> followPartLeave(std::vector<LiveJoin>& joins, uint32_t part, int from,
                                   int to, int nodes);

// Follows the trainer's live change from `from` to `to` replicas: a growth completes the join
// in flight; a shrink to no more than a joined part's replicas_before took that part's workers
// and those of every newer joined part (a leave, or parts lost by failure), which are left; a
// join still in flight then joins after the survivors. The step's nodes where they changed.
std::optional<int> followResize(std::vector<LiveJoin>& joins, int from, int to);

// The live change the trainer is still to be asked for, a shrink before a join (the newest
// active one's); empty where none is. It stays pending until a trainer received it
// (markRequested): one asked for before the trainer connected is sent again once it does.
std::string pendingRequest(const std::optional<LiveShrink>& shrink,
                           const std::vector<LiveJoin>& joins);
void markRequested(std::optional<LiveShrink>& shrink, std::vector<LiveJoin>& joins,
                   const std::string& received);

}  // namespace pollux::agent
