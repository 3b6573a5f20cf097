// SPDX-License-Identifier: GPL-2.0-or-later
// Turns chosen configurations into GPUs on concrete nodes.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "configurations.hpp"
#include "milp.hpp"
#include "policy.hpp"

namespace pollux::policy {

struct PlacementRequest {
  Config config;                      // what the MILP chose
  std::optional<Allocation> current;  // where the job runs now
  std::vector<Config> fallbacks;      // smaller configurations to try, best first
  NodeDemand demand = {};             // CPUs and memory it needs on each node
  const NodeSet* allowed_nodes = nullptr;  // its partition's nodes; nullptr: any node
  std::vector<BudgetShare> budgets = {};   // its shares of the budgets its GPUs count against
  // A live change (objective.hpp, changesLive): placed before other changes, live shrinks
  // first, so that its own nodes have the room to make it in place (a growth placed before a
  // shrink could take a node the shrink keeps, making the shrink a restart). A shrink that
  // drops one of its running `parts`, or some of one part's nodes (partShrinks), keeps the
  // rest of `current`: of the shrinks that fit, the one that leaves the most of the round's
  // starting jobs room, say a rigid job waiting for a whole node; whole parts before partial
  // ones, the newest first.
  bool live = false;
  std::vector<Allocation> parts = {};
  // Job::moves_live: a change that no part makes in place is placed beside `current` (else
  // anywhere, a restart). Its budgets count both; its GPUs there are free to the requests
  // after it, whose jobs start there once the target's part has joined, or at once where
  // the move is made by restart instead (PlacementResult::restarted_for). Where the target
  // beside it is on GPUs another move leaves, the job keeps `current` this round.
  bool moves_live = false;
  std::set<std::string> batch_hosts = {};  // Job::batch_hosts
  int restarts = 0;                        // Job::restarts
  double restart_cost_s = 0;               // Job::restart_cost_s: what its start takes
  double join_startup_s = 0;               // Job::join_startup_s: what its joiners' start takes
};

// A job that has restarted this often keeps its live moves live (PlacementResult::restarted_for):
// within the restarts a job may have (12), with room for those its other changes need.
constexpr int kRestartsBeforeMovesStayLive = 10;

// What a job the round does not move (a running rigid job) holds.
struct Holding {
  Allocation allocation;
  NodeDemand demand;
};

struct PlacementResult {
  std::vector<std::optional<Allocation>> allocations;  // per request; nullopt: no room
  int fallbacks = 0;  // requests not placed as chosen (moved back, smaller or unplaced)
  // Per request: a live move made by restart instead, its old GPUs free at once, for the
  // request (index) whose job starts on them; nullopt: none. A job starting on GPUs that live
  // moves leave would wait for their joiners' start-up (a short job several times its own
  // length): where that takes longer than its own start, the newest of those moves whose job
  // has restarted fewer than kRestartsBeforeMovesStayLive times are made by restart.
  std::vector<std::optional<std::size_t>> restarted_for;
};

// Places requests on `nodes` after what `fixed` jobs hold. Unchanged configurations keep
// their exact nodes; then live shrinks, then the other live changes, then the rest, largest
// first; each prefers its current nodes, then nodes that leave the live growths placed after
// it their own, then the best fit, among the nodes it is allowed.
// A node takes a request only if its GPUs, CPUs and memory left cover it. Single-node
// configurations stay on one node; multi-node ones take whole largest nodes (only the last
// may be partly used). A request that cannot be placed keeps its current allocation if that
// is still free (and, if larger than its configuration, fits what its budgets leave once every
// request holds its configuration), else tries its fallbacks, else stays unplaced.
// `budgets`: units per budget the requests may hold together, indexed by the requests'
// `budgets` (their configurations within them). `leaving`: GPUs live moves of earlier rounds
// still hold (Job::leaving), free to the requests, which prefer GPUs free at once; a move
// may go there (those moves are under way).
PlacementResult place(const std::vector<Node>& nodes, const std::vector<Holding>& fixed,
                      const std::vector<PlacementRequest>& requests,
                      const std::vector<std::int64_t>& budgets = {},
                      const std::vector<Allocation>& leaving = {});

// Whether a configuration fits the nodes at all, with only the fixed jobs on them: a job
// whose CPUs or memory no node (of its partition) can hold gets no GPUs it could not use.
// Nodes with the same GPUs, CPUs and memory left are checked once (16k GPUs, 4,000 jobs: a
// few ms), per partition.
class PlaceableCheck {
 public:
  PlaceableCheck(const std::vector<Node>& nodes, const std::vector<Holding>& fixed,
                 const std::map<std::string, NodeSet>& partitions);
  ~PlaceableCheck();
  // `allowed_nodes`: one of the partitions' node sets, or nullptr for any node.
  bool placeable(const Config& config, const NodeDemand& demand,
                 const NodeSet* allowed_nodes) const;

 private:
  struct NodeGroups;
  std::unique_ptr<const NodeGroups> groups_;
};

}  // namespace pollux::policy
