// SPDX-License-Identifier: GPL-2.0-or-later
#include "configurations.hpp"

#include <algorithm>
#include <set>

namespace pollux::policy {

namespace {

std::set<int> adaptiveGpuCounts(const Job& job, const TypeShape& shape) {
  std::set<int> counts{job.min_gpus, shape.largest_node};
  for (int gpus = 1; gpus < shape.largest_node; gpus *= 2) counts.insert(gpus);
  for (int nodes = 2; nodes <= shape.largest_nodes; nodes *= 2) {
    counts.insert(nodes * shape.largest_node);
  }
  std::set<int> within_bounds;
  for (int gpus : counts) {
    if (gpus >= job.min_gpus && gpus <= job.max_gpus) within_bounds.insert(gpus);
  }
  return within_bounds;
}

}  // namespace

ClusterShape shapeOf(const std::vector<Node>& nodes) {
  ClusterShape cluster;
  for (const auto& node : nodes) {
    if (node.gpus <= 0) continue;
    TypeShape& shape = cluster[node.gpu_type];
    shape.total_gpus += node.gpus;
    if (node.gpus > shape.largest_node) {
      shape.largest_node = node.gpus;
      shape.largest_nodes = 0;
    }
    if (node.gpus == shape.largest_node) ++shape.largest_nodes;
  }
  return cluster;
}

bool Config::operator==(const Config& other) const {
  return gpu_type == other.gpu_type && gpus == other.gpus && nodes == other.nodes;
}

Config configOf(const Allocation& allocation) {
  return {allocation.gpu_type, allocation.totalGpus(), static_cast<int>(allocation.nodes.size())};
}

int uniformPerNode(const Allocation& allocation) {
  if (allocation.nodes.empty()) return 0;
  const int first = allocation.nodes.begin()->second;
  for (const auto& [node, gpus] : allocation.nodes) {
    if (gpus != first) return 0;
  }
  return first;
}

Allocation addedTo(const Allocation& smaller, const Allocation& larger) {
  Allocation added{larger.gpu_type, {}};
  for (const auto& [node, gpus] : larger.nodes) {
    const auto held = smaller.nodes.find(node);
    const int more = gpus - (held == smaller.nodes.end() ? 0 : held->second);
    if (more > 0) added.nodes[node] = more;
  }
  return added;
}

Allocation withoutPart(const Allocation& from, const Allocation& part) {
  Allocation rest = from;
  for (const auto& [node, gpus] : part.nodes) {
    const auto held = rest.nodes.find(node);
    if (held == rest.nodes.end()) continue;
    held->second -= gpus;
    if (held->second <= 0) rest.nodes.erase(held);
  }
  return rest;
}

namespace {

// Every node of `inner` is in `outer` with at least (`exactly`: as many) GPUs.
bool keeps(const Allocation& inner, const Allocation& outer, bool exactly) {
  return std::all_of(inner.nodes.begin(), inner.nodes.end(), [&](const auto& node) {
    const auto held = outer.nodes.find(node.first);
    return held != outer.nodes.end() &&
           (exactly ? held->second == node.second : held->second >= node.second);
  });
}

}  // namespace

std::optional<std::size_t> droppedPart(const Allocation& from, const Allocation& to,
                                       const std::vector<Allocation>& parts) {
  for (std::size_t part = parts.size(); part-- > 0;) {
    if (to == withoutPart(from, parts[part])) return part;
  }
  return std::nullopt;
}

std::string batchHostOf(const Allocation& part, const std::set<std::string>& batch_hosts) {
  for (const auto& [node, gpus] : part.nodes) {
    if (batch_hosts.count(node)) return node;
  }
  return part.nodes.empty() ? std::string() : part.nodes.begin()->first;
}

std::optional<std::size_t> shrunkPart(const Allocation& from, const Allocation& to,
                                      const std::vector<Allocation>& parts,
                                      const std::set<std::string>& batch_hosts) {
  if (from.gpu_type != to.gpu_type) return std::nullopt;
  const Allocation dropped = addedTo(to, from);
  for (std::size_t part = parts.size(); part-- > 0;) {
    const Allocation& held = parts[part];
    if (dropped.nodes.empty() || dropped.nodes.size() >= held.nodes.size() ||
        !keeps(dropped, held, true) || dropped.nodes.count(batchHostOf(held, batch_hosts))) {
      continue;
    }
    if (to == withoutPart(from, dropped)) return part;
  }
  return std::nullopt;
}

std::vector<Allocation> partShrinks(const Allocation& from, const Allocation& part,
                                    const std::set<std::string>& batch_hosts) {
  const std::string host = batchHostOf(part, batch_hosts);
  Allocation dropped{part.gpu_type, {}};
  std::vector<Allocation> shrinks;
  for (auto node = part.nodes.rbegin(); node != part.nodes.rend(); ++node) {
    if (node->first == host) continue;
    dropped.nodes.insert(*node);
    shrinks.push_back(withoutPart(from, dropped));
  }
  return shrinks;
}

bool changesInPlace(const Allocation& from, const Allocation& to,
                    const std::vector<Allocation>& parts,
                    const std::set<std::string>& batch_hosts) {
  if (from.gpu_type != to.gpu_type || to.nodes.empty()) return false;
  if (droppedPart(from, to, parts) || shrunkPart(from, to, parts, batch_hosts)) return true;
  const int per_node = uniformPerNode(from);
  if (to.totalGpus() > from.totalGpus()) {
    const Allocation added = addedTo(from, to);
    const bool widens = keeps(from, to, true);
    const bool deepens = added.nodes.size() == from.nodes.size() && keeps(added, from, true);
    return per_node > 0 && uniformPerNode(added) == per_node && (widens || deepens);
  }
  return parts.empty() && to.nodes.size() < from.nodes.size() && keeps(to, from, true);
}

bool movesBeside(const Allocation& from, const Allocation& to) {
  if (uniformPerNode(to) <= 0) return false;
  return std::none_of(to.nodes.begin(), to.nodes.end(),
                      [&](const auto& node) { return from.nodes.count(node.first) > 0; });
}

Config layout(const std::string& gpu_type, int gpus, const TypeShape& shape) {
  if (shape.largest_node <= 0) return {gpu_type, gpus, 0};
  if (gpus <= shape.largest_node) return {gpu_type, gpus, 1};
  const int nodes = (gpus + shape.largest_node - 1) / shape.largest_node;
  return {gpu_type, gpus, nodes <= shape.largest_nodes ? nodes : 0};
}

std::vector<Config> candidateConfigs(const Job& job, const ClusterShape& cluster) {
  std::vector<Config> configs;
  for (const auto& [type, shape] : cluster) {
    if (job.gpu_type && *job.gpu_type != type) continue;
    const std::set<int> counts =
        job.adaptive ? adaptiveGpuCounts(job, shape) : std::set<int>{job.min_gpus};
    for (int gpus : counts) {
      const Config config = layout(type, gpus, shape);
      if (config.nodes > 0) configs.push_back(config);
    }
  }
  return configs;
}

}  // namespace pollux::policy
