// SPDX-License-Identifier: GPL-2.0-or-later
#include "live_shrink.hpp"

#include <algorithm>
#include <utility>

namespace pollux::agent {

LiveShrink liveShrinkOf(const std::vector<std::string>& step_nodes, int per_node,
                        const std::set<std::string>& decided, const std::string& job) {
  LiveShrink shrink;
  if (step_nodes.empty() || per_node < 1 || !decided.count(step_nodes.front())) return shrink;
  shrink.job = job;
  for (const auto& node : step_nodes) {
    (decided.count(node) ? shrink.kept : shrink.nodes).push_back(node);
  }
  shrink.leavers = static_cast<int>(shrink.nodes.size()) * per_node;
  return shrink;
}

std::string resizeRequest(const LiveShrink& shrink) {
  std::string message = "resize leave_job=" + shrink.job;
  for (std::size_t i = 0; i < shrink.nodes.size(); ++i) {
    message += (i == 0 ? " leave_nodes=" : ",") + shrink.nodes[i];
  }
  return message + "\n";
}

const LiveJoin* newestActiveJoin(const std::vector<LiveJoin>& joins) {
  const auto active = std::find_if(joins.rbegin(), joins.rend(),
                                   [](const LiveJoin& join) { return !join.left; });
  return active == joins.rend() ? nullptr : &*active;
}

LiveJoin* newestActiveJoin(std::vector<LiveJoin>& joins) {
  return const_cast<LiveJoin*>(newestActiveJoin(std::as_const(joins)));
}

bool mayJoin(const std::vector<LiveJoin>& joins, uint32_t part) {
  const bool joined_before = std::any_of(joins.begin(), joins.end(),
                                         [&](const LiveJoin& join) { return join.part == part; });
  const LiveJoin* newest = newestActiveJoin(joins);
  return !joined_before && (!newest || newest->done);
}

int nodesNewToJob(const std::vector<std::string>& part_nodes,
                  const std::optional<std::vector<std::string>>& step_nodes,
                  const std::vector<LiveJoin>& joins,
                  const std::set<std::string>& step_nodes_left) {
  std::set<std::string> held;
  if (step_nodes) {
    for (const auto& node : *step_nodes) {
      if (!step_nodes_left.count(node)) held.insert(node);
    }
  }
  for (const auto& join : joins) {
    if (join.done && !join.left) held.insert(join.nodes.begin(), join.nodes.end());
  }
  const auto is_new = [&](const std::string& node) { return !held.count(node); };
  return static_cast<int>(std::count_if(part_nodes.begin(), part_nodes.end(), is_new));
}

LiveJoin joinOf(uint32_t part, const std::vector<std::string>& part_nodes, int new_nodes,
                const model::Placement& placement, int workers_per_node) {
  if (workers_per_node <= 0) {
    workers_per_node = placement.num_replicas / std::max(placement.num_nodes, 1);
  }
  LiveJoin join;
  join.part = part;
  join.nodes = part_nodes;
  join.joiners = static_cast<int>(part_nodes.size()) * workers_per_node;
  join.part_nodes = new_nodes;
  join.nodes_before = placement.num_nodes;
  join.replicas_before = placement.num_replicas;
  return join;
}

std::string trainingGpuType(const std::string& own, const std::vector<LiveJoin>& joins) {
  const bool mixed = std::any_of(joins.begin(), joins.end(), [&](const LiveJoin& join) {
    return join.done && !join.left && !join.gpu_type.empty() && join.gpu_type != own;
  });
  return mixed ? "" : own;
}

std::string joinRequest(int joiners) { return "resize join=" + std::to_string(joiners) + "\n"; }

bool partInFlight(const std::optional<schema::PartStatus>& part,
                  const std::vector<LiveJoin>& joins) {
  if (!part) return false;
  if (part->state != schema::PartStatus::State::kRunning) return true;
  return std::none_of(joins.begin(), joins.end(), [&](const LiveJoin& join) {
    return join.part == part->job_id && join.done && !join.left;
  });
}

namespace {

// The join of part `part` whose workers joined and have not left; nullptr where none is.
const LiveJoin* activeJoinOf(const std::vector<LiveJoin>& joins, uint32_t part) {
  const auto join = std::find_if(joins.begin(), joins.end(), [&](const LiveJoin& join) {
    return join.part == part && join.done && !join.left;
  });
  return join == joins.end() ? nullptr : &*join;
}

// Whether `joins` ever had a join of part `part`.
bool hasJoinOf(const std::vector<LiveJoin>& joins, uint32_t part) {
  return std::any_of(joins.begin(), joins.end(),
                     [&](const LiveJoin& join) { return join.part == part; });
}

}  // namespace

LiveShrink partLeaveOf(const std::vector<LiveJoin>& joins, uint32_t part, int replicas,
                       int unknown_leavers) {
  LiveShrink leave;
  leave.part = part;
  const LiveJoin* newest = newestActiveJoin(joins);
  if (newest && !newest->done) return leave;  // a join in flight
  if (newest && newest->part == part) {
    leave.leavers = std::max(replicas - newest->replicas_before, 0);
  } else if (const LiveJoin* join = activeJoinOf(joins, part)) {
    leave.leavers = std::min(join->joiners, replicas - 1);
  } else if (!hasJoinOf(joins, part)) {
    leave.leavers = std::min(unknown_leavers, replicas - 1);
  }
  if (leave.leavers > 0) leave.job = std::to_string(part);
  return leave;
}

LiveShrink partNodesLeaveOf(const std::vector<LiveJoin>& joins, uint32_t part,
                            const std::vector<std::string>& leaving,
                            const std::vector<std::string>& kept, int per_node, int replicas) {
  LiveShrink leave;
  leave.part = part;
  const LiveJoin* newest = newestActiveJoin(joins);
  if ((newest && !newest->done) || leaving.empty() || kept.empty()) return leave;
  leave.leavers = std::min(static_cast<int>(leaving.size()) * per_node, replicas - 1);
  if (leave.leavers <= 0) return leave;
  leave.job = std::to_string(part);
  leave.nodes = leaving;
  leave.kept = kept;
  return leave;
}

int followPartNodesLeave(std::vector<LiveJoin>& joins, uint32_t part, int from, int to,
                         const std::vector<std::string>& leaving, int nodes) {
  auto* join = const_cast<LiveJoin*>(activeJoinOf(std::as_const(joins), part));
  if (!join) return std::max(nodes - static_cast<int>(leaving.size()), 1);
  const int left_nodes = std::min(static_cast<int>(leaving.size()), join->part_nodes);
  join->joiners -= from - to;
  join->part_nodes -= left_nodes;
  join->nodes.erase(std::remove_if(join->nodes.begin(), join->nodes.end(),
                                   [&](const std::string& node) {
                                     return std::count(leaving.begin(), leaving.end(), node) > 0;
                                   }),
                    join->nodes.end());
  for (LiveJoin* later = join + 1; later != joins.data() + joins.size(); ++later) {
    later->replicas_before -= from - to;
    later->nodes_before -= left_nodes;
  }
  return std::max(nodes - left_nodes, 1);
}

std::optional<int> followPartLeave(std::vector<LiveJoin>& joins, uint32_t part, int from,
                                   int to, int nodes) {
  if (to >= from || from <= 0) return std::nullopt;
  if (!hasJoinOf(joins, part)) return std::max(nodes - (from - to) * nodes / from, 1);
  auto* left = const_cast<LiveJoin*>(activeJoinOf(std::as_const(joins), part));
  if (!left) return std::nullopt;
  left->left = true;
  for (LiveJoin* later = left + 1; later != joins.data() + joins.size(); ++later) {
    later->replicas_before -= from - to;
    later->nodes_before -= left->part_nodes;
  }
  return nodes - left->part_nodes;
}

std::optional<int> followResize(std::vector<LiveJoin>& joins, int from, int to) {
  LiveJoin* newest = newestActiveJoin(joins);
  if (newest && newest->requested && !newest->done && to > from) {
    newest->done = true;
    return newest->nodes_before + newest->part_nodes;
  }
  const auto lost = std::find_if(joins.begin(), joins.end(), [&](const LiveJoin& join) {
    return join.done && !join.left && to <= join.replicas_before;
  });
  if (lost == joins.end()) return std::nullopt;
  const int nodes = lost->nodes_before;
  for (auto join = lost; join != joins.end(); ++join) {
    if (join->done) {
      join->left = true;
    } else if (!join->left) {  // in flight: its joiners will take the ranks after the survivors
      join->replicas_before = to;
      join->nodes_before = nodes;
    }
  }
  return nodes;
}

std::string pendingRequest(const std::optional<LiveShrink>& shrink,
                           const std::vector<LiveJoin>& joins) {
  const LiveJoin* join = newestActiveJoin(joins);
  if (shrink && !shrink->requested) return resizeRequest(*shrink);
  if (join && !join->requested) return joinRequest(join->joiners);
  return {};
}

void markRequested(std::optional<LiveShrink>& shrink, std::vector<LiveJoin>& joins,
                   const std::string& received) {
  LiveJoin* join = newestActiveJoin(joins);
  // By the message: either may have changed since it was sent.
  if (shrink && !shrink->requested && resizeRequest(*shrink) == received) {
    shrink->requested = true;
  } else if (join && !join->requested && joinRequest(join->joiners) == received) {
    join->requested = true;
  }
}

}  // namespace pollux::agent
