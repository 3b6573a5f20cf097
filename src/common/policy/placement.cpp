// SPDX-License-Identifier: GPL-2.0-or-later
#include "placement.hpp"

#include <algorithm>
#include <tuple>

namespace pollux::policy {

namespace {

struct FreeNode {
  const Node* node;
  NodeRoom room;
  int leaving_gpus = 0;        // of `room`, GPUs a live move of the round frees once joined
  int still_leaving_gpus = 0;  // of `room`, GPUs live moves of earlier rounds have yet to free
  int claimed_gpus = 0;        // of `room`, GPUs that live growths not placed yet keep

  // Whether a job placed here with `gpus` GPUs starts at once rather than after a move.
  bool startsAtOnce(int gpus) const {
    return room.gpus - leaving_gpus - still_leaving_gpus >= gpus;
  }
  // Whether it would wait for a live move of the round (those of earlier rounds are under
  // way: their GPUs free sooner).
  bool waitsForTheRoundsMoves(int gpus) const { return room.gpus - leaving_gpus < gpus; }
  // Whether it leaves the GPUs that live growths placed after it keep to them.
  bool leavesClaims(int gpus) const { return room.gpus - claimed_gpus >= gpus; }
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
    indexByType();
  }

  // A copy to try placements on: its index points into its own nodes.
  NodePool(const NodePool& other) : free_(other.free_) { indexByType(); }
  NodePool& operator=(const NodePool&) = delete;

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

  // GPUs a live growth keeps, until it is placed: the requests before it prefer others.
  void claim(const Allocation& allocation) { add(&FreeNode::claimed_gpus, allocation, 1); }
  void releaseClaim(const Allocation& allocation) { add(&FreeNode::claimed_gpus, allocation, -1); }

  // GPUs a live move leaves: free to later requests, which prefer GPUs free at once.
  void markLeaving(const Allocation& allocation) { add(&FreeNode::leaving_gpus, allocation, 1); }
  // ... unless the move is made by restart: then they are free at once.
  void unmarkLeaving(const Allocation& allocation) { add(&FreeNode::leaving_gpus, allocation, -1); }
  // GPUs live moves of earlier rounds still hold: requests prefer GPUs free at once.
  void markStillLeaving(const Allocation& allocation) {
    add(&FreeNode::still_leaving_gpus, allocation, 1);
  }

  // The first node of `allocation` where its job would wait for a live move of the round.
  std::optional<std::string> waitsOn(const Allocation& allocation) const {
    for (const auto& [name, gpus] : allocation.nodes) {
      const auto node = free_.find(name);
      if (node != free_.end() && node->second.waitsForTheRoundsMoves(gpus)) return name;
    }
    return std::nullopt;
  }

  // `kept`: GPUs the job goes on holding beside the result, on other nodes (none: it gives
  // up `current`).
  std::optional<Allocation> find(const Config& config, const std::optional<Allocation>& current,
                                 const NodeDemand& demand, const NodeSet* allowed,
                                 const Allocation* kept = nullptr) const {
    if (config.nodes == 1) return singleNode(config, current, demand, allowed, kept);
    return wholeNodes(config, current, demand, allowed, largestNode(config.gpu_type, allowed),
                      kept);
  }

  // GPUs of the largest node of `type` (among `allowed`, if given).
  int largestNode(const std::string& type, const NodeSet* allowed) const {
    if (allowed) {
      int largest = 0;
      for (const FreeNode* entry : nodesOf(type)) {
        if (allowed->count(entry->node->name)) largest = std::max(largest, entry->node->gpus);
      }
      return largest;
    }
    const auto largest = largest_.find(type);
    return largest == largest_.end() ? 0 : largest->second;
  }

  const std::vector<FreeNode*>& nodesOf(const std::string& type) const {
    static const std::vector<FreeNode*> none;
    const auto nodes = by_type_.find(type);
    return nodes == by_type_.end() ? none : nodes->second;
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

  // Among nodes of `type` that take `gpus` GPUs with the job's demand, are allowed and are
  // not in `excluded` nor `kept`: the one where the job holds most now, then one where it
  // starts at once (no live move's GPUs to wait for), then the tightest fit, then the name.
  const FreeNode* bestFit(const std::string& type, int gpus, const NodeDemand& demand,
                          const std::optional<Allocation>& current, const NodeSet* allowed,
                          const std::map<std::string, int>& excluded,
                          const Allocation* kept) const {
    const FreeNode* best = nullptr;
    std::tuple<int, bool, bool, int> best_rank;  // larger is better
    for (const FreeNode* entry : nodesOf(type)) {
      const std::string& name = entry->node->name;
      if (!entry->room.takes(gpus, demand) || excluded.count(name) ||
          (kept && kept->nodes.count(name)) || (allowed && !allowed->count(name))) {
        continue;
      }
      const std::tuple<int, bool, bool, int> rank{heldOn(current, type, name),
                                                  entry->leavesClaims(gpus),
                                                  entry->startsAtOnce(gpus), -entry->room.gpus};
      if (!best || rank > best_rank) {
        best = entry;
        best_rank = rank;
      }
    }
    return best;
  }

  std::optional<Allocation> singleNode(const Config& config,
                                       const std::optional<Allocation>& current,
                                       const NodeDemand& demand, const NodeSet* allowed,
                                       const Allocation* kept) const {
    const FreeNode* node =
        bestFit(config.gpu_type, config.gpus, demand, current, allowed, {}, kept);
    if (!node) return std::nullopt;
    return Allocation{config.gpu_type, {{node->node->name, config.gpus}}};
  }

  std::optional<Allocation> wholeNodes(const Config& config,
                                       const std::optional<Allocation>& current,
                                       const NodeDemand& demand, const NodeSet* allowed,
                                       int largest, const Allocation* kept) const {
    Allocation allocation{config.gpu_type, {}};
    int remaining = config.gpus;
    while (remaining >= largest && largest > 0) {
      const FreeNode* node =
          bestFit(config.gpu_type, largest, demand, current, allowed, allocation.nodes, kept);
      if (!node) return std::nullopt;  // `largest` GPUs free: an entirely free largest node
      allocation.nodes[node->node->name] = largest;
      remaining -= largest;
    }
    if (remaining > 0) {
      const FreeNode* node =
          bestFit(config.gpu_type, remaining, demand, current, allowed, allocation.nodes, kept);
      if (!node) return std::nullopt;
      allocation.nodes[node->node->name] = remaining;
    }
    return allocation;
  }

  // Adds `times` the allocation's GPUs on each of its nodes to that node's `count`.
  void add(int FreeNode::*count, const Allocation& allocation, int times) {
    for (const auto& [name, gpus] : allocation.nodes) {
      const auto node = free_.find(name);
      if (node != free_.end()) node->second.*count += times * gpus;
    }
  }

  // Per type, in name order: requests scan only their type's nodes (16k GPUs: 2,560 nodes).
  void indexByType() {
    for (auto& [name, entry] : free_) {
      by_type_[entry.node->gpu_type].push_back(&entry);
      int& largest = largest_[entry.node->gpu_type];
      largest = std::max(largest, entry.node->gpus);
    }
  }

  std::map<std::string, FreeNode> free_;
  std::map<std::string, std::vector<FreeNode*>> by_type_;  // GPU type -> its nodes, by name
  std::map<std::string, int> largest_;                      // GPU type -> GPUs of its largest node
};

namespace {

// The current allocation lies within the nodes the job may run on (a reservation or a
// constraint can take nodes from a running job).
bool currentAllowed(const PlacementRequest& request) {
  const NodeSet* allowed = request.allowed_nodes;
  return request.current && (!allowed || std::all_of(request.current->nodes.begin(),
                                                     request.current->nodes.end(),
                                                     [&](const auto& node) {
                                                       return allowed->count(node.first) > 0;
                                                     }));
}

bool unchanged(const PlacementRequest& request) {
  return currentAllowed(request) && configOf(*request.current) == request.config;
}

bool shrinksLive(const PlacementRequest& request) {
  return request.live && request.current && request.config.gpus < request.current->totalGpus();
}

bool growsLive(const PlacementRequest& request) {
  return request.live && request.current && request.config.gpus > request.current->totalGpus();
}

// Changed requests: live shrinks (which keep only GPUs they hold), then the other live
// changes (before others take their nodes), then multi-node and larger ones first.
std::vector<std::size_t> placementOrder(const std::vector<PlacementRequest>& requests) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (!unchanged(requests[i])) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (requests[a].live != requests[b].live) return requests[a].live;
    if (shrinksLive(requests[a]) != shrinksLive(requests[b])) return shrinksLive(requests[a]);
    const Config& left = requests[a].config;
    const Config& right = requests[b].config;
    if (left.nodes != right.nodes) return left.nodes > right.nodes;
    return left.gpus > right.gpus;
  });
  return order;
}

// Units per budget left once every request holds its configuration.
std::vector<std::int64_t> budgetRoom(std::vector<std::int64_t> budgets,
                                     const std::vector<PlacementRequest>& requests) {
  for (const auto& request : requests) {
    for (const BudgetShare& share : request.budgets) {
      budgets[share.budget] -= share.unitsFor(request.config.gpus, request.config.nodes);
    }
  }
  return budgets;
}

// What `allocation` (none: nothing) takes of a budget beyond the request's configuration.
std::int64_t extraUnits(const BudgetShare& share, const PlacementRequest& request,
                        const std::optional<Allocation>& allocation) {
  const std::int64_t units =
      allocation ? share.unitsFor(allocation->totalGpus(), int(allocation->nodes.size())) : 0;
  return units - share.unitsFor(request.config.gpus, request.config.nodes);
}

// Whether the request's budgets take `allocation` in place of its configuration.
bool budgetsTake(const std::vector<std::int64_t>& room, const PlacementRequest& request,
                 const Allocation& allocation) {
  return std::all_of(request.budgets.begin(), request.budgets.end(),
                     [&](const BudgetShare& share) {
                       const std::int64_t extra = extraUnits(share, request, allocation);
                       return extra <= 0 || extra <= room[share.budget];
                     });
}

void takeFromBudgets(std::vector<std::int64_t>& room, const PlacementRequest& request,
                     const std::optional<Allocation>& allocation) {
  for (const BudgetShare& share : request.budgets) {
    room[share.budget] -= extraUnits(share, request, allocation);
  }
}

// How many of `starting` (in order, each where the pool then has room) start once `kept` is
// taken.
int startingBeside(NodePool pool, const Allocation& kept, const NodeDemand& demand,
                   const std::vector<const PlacementRequest*>& starting) {
  pool.take(kept, demand);
  int started = 0;
  for (const PlacementRequest* request : starting) {
    const auto allocation =
        pool.find(request->config, std::nullopt, request->demand, request->allowed_nodes);
    if (!allocation) continue;
    pool.take(*allocation, request->demand);
    ++started;
  }
  return started;
}

// The rest of a live shrink's job once one of its parts is dropped, or some of a part's
// nodes (partShrinks): of the shrinks that leave the chosen configuration where it still
// fits, the one after which the most of `starting` (the round's starts of its GPU type) find
// room; whole parts before partial ones, the newest first.
std::optional<Allocation> keptByALiveShrink(const NodePool& pool, const PlacementRequest& request,
                                            const std::vector<const PlacementRequest*>& starting) {
  std::vector<Allocation> candidates;
  const auto consider = [&](Allocation kept) {
    if (configOf(kept) == request.config && pool.fits(kept, request.demand)) {
      candidates.push_back(std::move(kept));
    }
  };
  for (auto part = request.parts.rbegin(); part != request.parts.rend(); ++part) {
    consider(withoutPart(*request.current, *part));
  }
  for (auto part = request.parts.rbegin(); part != request.parts.rend(); ++part) {
    for (Allocation& kept : partShrinks(*request.current, *part, request.batch_hosts)) {
      consider(std::move(kept));
    }
  }
  if (candidates.empty()) return std::nullopt;
  std::vector<const PlacementRequest*> of_its_type;
  for (const PlacementRequest* other : starting) {
    if (other->config.gpu_type == request.config.gpu_type) of_its_type.push_back(other);
  }
  if (candidates.size() == 1 || of_its_type.empty()) return candidates.front();
  const Allocation* best = &candidates.front();
  int most = -1;
  for (const Allocation& kept : candidates) {
    const int started = startingBeside(pool, kept, request.demand, of_its_type);
    if (started > most) {
      best = &kept;
      most = started;
    }
  }
  return *best;
}

std::optional<Allocation> placeWithFallbacks(const NodePool& pool,
                                             const std::vector<std::int64_t>& room,
                                             const PlacementRequest& request,
                                             const std::vector<const PlacementRequest*>& starting) {
  const NodeDemand& demand = request.demand;
  const NodeSet* allowed = request.allowed_nodes;
  if (request.live && !request.parts.empty()) {
    if (auto kept = keptByALiveShrink(pool, request, starting)) return kept;
  }
  if (auto allocation = pool.find(request.config, request.current, demand, allowed)) {
    return allocation;
  }
  if (currentAllowed(request) && pool.fits(*request.current, demand) &&
      budgetsTake(room, request, *request.current)) {
    return request.current;
  }
  for (const auto& fallback : request.fallbacks) {
    if (auto allocation = pool.find(fallback, request.current, demand, allowed)) return allocation;
  }
  return std::nullopt;
}

// Both allocations at once, as budgets count them (the first's GPU type).
Allocation together(Allocation first, const Allocation& second) {
  for (const auto& [node, gpus] : second.nodes) first.nodes[node] += gpus;
  return first;
}

// A move of a job whose GPUs are all in parts: the target beside what it holds
// (movesBeside), where its GPUs are still free and its budgets take both. Nullopt where the
// target is a change its parts make in place, or no such room is left.
std::optional<Allocation> placeBeside(const NodePool& pool, const std::vector<std::int64_t>& room,
                                      const PlacementRequest& request,
                                      const std::optional<Allocation>& in_place) {
  if (!request.moves_live || !request.current) return std::nullopt;
  if (in_place && changesInPlace(*request.current, *in_place, request.parts, request.batch_hosts)) {
    return std::nullopt;
  }
  if (!pool.fits(*request.current, request.demand)) return std::nullopt;
  auto beside = pool.find(request.config, std::nullopt, request.demand, request.allowed_nodes,
                          &*request.current);
  if (!beside || !movesBeside(*request.current, *beside) ||
      !budgetsTake(room, request, together(*beside, *request.current))) {
    return std::nullopt;
  }
  return beside;
}

// Makes live moves restarts for a job starting on `allocation` (PlacementResult::restarted_for).
void restartMovesFor(std::size_t starter, const Allocation& allocation, NodePool& pool,
                     const std::vector<PlacementRequest>& requests,
                     const std::vector<std::size_t>& moving, PlacementResult& result) {
  for (auto node = pool.waitsOn(allocation); node; node = pool.waitsOn(allocation)) {
    const auto mover = std::find_if(moving.rbegin(), moving.rend(), [&](std::size_t i) {
      return !result.restarted_for[i] && requests[i].current->nodes.count(*node) &&
             requests[i].restarts < kRestartsBeforeMovesStayLive &&
             requests[i].join_startup_s > requests[starter].restart_cost_s;
    });
    if (mover == moving.rend()) return;
    pool.unmarkLeaving(*requests[*mover].current);
    result.restarted_for[*mover] = starter;
  }
}

}  // namespace

// Nodes of each GPU type, one sample per combination of GPUs, CPUs and memory left: of all
// nodes, and of each partition's.
struct PlaceableCheck::NodeGroups {
  struct Group {
    const FreeNode* sample;
    int count;
  };
  struct TypeGroups {
    std::vector<Group> groups;
    int largest = 0;  // GPUs of the largest node
  };
  using ByType = std::map<std::string, TypeGroups>;

  NodeGroups(const std::vector<Node>& nodes, const std::vector<Holding>& fixed,
             const std::map<std::string, NodeSet>& partitions)
      : pool(nodes, fixed), all(groupsOf(nullptr)) {
    for (const auto& [name, members] : partitions) by_partition[&members] = groupsOf(&members);
  }

  ByType groupsOf(const NodeSet* allowed) const {
    using Key = std::tuple<int, std::optional<int>, std::optional<std::int64_t>, bool>;
    ByType by_type;
    for (const auto& [type, members] : pool.nodesByType()) {
      std::map<Key, Group> groups;
      int largest = 0;
      for (const FreeNode* node : members) {
        if (allowed && !allowed->count(node->node->name)) continue;
        const NodeRoom& room = node->room;
        const Key key{room.gpus, room.cpus, room.memory_mb, room.memory_mb == room.all_memory_mb};
        ++groups.try_emplace(key, Group{node, 0}).first->second.count;
        largest = std::max(largest, node->node->gpus);
      }
      if (groups.empty()) continue;
      TypeGroups& of_type = by_type[type];
      of_type.largest = largest;
      for (const auto& [key, group] : groups) of_type.groups.push_back(group);
    }
    return by_type;
  }

  const ByType& groupsFor(const NodeSet* allowed) const {
    return allowed ? by_partition.at(allowed) : all;
  }

  // How many of the nodes take `gpus` GPUs with the demand.
  static int taking(const TypeGroups& nodes, int gpus, const NodeDemand& demand) {
    int count = 0;
    for (const Group& group : nodes.groups) {
      if (group.sample->room.takes(gpus, demand)) count += group.count;
    }
    return count;
  }

  NodePool pool;
  ByType all;
  std::map<const NodeSet*, ByType> by_partition;
};

PlaceableCheck::PlaceableCheck(const std::vector<Node>& nodes, const std::vector<Holding>& fixed,
                               const std::map<std::string, NodeSet>& partitions)
    : groups_(std::make_unique<const NodeGroups>(nodes, fixed, partitions)) {}

PlaceableCheck::~PlaceableCheck() = default;

// As NodePool::find lays configurations out: one node, or whole largest nodes and the rest
// on one more node. A node that takes `largest` GPUs takes fewer too.
bool PlaceableCheck::placeable(const Config& config, const NodeDemand& demand,
                               const NodeSet* allowed_nodes) const {
  const auto& by_type = groups_->groupsFor(allowed_nodes);
  const auto of_type = by_type.find(config.gpu_type);
  if (of_type == by_type.end()) return false;
  const NodeGroups::TypeGroups& nodes = of_type->second;
  if (config.nodes == 1) return NodeGroups::taking(nodes, config.gpus, demand) > 0;
  const int largest = nodes.largest;
  if (largest <= 0) return false;
  const int whole = config.gpus / largest;
  const int rest = config.gpus % largest;
  const int whole_nodes = NodeGroups::taking(nodes, largest, demand);
  if (whole_nodes < whole) return false;
  return rest == 0 || whole_nodes > whole || NodeGroups::taking(nodes, rest, demand) > whole_nodes;
}

PlacementResult place(const std::vector<Node>& nodes, const std::vector<Holding>& fixed,
                      const std::vector<PlacementRequest>& requests,
                      const std::vector<std::int64_t>& budgets,
                      const std::vector<Allocation>& leaving) {
  NodePool pool(nodes, fixed);
  for (const Allocation& gpus : leaving) pool.markStillLeaving(gpus);
  std::vector<std::int64_t> budget_room = budgetRoom(budgets, requests);
  PlacementResult result;
  result.allocations.resize(requests.size());
  result.restarted_for.resize(requests.size());
  std::vector<std::size_t> moving;  // live moves placed so far, in placement order
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (!unchanged(requests[i])) continue;
    result.allocations[i] = requests[i].current;
    pool.take(*requests[i].current, requests[i].demand);
  }
  const std::vector<std::size_t> order = placementOrder(requests);
  // Jobs the round starts, in placement order: a live shrink leaves them the most room.
  std::vector<const PlacementRequest*> starting;
  for (std::size_t i : order) {
    if (!requests[i].current) starting.push_back(&requests[i]);
    if (growsLive(requests[i])) pool.claim(*requests[i].current);
  }
  for (std::size_t i : order) {
    if (growsLive(requests[i])) pool.releaseClaim(*requests[i].current);
    auto allocation = placeWithFallbacks(pool, budget_room, requests[i], starting);
    std::optional<Allocation> held = allocation;  // what it holds once placed
    auto beside = placeBeside(pool, budget_room, requests[i], allocation);
    if (beside && pool.waitsOn(*beside) && currentAllowed(requests[i])) {
      // Its target is on GPUs another move leaves: the waits would chain (its joiners would
      // wait for that move's, and a job placed on what it leaves for both). It stays.
      allocation = requests[i].current;
      held = allocation;
    } else if (beside) {
      // Its budgets count both until the target joins; the GPUs it leaves are free to the
      // requests after it (a job placed there starts once its old parts have left).
      pool.markLeaving(*requests[i].current);
      moving.push_back(i);
      held = together(*beside, *requests[i].current);
      allocation = std::move(beside);
    } else if (allocation && !requests[i].current) {
      restartMovesFor(i, *allocation, pool, requests, moving, result);
    }
    if (allocation) pool.take(*allocation, requests[i].demand);
    takeFromBudgets(budget_room, requests[i], held);
    const bool as_chosen = allocation && configOf(*allocation) == requests[i].config;
    if (!as_chosen) ++result.fallbacks;
    result.allocations[i] = std::move(allocation);
  }
  return result;
}

}  // namespace pollux::policy
