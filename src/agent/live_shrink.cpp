// SPDX-License-Identifier: GPL-2.0-or-later
#include "live_shrink.hpp"

namespace pollux::agent {

LiveShrink liveShrinkOf(const std::vector<std::string>& step_nodes, int per_node,
                        const std::set<std::string>& decided) {
  LiveShrink shrink;
  if (step_nodes.empty() || per_node < 1 || !decided.count(step_nodes.front())) return shrink;
  for (std::size_t node = 0; node < step_nodes.size(); ++node) {
    if (decided.count(step_nodes[node])) {
      shrink.kept.push_back(step_nodes[node]);
      continue;
    }
    for (int local = 0; local < per_node; ++local) {
      shrink.leaving.push_back(static_cast<int>(node) * per_node + local);
    }
  }
  return shrink;
}

std::string resizeRequest(const std::vector<int>& leaving) {
  std::string message = "resize leave=";
  for (std::size_t i = 0; i < leaving.size(); ++i) {
    if (i > 0) message += ',';
    message += std::to_string(leaving[i]);
  }
  return message + "\n";
}

LiveShrink partLeaveOf(const LiveJoin& join, int replicas) {
  LiveShrink leave;
  leave.part = join.part;
  if (!join.done || join.left) return leave;
  for (int rank = join.replicas_before; rank < replicas; ++rank) leave.leaving.push_back(rank);
  return leave;
}

std::string joinRequest(int joiners) { return "resize join=" + std::to_string(joiners) + "\n"; }

std::string pendingRequest(const std::optional<LiveShrink>& shrink,
                           const std::optional<LiveJoin>& join) {
  if (shrink && !shrink->requested) return resizeRequest(shrink->leaving);
  if (join && !join->requested) return joinRequest(join->joiners);
  return {};
}

void markRequested(std::optional<LiveShrink>& shrink, std::optional<LiveJoin>& join,
                   const std::string& received) {
  // By the message: either may have changed since it was sent.
  if (shrink && !shrink->requested && resizeRequest(shrink->leaving) == received) {
    shrink->requested = true;
  } else if (join && !join->requested && joinRequest(join->joiners) == received) {
    join->requested = true;
  }
}

}  // namespace pollux::agent
