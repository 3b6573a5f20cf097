// SPDX-License-Identifier: GPL-2.0-or-later
#include "placement.hpp"

#include <random>

#include <gtest/gtest.h>

#include "test_cluster.hpp"

namespace pollux::policy {
namespace {

using testing::nodesOf;

std::map<std::string, int> nodeSizes(const std::vector<Node>& nodes) {
  std::map<std::string, int> sizes;
  for (const auto& node : nodes) sizes[node.name] = node.gpus;
  return sizes;
}

TEST(PlacementTest, UnchangedConfigurationsStayOnTheirNodes) {
  const auto nodes = nodesOf("t4", 2, 8, "n");
  const Allocation current{"t4", {{"n1", 4}}};
  const auto result = place(nodes, {}, {{{"t4", 4, 1}, current, {}}, {{"t4", 8, 1}, {}, {}}});
  EXPECT_EQ(result.allocations[0], current);
  EXPECT_EQ(result.allocations[1], (Allocation{"t4", {{"n0", 8}}}));
  EXPECT_EQ(result.fallbacks, 0);
}

TEST(PlacementTest, GrowingJobPrefersItsCurrentNode) {
  const auto nodes = nodesOf("t4", 3, 8, "n");
  const Allocation current{"t4", {{"n2", 2}}};
  const auto result = place(nodes, {}, {{{"t4", 8, 1}, current, {}}});
  EXPECT_EQ(result.allocations[0], (Allocation{"t4", {{"n2", 8}}}));
}

TEST(PlacementTest, ALiveChangeIsPlacedFirstOnItsNodes) {
  const auto nodes = nodesOf("t4", 3, 4, "n");
  // A live growth from n0 onto a whole new node goes before a larger change that would
  // otherwise have taken n0.
  PlacementRequest grows{{"t4", 8, 2}, Allocation{"t4", {{"n0", 4}}}, {}};
  grows.live = true;
  PlacementRequest other{{"t4", 4, 1}, std::nullopt, {}};
  auto result = place(nodes, {}, {other, grows});
  EXPECT_EQ(result.allocations[1], (Allocation{"t4", {{"n0", 4}, {"n1", 4}}}));
  EXPECT_EQ(result.allocations[0], (Allocation{"t4", {{"n2", 4}}}));
  // A part on its own node, doubling it, before a change that would take that room.
  PlacementRequest doubles{{"t4", 4, 1}, Allocation{"t4", {{"n0", 2}}}, {}};
  doubles.live = true;
  PlacementRequest moves{{"t4", 2, 1}, Allocation{"t4", {{"n1", 1}}}, {}};
  const Holding holding{Allocation{"t4", {{"n1", 3}, {"n2", 3}}}, {}};
  result = place(nodes, {holding}, {moves, doubles});
  EXPECT_EQ(result.allocations[1], (Allocation{"t4", {{"n0", 4}}}));
  // A live shrink of a job with parts drops exactly its newest part.
  PlacementRequest drops{{"t4", 8, 2}, Allocation{"t4", {{"n0", 4}, {"n1", 4}, {"n2", 4}}}, {}};
  drops.live = true;
  drops.parts = {Allocation{"t4", {{"n0", 4}}}, Allocation{"t4", {{"n1", 4}}}};
  result = place(nodes, {}, {drops});
  EXPECT_EQ(result.allocations[0], (Allocation{"t4", {{"n0", 4}, {"n2", 4}}}));
  // An older part when the rest of the job without the newest cannot stay (n0 is gone).
  const auto without_n0 = decltype(nodes)(nodes.begin() + 1, nodes.end());
  result = place(without_n0, {}, {drops});
  EXPECT_EQ(result.allocations[0], (Allocation{"t4", {{"n1", 4}, {"n2", 4}}}));
}

TEST(PlacementTest, ALiveShrinkDropsThePartThatLetsAStartingJobIn) {
  const auto nodes = nodesOf("t4", 2, 4, "n");
  const Holding other{Allocation{"t4", {{"n0", 2}}}, {}};
  // Its older part on n1, its newest on n0; a job waits for a whole node.
  PlacementRequest shrinks{{"t4", 2, 1}, Allocation{"t4", {{"n0", 2}, {"n1", 2}}}, {}};
  shrinks.live = true;
  shrinks.parts = {Allocation{"t4", {{"n1", 2}}}, Allocation{"t4", {{"n0", 2}}}};
  const PlacementRequest waiting{{"t4", 4, 1}, std::nullopt, {}};
  auto result = place(nodes, {other}, {shrinks, waiting});
  EXPECT_EQ(result.allocations[0], (Allocation{"t4", {{"n0", 2}}}));
  EXPECT_EQ(result.allocations[1], (Allocation{"t4", {{"n1", 4}}}));
  EXPECT_EQ(result.fallbacks, 0);
  // With no job starting, it drops its newest part.
  result = place(nodes, {other}, {shrinks});
  EXPECT_EQ(result.allocations[0], (Allocation{"t4", {{"n1", 2}}}));
}

TEST(PlacementTest, ALiveGrowthKeepsItsNodesFromTheRequestsPlacedBeforeIt) {
  const auto nodes = nodesOf("t4", 4, 4, "n");
  // Two jobs grow live from one whole node to two; the one placed first takes a free node,
  // not the one the other holds (which would make the other's growth a restart).
  PlacementRequest first{{"t4", 8, 2}, Allocation{"t4", {{"n1", 4}}}, {}};
  first.live = true;
  PlacementRequest second{{"t4", 8, 2}, Allocation{"t4", {{"n0", 4}}}, {}};
  second.live = true;
  const auto result = place(nodes, {}, {first, second});
  EXPECT_EQ(result.allocations[0], (Allocation{"t4", {{"n1", 4}, {"n2", 4}}}));
  EXPECT_EQ(result.allocations[1], (Allocation{"t4", {{"n0", 4}, {"n3", 4}}}));
}

TEST(PlacementTest, ALiveShrinkKeepsItsNodesFromALargerLiveGrowth) {
  const auto nodes = nodesOf("t4", 3, 4, "n");
  // One job shrinks live from one part on n0 and n1 (its batch host n0) to n0; another
  // grows live from n2 onto a whole node. Placed first, as the larger change, the growth
  // would take n0 and leave the shrink only n1, a restart.
  PlacementRequest shrinks{{"t4", 4, 1}, Allocation{"t4", {{"n0", 4}, {"n1", 4}}}, {}};
  shrinks.live = true;
  shrinks.parts = {*shrinks.current};
  shrinks.batch_hosts = {"n0"};
  PlacementRequest grows{{"t4", 8, 2}, Allocation{"t4", {{"n2", 4}}}, {}};
  grows.live = true;
  const auto result = place(nodes, {}, {grows, shrinks});
  EXPECT_EQ(result.allocations[1], (Allocation{"t4", {{"n0", 4}}}));
  EXPECT_EQ(result.allocations[0], (Allocation{"t4", {{"n1", 4}, {"n2", 4}}}));
  EXPECT_EQ(result.fallbacks, 0);
}

TEST(PlacementTest, ALiveShrinkToSomeOfAPartsNodesKeepsItsBatchHost) {
  const auto nodes = nodesOf("t4", 3, 4, "n");
  // One part on three nodes, its batch host n2; a job waits for a whole node.
  PlacementRequest shrinks{{"t4", 8, 2}, Allocation{"t4", {{"n0", 4}, {"n1", 4}, {"n2", 4}}}, {}};
  shrinks.live = true;
  shrinks.moves_live = true;
  shrinks.parts = {*shrinks.current};
  shrinks.batch_hosts = {"n2"};
  const PlacementRequest waiting{{"t4", 4, 1}, std::nullopt, {}};
  auto result = place(nodes, {}, {shrinks, waiting});
  EXPECT_EQ(result.allocations[0], (Allocation{"t4", {{"n0", 4}, {"n2", 4}}}));
  EXPECT_EQ(result.allocations[1], (Allocation{"t4", {{"n1", 4}}}));
  // Its batch host unknown: its first node by name stays.
  shrinks.batch_hosts.clear();
  result = place(nodes, {}, {shrinks, waiting});
  EXPECT_EQ(result.allocations[0], (Allocation{"t4", {{"n0", 4}, {"n1", 4}}}));
  EXPECT_EQ(result.allocations[1], (Allocation{"t4", {{"n2", 4}}}));
}

// A job whose GPUs are all in parts, in one part with 2 GPUs on each of n0 and n1, to 4 GPUs
// on one node.
PlacementRequest movingToOneNode() {
  PlacementRequest moves{{"t4", 4, 1}, Allocation{"t4", {{"n0", 2}, {"n1", 2}}}, {}};
  moves.live = true;
  moves.moves_live = true;
  moves.parts = {Allocation{"t4", {{"n0", 2}, {"n1", 2}}}};
  return moves;
}

TEST(PlacementTest, AMoveOfAJobWhoseGpusAreAllInPartsIsPlacedBesideWhatItHolds) {
  const auto nodes = nodesOf("t4", 3, 4, "n");
  // 2 GPUs on each of n0 and n1 to 4 on one node: beside them, on n2; the GPUs it leaves
  // are free to the jobs placed after it, which start there once its target has joined.
  PlacementRequest moves = movingToOneNode();
  PlacementRequest other{{"t4", 4, 1}, std::nullopt, {}};
  PlacementRequest small{{"t4", 2, 1}, std::nullopt, {}};
  auto result = place(nodes, {}, {moves, other, small});
  EXPECT_EQ(result.allocations[0], (Allocation{"t4", {{"n2", 4}}}));
  EXPECT_EQ(result.allocations[1], (Allocation{"t4", {{"n0", 4}}}));
  EXPECT_EQ(result.allocations[2], (Allocation{"t4", {{"n1", 2}}}));
  // Without the flag it takes n0 (where it holds most), a restart; the other job gets n2.
  moves.moves_live = false;
  result = place(nodes, {}, {moves, other});
  EXPECT_EQ(result.allocations[0], (Allocation{"t4", {{"n0", 4}}}));
  // With no room beside it, the move is placed as a restart would be.
  moves.moves_live = true;
  const Holding n2{Allocation{"t4", {{"n2", 4}}}, {}};
  result = place(nodes, {n2}, {moves});
  EXPECT_EQ(result.allocations[0], (Allocation{"t4", {{"n0", 4}}}));
  // A change its parts make in place stays in place: dropping its part on n1.
  moves.config = {"t4", 2, 1};
  moves.parts = {Allocation{"t4", {{"n0", 2}}}, Allocation{"t4", {{"n1", 2}}}};
  result = place(nodes, {}, {moves});
  EXPECT_EQ(result.allocations[0], (Allocation{"t4", {{"n0", 2}}}));
}

TEST(PlacementTest, GpusAnEarlierMoveStillLeavesAreTakenLast) {
  const auto nodes = nodesOf("t4", 3, 4, "n");
  const PlacementRequest starts{{"t4", 4, 1}, std::nullopt, {}};
  EXPECT_EQ(place(nodes, {}, {starts}).allocations[0], (Allocation{"t4", {{"n0", 4}}}));
  // A move of an earlier round leaves n0 once its target's joiners have started: a job
  // placed there would wait for them, so it starts at once on n1.
  const std::vector<Allocation> leaving{Allocation{"t4", {{"n0", 4}}}};
  EXPECT_EQ(place(nodes, {}, {starts}, {}, leaving).allocations[0],
            (Allocation{"t4", {{"n1", 4}}}));
  // Where those are the only GPUs left, it takes them (it starts once they are free).
  const Holding n1_n2{Allocation{"t4", {{"n1", 4}, {"n2", 4}}}, {}};
  EXPECT_EQ(place(nodes, {n1_n2}, {starts}, {}, leaving).allocations[0],
            (Allocation{"t4", {{"n0", 4}}}));
  // A move whose only room beside what it holds is there goes there: unlike a move of the
  // same round, that move is under way.
  PlacementRequest moves = movingToOneNode();
  moves.current = moves.parts[0] = Allocation{"t4", {{"n1", 2}, {"n2", 2}}};
  EXPECT_EQ(place(nodes, {}, {moves}, {}, leaving).allocations[0], (Allocation{"t4", {{"n0", 4}}}));
}

TEST(PlacementTest, AMoveToAnotherGpuTypeIsPlacedBesideWhatItHolds) {
  auto nodes = nodesOf("t4", 2, 4, "n");
  for (const auto& node : nodesOf("v100", 1, 4, "v")) nodes.push_back(node);
  // From 2 t4 GPUs on each of n0 and n1 to 4 v100 GPUs: on v0, the t4 GPUs it leaves free to
  // a t4 job placed after it.
  PlacementRequest moves = movingToOneNode();
  moves.config = {"v100", 4, 1};
  PlacementRequest other{{"t4", 4, 1}, std::nullopt, {}};
  const auto result = place(nodes, {}, {moves, other});
  EXPECT_EQ(result.allocations[0], (Allocation{"v100", {{"v0", 4}}}));
  EXPECT_EQ(result.allocations[1], (Allocation{"t4", {{"n0", 4}}}));
  EXPECT_FALSE(result.restarted_for[0]);
}

TEST(PlacementTest, AJobStartingWhereALiveMoveLeavesHasTheMoveMadeByRestart) {
  const auto nodes = nodesOf("t4", 3, 4, "n");
  // As above: the move goes to n2, and a starting job takes the 4 GPUs it leaves on n0. Its
  // joiners take 250 s to start, the starting job 15 s: it would wait 250 s, so the move is
  // made by restart, its GPUs free at once.
  PlacementRequest moves = movingToOneNode();
  moves.join_startup_s = 250;
  PlacementRequest other{{"t4", 4, 1}, std::nullopt, {}};
  other.restart_cost_s = 15;
  PlacementRequest small{{"t4", 2, 1}, std::nullopt, {}};
  small.restart_cost_s = 15;
  auto result = place(nodes, {}, {moves, other, small});
  EXPECT_EQ(result.allocations[0], (Allocation{"t4", {{"n2", 4}}}));
  EXPECT_EQ(result.allocations[1], (Allocation{"t4", {{"n0", 4}}}));
  EXPECT_EQ(result.allocations[2], (Allocation{"t4", {{"n1", 2}}}));
  EXPECT_EQ(result.restarted_for, (std::vector<std::optional<std::size_t>>{1, {}, {}}));
  // A job whose own start takes longer than the joiners' waits for them: the move stays live.
  other.restart_cost_s = 300;
  result = place(nodes, {}, {moves, other});
  EXPECT_EQ(result.allocations[1], (Allocation{"t4", {{"n0", 4}}}));
  EXPECT_FALSE(result.restarted_for[0]);
  // So does one that has restarted kRestartsBeforeMovesStayLive times.
  other.restart_cost_s = 15;
  moves.restarts = kRestartsBeforeMovesStayLive;
  result = place(nodes, {}, {moves, other});
  EXPECT_FALSE(result.restarted_for[0]);
  // A job that starts at once elsewhere leaves the move live.
  moves.restarts = 0;
  const auto four = nodesOf("t4", 4, 4, "n");
  result = place(four, {}, {moves, other});
  EXPECT_EQ(result.allocations[1], (Allocation{"t4", {{"n3", 4}}}));
  EXPECT_FALSE(result.restarted_for[0]);
}

TEST(PlacementTest, AMoveWhoseOnlyTargetAnotherMoveLeavesStaysWhereItIs) {
  auto nodes = nodesOf("t4", 5, 4, "n");
  // The first move goes from 2 GPUs on each of n0 and n1 to n2; the second, from 1 GPU on
  // each of n3 and n4 to 2 on one node, finds room beside it only on what the first leaves
  // on n0 or n1: its joiners would wait for the first move's. It keeps its GPUs this round.
  const Holding others{Allocation{"t4", {{"n0", 2}, {"n1", 2}, {"n3", 3}, {"n4", 3}}}, {}};
  const PlacementRequest first = movingToOneNode();
  PlacementRequest second{{"t4", 2, 1}, Allocation{"t4", {{"n3", 1}, {"n4", 1}}}, {}};
  second.live = true;
  second.moves_live = true;
  second.parts = {*second.current};
  auto result = place(nodes, {others}, {first, second});
  EXPECT_EQ(result.allocations[0], (Allocation{"t4", {{"n2", 4}}}));
  EXPECT_EQ(result.allocations[1], second.current);
  EXPECT_EQ(result.restarted_for, (std::vector<std::optional<std::size_t>>{{}, {}}));
  // With a node free at once, it moves there.
  nodes = nodesOf("t4", 6, 4, "n");
  result = place(nodes, {others}, {first, second});
  EXPECT_EQ(result.allocations[1], (Allocation{"t4", {{"n5", 2}}}));
}

TEST(PlacementTest, AJobPrefersGpusFreeAtOnceToThoseALiveMoveLeaves) {
  const auto nodes = nodesOf("t4", 4, 4, "n");
  // Others hold 2 GPUs of each of n0 and n1; the move's 2 on each are free once it has
  // joined on n2. A 2-GPU job fits tighter there but starts at once on n3.
  const Holding others{Allocation{"t4", {{"n0", 2}, {"n1", 2}}}, {}};
  PlacementRequest moves = movingToOneNode();
  const PlacementRequest small{{"t4", 2, 1}, std::nullopt, {}};
  auto result = place(nodes, {others}, {moves, small});
  EXPECT_EQ(result.allocations[0], (Allocation{"t4", {{"n2", 4}}}));
  EXPECT_EQ(result.allocations[1], (Allocation{"t4", {{"n3", 2}}}));
  // With n3 taken too, it waits for the move on n0.
  const Holding n3{Allocation{"t4", {{"n3", 4}}}, {}};
  result = place(nodes, {others, n3}, {moves, small});
  EXPECT_EQ(result.allocations[1], (Allocation{"t4", {{"n0", 2}}}));
}

TEST(PlacementTest, BestFitAvoidsFragmentation) {
  auto nodes = nodesOf("t4", 1, 8, "big");
  nodes.push_back({"small", "t4", 2});
  const auto result = place(nodes, {}, {{{"t4", 2, 1}, {}, {}}, {{"t4", 8, 1}, {}, {}}});
  EXPECT_EQ(result.allocations[0], (Allocation{"t4", {{"small", 2}}}));
  EXPECT_EQ(result.allocations[1], (Allocation{"t4", {{"big0", 8}}}));
}

TEST(PlacementTest, FixedJobsGpusAreNotUsedAndFallbacksApply) {
  const auto nodes = nodesOf("t4", 2, 8, "n");
  const std::vector<Holding> fixed{{{"t4", {{"n0", 4}, {"n1", 4}}}, {}}};
  const auto result = place(nodes, fixed, {{{"t4", 8, 1}, {}, {{"t4", 4, 1}}},
                                           {{"t4", 16, 2}, {}, {}}});
  EXPECT_EQ(configOf(*result.allocations[0]), (Config{"t4", 4, 1}));
  EXPECT_FALSE(result.allocations[1].has_value());
  EXPECT_EQ(result.fallbacks, 2);
}

TEST(PlacementTest, ANodeWithoutTheJobsCpusIsPassedOver) {
  auto nodes = nodesOf("t4", 2, 8, "n");
  nodes[0].cpus = 2;  // the tighter GPU fit, but two CPUs left
  nodes[0].gpus = 4;
  nodes[1].cpus = 16;
  NodeDemand demand;
  demand.cpus = 4;  // --ntasks-per-node=1 --cpus-per-task=4
  const auto result = place(nodes, {}, {{{"t4", 4, 1}, {}, {}, demand}});
  EXPECT_EQ(result.allocations[0], (Allocation{"t4", {{"n1", 4}}}));
}

TEST(PlacementTest, CpusPerGpuScaleWithTheGpusAndFallbacksFitThem) {
  auto nodes = nodesOf("t4", 1, 8, "n");
  nodes[0].cpus = 10;
  NodeDemand demand;
  demand.cpus_per_gpu = 4;  // 8 GPUs would need 32 CPUs, 4 GPUs 16: only 2 GPUs fit
  const auto result =
      place(nodes, {}, {{{"t4", 8, 1}, {}, {{"t4", 4, 1}, {"t4", 2, 1}, {"t4", 1, 1}}, demand}});
  EXPECT_EQ(result.allocations[0], (Allocation{"t4", {{"n0", 2}}}));
  EXPECT_EQ(result.fallbacks, 1);
}

TEST(PlacementTest, MemoryPerCpuAndPerGpuAreChargedOnEachNode) {
  auto nodes = nodesOf("t4", 2, 8, "n");
  for (auto& node : nodes) node.memory_mb = 64000;
  NodeDemand per_cpu;
  per_cpu.cpus = 8;
  per_cpu.memory_mb_per_cpu = 5000;  // 40 GB per node
  NodeDemand per_gpu;
  per_gpu.memory_mb_per_gpu = 10000;  // 40 GB for 4 GPUs
  const auto result = place(nodes, {}, {{{"t4", 4, 1}, {}, {}, per_cpu},
                                        {{"t4", 4, 1}, {}, {}, per_gpu}});
  ASSERT_TRUE(result.allocations[0] && result.allocations[1]);
  EXPECT_NE(result.allocations[0]->nodes, result.allocations[1]->nodes);
}

TEST(PlacementTest, WholeNodeMemoryNeedsANodeWhoseMemoryIsUntouched) {
  auto nodes = nodesOf("t4", 2, 8, "n");
  for (auto& node : nodes) node.memory_mb = 64000;
  NodeDemand whole;
  whole.whole_node_memory = true;
  NodeDemand small;
  small.memory_mb = 1000;
  const std::vector<Holding> fixed{{{"t4", {{"n0", 1}}}, small}};
  const auto result = place(nodes, fixed, {{{"t4", 2, 1}, {}, {}, whole},
                                           {{"t4", 2, 1}, {}, {}, whole}});
  EXPECT_EQ(result.allocations[0], (Allocation{"t4", {{"n1", 2}}}));
  EXPECT_FALSE(result.allocations[1].has_value());
}

TEST(PlacementTest, ARequestKeepsALargerCurrentAllocationOnlyWithinItsBudgets) {
  auto nodes = nodesOf("t4", 1, 8, "n");
  nodes.push_back({"v", "v100", 2});
  const std::vector<Holding> fixed{{{"v100", {{"v", 2}}}, {}}};  // nowhere to go on v100
  const Allocation current{"t4", {{"n0", 4}}};
  PlacementRequest moving{{"v100", 2, 1}, current, {}};
  moving.budgets = {BudgetShare{0}};
  PlacementRequest other{{"t4", 1, 1}, {}, {}};
  other.budgets = {BudgetShare{0}};
  EXPECT_EQ(place(nodes, fixed, {moving, other}, {5}).allocations[0], current);
  const auto result = place(nodes, fixed, {moving, other}, {4});  // 4 + 1 > 4
  EXPECT_FALSE(result.allocations[0].has_value());
  EXPECT_EQ(result.allocations[1], (Allocation{"t4", {{"n0", 1}}}));
}

TEST(PlacementTest, AMultiNodeConfigurationNeedsTheCpusOnEveryNode) {
  auto nodes = nodesOf("t4", 3, 4, "n");
  nodes[0].cpus = 1;
  NodeDemand demand;
  demand.cpus = 2;
  const auto result = place(nodes, {}, {{{"t4", 8, 2}, {}, {}, demand}});
  EXPECT_EQ(result.allocations[0], (Allocation{"t4", {{"n1", 4}, {"n2", 4}}}));
}

TEST(PlacementTest, ARequestGoesOnlyToTheNodesOfItsPartition) {
  const auto nodes = nodesOf("t4", 4, 4, "n");
  const NodeSet partition{"n2", "n3"};  // of n0..n3
  auto result = place(nodes, {}, {{{"t4", 2, 1}, {}, {}, {}, &partition}});
  EXPECT_EQ(result.allocations[0], (Allocation{"t4", {{"n2", 2}}}));  // n0 otherwise
  result = place(nodes, {}, {{{"t4", 8, 2}, {}, {}, {}, &partition}});
  EXPECT_EQ(result.allocations[0], (Allocation{"t4", {{"n2", 4}, {"n3", 4}}}));
  result = place(nodes, {}, {{{"t4", 12, 3}, {}, {}, {}, &partition}});
  EXPECT_FALSE(result.allocations[0].has_value());  // three nodes: the partition has two
}

TEST(PlacementTest, PlaceableCheckAgreesWithPlacingTheConfigurationAlone) {
  std::mt19937 random(5);
  std::uniform_int_distribution<int> cpus_of(0, 16), memory_of(0, 4), gpus_of(1, 24),
      demand_of(0, 4), coin(0, 1);
  for (int round = 0; round < 200; ++round) {
    auto nodes = nodesOf("t4", 4, 8, "t");
    const auto small = nodesOf("t4", 2, 4, "s");
    nodes.insert(nodes.end(), small.begin(), small.end());
    for (auto& node : nodes) {
      node.cpus = cpus_of(random);
      if (coin(random)) node.memory_mb = 16000 * memory_of(random);
    }
    const std::vector<Holding> fixed{{{"t4", {{"t0", 1 + coin(random)}}}, {}}};
    std::map<std::string, NodeSet> partitions{{"part", {}}};
    for (const auto& node : nodes) {
      if (coin(random)) partitions["part"].insert(node.name);
    }
    const NodeSet* part = &partitions.at("part");
    const PlaceableCheck check(nodes, fixed, partitions);
    const auto cluster = shapeOf(nodes);
    NodeDemand demand;
    demand.cpus = 1 + demand_of(random);
    demand.cpus_per_gpu = demand_of(random);
    demand.memory_mb_per_gpu = 4000 * demand_of(random);
    demand.whole_node_memory = demand_of(random) == 0;
    const Config config = layout("t4", gpus_of(random), cluster.at("t4"));
    if (config.nodes == 0) continue;
    const bool placed = place(nodes, fixed, {{config, {}, {}, demand}}).allocations[0].has_value();
    EXPECT_EQ(check.placeable(config, demand, nullptr), placed) << "round " << round;
    const bool placed_in_part =
        place(nodes, fixed, {{config, {}, {}, demand, part}}).allocations[0].has_value();
    EXPECT_EQ(check.placeable(config, demand, part), placed_in_part) << "round " << round;
  }
}

TEST(PlacementTest, InvariantsHoldOnRandomRequests) {
  std::mt19937 random(11);
  for (int round = 0; round < 100; ++round) {
    auto nodes = nodesOf("t4", 6, 8, "t");
    const auto v100 = nodesOf("v100", 3, 4, "v");
    nodes.insert(nodes.end(), v100.begin(), v100.end());
    std::uniform_int_distribution<int> cpus_of(2, 24), demand_of(1, 6);
    for (auto& node : nodes) node.cpus = cpus_of(random);
    const auto cluster = shapeOf(nodes);
    // Current allocations: whole disjoint single nodes for some requests.
    std::vector<PlacementRequest> requests;
    std::uniform_int_distribution<int> gpus_of(1, 20), type_of(0, 1), keep(0, 1);
    for (int i = 0; i < 8; ++i) {
      const std::string type = type_of(random) ? "t4" : "v100";
      const Config config = layout(type, gpus_of(random), cluster.at(type));
      if (config.nodes == 0) continue;
      std::optional<Allocation> current;
      if (i < 3 && keep(random)) current = Allocation{"t4", {{"t" + std::to_string(i), 8}}};
      NodeDemand demand;
      demand.cpus = demand_of(random);
      requests.push_back(
          {current && keep(random) ? configOf(*current) : config, current, {}, demand});
    }
    const auto result = place(nodes, {}, requests);
    const auto sizes = nodeSizes(nodes);
    std::map<std::string, int> used, cpus_kept, cpus_placed;
    for (std::size_t i = 0; i < requests.size(); ++i) {
      const auto& allocation = result.allocations[i];
      const auto& request = requests[i];
      const bool unchanged = request.current && configOf(*request.current) == request.config;
      if (unchanged) {
        EXPECT_EQ(allocation, request.current);
      }
      if (!allocation) continue;
      for (const auto& [name, gpus] : allocation->nodes) {
        (unchanged ? cpus_kept : cpus_placed)[name] += request.demand.cpusFor(gpus);
      }
      // No fallbacks offered: as chosen, or back where it runs now.
      EXPECT_TRUE(configOf(*allocation) == request.config || allocation == request.current);
      int partial_nodes = 0;
      for (const auto& [name, gpus] : allocation->nodes) {
        used[name] += gpus;
        if (gpus != sizes.at(name)) ++partial_nodes;
      }
      if (request.config.nodes > 1) {
        EXPECT_LE(partial_nodes, 1);
      } else {
        EXPECT_EQ(allocation->nodes.size(), 1u);
      }
    }
    for (const auto& [name, gpus] : used) EXPECT_LE(gpus, sizes.at(name)) << name;
    // Jobs that stay where they run are never moved; nothing new goes beyond a node's CPUs.
    for (const auto& node : nodes) {
      if (cpus_placed[node.name] == 0) continue;
      EXPECT_LE(cpus_kept[node.name] + cpus_placed[node.name], *node.cpus) << node.name;
    }
  }
}

}  // namespace
}  // namespace pollux::policy
