#include "policy/placement.hpp"

#include <algorithm>
#include <tuple>

namespace pollux::policy {

namespace {

struct FreeNode {
  const Node* node;
  NodeRoom room;
};

}  // namespace

class NodePool {
 public:
  NodePool(const std::vector<Node>& nodes, const std::vector<Holding>& fixed) {
    for (const auto& node : nodes) {
      const NodeRoom room{node.gpus, node.cpus, node.memory_mb, node.memory_mb};
      free_.emplace(node.name, FreeNode{&node, room});
    }
    for (const auto& holding : fixed) take(holding.allocation, holding.demand);
    // Per type, in name order: requests scan only their type's nodes (16k GPUs: 2,560 nodes).
    for (auto& [name, entry] : free_) {
      by_type_[entry.node->gpu_type].push_back(&entry);
      int& largest = largest_[entry.node->gpu_type];
      largest = std::max(largest, entry.node->gpus);
    }
  }

  bool fits(const Allocation& allocation, const NodeDemand& demand) const {
    for (const auto& [name, gpus] : allocation.nodes) {
      const auto node = free_.find(name);
      if (node == free_.end() || node->second.node->gpu_type != allocation.gpu_type ||
          !node->second.room.takes(gpus, demand)) {
        return false;
      }
    }
    return true;
  }

  void take(const Allocation& allocation, const NodeDemand& demand) {
    for (const auto& [name, gpus] : allocation.nodes) {
      const auto node = free_.find(name);
      if (node != free_.end()) node->second.room.take(gpus, demand);
    }
  }

  std::optional<Allocation> find(const Config& config, const std::optional<Allocation>& current,
                                 const NodeDemand& demand) const {
    const int largest = largestNode(config.gpu_type);
    if (config.nodes == 1) return singleNode(config, current, demand);
    return wholeNodes(config, current, demand, largest);
  }

  int largestNode(const std::string& type) const {
    const auto largest = largest_.find(type);
    return largest == largest_.end() ? 0 : largest->second;
  }

  const std::map<std::string, std::vector<FreeNode*>>& nodesByType() const { return by_type_; }

 private:
  // GPUs the job holds on `name` now (0 if none).
  static int heldOn(const std::optional<Allocation>& current, const std::string& type,
                    const std::string& name) {
    if (!current || current->gpu_type != type) return 0;
    const auto held = current->nodes.find(name);
    return held == current->nodes.end() ? 0 : held->second;
  }

  // Among nodes of `type` that take `gpus` GPUs with the job's demand and are not in
  // `excluded`: the one where the job holds most now, then the tightest fit, then the name.
  const FreeNode* bestFit(const std::string& type, int gpus, const NodeDemand& demand,
                          const std::optional<Allocation>& current,
                          const std::map<std::string, int>& excluded) const {
    const FreeNode* best = nullptr;
    int best_held = 0;
    const auto nodes = by_type_.find(type);
    if (nodes == by_type_.end()) return nullptr;
    for (const FreeNode* entry : nodes->second) {
      if (!entry->room.takes(gpus, demand) || excluded.count(entry->node->name)) continue;
      const int held = heldOn(current, type, entry->node->name);
      if (!best || held > best_held || (held == best_held && entry->room.gpus < best->room.gpus)) {
        best = entry;
        best_held = held;
      }
    }
    return best;
  }

  std::optional<Allocation> singleNode(const Config& config,
                                       const std::optional<Allocation>& current,
                                       const NodeDemand& demand) const {
    const FreeNode* node = bestFit(config.gpu_type, config.gpus, demand, current, {});
    if (!node) return std::nullopt;
    return Allocation{config.gpu_type, {{node->node->name, config.gpus}}};
  }

  std::optional<Allocation> wholeNodes(const Config& config,
                                       const std::optional<Allocation>& current,
                                       const NodeDemand& demand, int largest) const {
    Allocation allocation{config.gpu_type, {}};
    int remaining = config.gpus;
    while (remaining >= largest && largest > 0) {
      const FreeNode* node = bestFit(config.gpu_type, largest, demand, current, allocation.nodes);
      if (!node) return std::nullopt;  // `largest` GPUs free: an entirely free largest node
      allocation.nodes[node->node->name] = largest;
      remaining -= largest;
    }
    if (remaining > 0) {
      const FreeNode* node =
          bestFit(config.gpu_type, remaining, demand, current, allocation.nodes);
      if (!node) return std::nullopt;
      allocation.nodes[node->node->name] = remaining;
    }
    return allocation;
  }

  std::map<std::string, FreeNode> free_;
  std::map<std::string, std::vector<FreeNode*>> by_type_;  // GPU type -> its nodes, by name
  std::map<std::string, int> largest_;                      // GPU type -> GPUs of its largest node
};

namespace {

bool unchanged(const PlacementRequest& request) {
  return request.current && configOf(*request.current) == request.config;
}

// Changed requests, multi-node and larger ones first.
std::vector<std::size_t> placementOrder(const std::vector<PlacementRequest>& requests) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (!unchanged(requests[i])) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const Config& left = requests[a].config;
    const Config& right = requests[b].config;
    if (left.nodes != right.nodes) return left.nodes > right.nodes;
    return left.gpus > right.gpus;
  });
  return order;
}

std::optional<Allocation> placeWithFallbacks(const NodePool& pool,
                                             const PlacementRequest& request) {
  const NodeDemand& demand = request.demand;
  if (auto allocation = pool.find(request.config, request.current, demand)) return allocation;
  if (request.current && pool.fits(*request.current, demand)) return request.current;
  for (const auto& fallback : request.fallbacks) {
    if (auto allocation = pool.find(fallback, request.current, demand)) return allocation;
  }
  return std::nullopt;
}

}  // namespace

// Nodes of each GPU type, one sample per combination of GPUs, CPUs and memory left.
struct PlaceableCheck::NodeGroups {
  struct Group {
    const FreeNode* sample;
    int count;
  };
  NodeGroups(const std::vector<Node>& nodes, const std::vector<Holding>& fixed)
      : pool(nodes, fixed) {
    using Key = std::tuple<int, std::optional<int>, std::optional<std::int64_t>, bool>;
    for (const auto& [type, members] : pool.nodesByType()) {
      std::map<Key, Group> groups;
      for (const FreeNode* node : members) {
        const NodeRoom& room = node->room;
        const Key key{room.gpus, room.cpus, room.memory_mb, room.memory_mb == room.all_memory_mb};
        ++groups.try_emplace(key, Group{node, 0}).first->second.count;
      }
      for (const auto& [key, group] : groups) by_type[type].push_back(group);
    }
  }

  // How many nodes of `type` take `gpus` GPUs with the demand.
  int taking(const std::string& type, int gpus, const NodeDemand& demand) const {
    const auto groups = by_type.find(type);
    if (groups == by_type.end()) return 0;
    int count = 0;
    for (const Group& group : groups->second) {
      if (group.sample->room.takes(gpus, demand)) count += group.count;
    }
    return count;
  }

  NodePool pool;
  std::map<std::string, std::vector<Group>> by_type;
};

PlaceableCheck::PlaceableCheck(const std::vector<Node>& nodes, const std::vector<Holding>& fixed)
    : groups_(std::make_unique<const NodeGroups>(nodes, fixed)) {}

PlaceableCheck::~PlaceableCheck() = default;

// As NodePool::find lays configurations out: one node, or whole largest nodes and the rest
// on one more node. A node that takes `largest` GPUs takes fewer too.
bool PlaceableCheck::placeable(const Config& config, const NodeDemand& demand) const {
  const std::string& type = config.gpu_type;
  if (config.nodes == 1) return groups_->taking(type, config.gpus, demand) > 0;
  const int largest = groups_->pool.largestNode(type);
  if (largest <= 0) return false;
  const int whole = config.gpus / largest;
  const int rest = config.gpus % largest;
  const int whole_nodes = groups_->taking(type, largest, demand);
  if (whole_nodes < whole) return false;
  return rest == 0 || whole_nodes > whole || groups_->taking(type, rest, demand) > whole_nodes;
}

PlacementResult place(const std::vector<Node>& nodes, const std::vector<Holding>& fixed,
                      const std::vector<PlacementRequest>& requests) {
  NodePool pool(nodes, fixed);
  PlacementResult result;
  result.allocations.resize(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (!unchanged(requests[i])) continue;
    result.allocations[i] = requests[i].current;
    pool.take(*requests[i].current, requests[i].demand);
  }
  for (std::size_t i : placementOrder(requests)) {
    auto allocation = placeWithFallbacks(pool, requests[i]);
    if (allocation) pool.take(*allocation, requests[i].demand);
    const bool as_chosen = allocation && configOf(*allocation) == requests[i].config;
    if (!as_chosen) ++result.fallbacks;
    result.allocations[i] = std::move(allocation);
  }
  return result;
}

}  // namespace pollux::policy
