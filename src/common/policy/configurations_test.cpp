// SPDX-License-Identifier: GPL-2.0-or-later
#include "configurations.hpp"

#include <gtest/gtest.h>

#include "test_cluster.hpp"

namespace pollux::policy {
namespace {

using testing::adaptiveJob;
using testing::nodesOf;
using testing::rigidJob;

std::vector<std::pair<int, int>> gpusAndNodes(const std::vector<Config>& configs) {
  std::vector<std::pair<int, int>> shapes;
  for (const auto& config : configs) shapes.push_back({config.gpus, config.nodes});
  return shapes;
}

TEST(ConfigurationsTest, PowersOfTwoInsideANodeThenWholeNodes) {
  const auto cluster = shapeOf(nodesOf("t4", 4, 8, "n"));
  const auto configs = candidateConfigs(adaptiveJob("a", 1, 64, "t4"), cluster);
  const std::vector<std::pair<int, int>> expected{{1, 1}, {2, 1}, {4, 1}, {8, 1}, {16, 2}, {32, 4}};
  EXPECT_EQ(gpusAndNodes(configs), expected);
}

TEST(ConfigurationsTest, BoundedByMinAndMaxGpusWithMinItself) {
  const auto cluster = shapeOf(nodesOf("t4", 4, 8, "n"));
  const auto configs = candidateConfigs(adaptiveJob("a", 3, 12, "t4"), cluster);
  const std::vector<std::pair<int, int>> expected{{3, 1}, {4, 1}, {8, 1}};
  EXPECT_EQ(gpusAndNodes(configs), expected);
}

TEST(ConfigurationsTest, EveryTypeUnlessPinned) {
  auto nodes = nodesOf("t4", 2, 4, "t");
  const auto v100 = nodesOf("v100", 1, 8, "v");
  nodes.insert(nodes.end(), v100.begin(), v100.end());
  const auto cluster = shapeOf(nodes);
  auto job = adaptiveJob("a", 4, 4, "t4");
  EXPECT_EQ(candidateConfigs(job, cluster).size(), 2u);
  job.gpu_type = "v100";
  const auto pinned = candidateConfigs(job, cluster);
  ASSERT_EQ(pinned.size(), 1u);
  EXPECT_EQ(pinned[0], (Config{"v100", 4, 1}));
}

TEST(ConfigurationsTest, RigidJobsTakeExactlyTheirGpus) {
  const auto cluster = shapeOf(nodesOf("t4", 4, 8, "n"));
  EXPECT_EQ(candidateConfigs(rigidJob("r", 4), cluster), (std::vector<Config>{{"t4", 4, 1}}));
  EXPECT_EQ(candidateConfigs(rigidJob("r", 12), cluster), (std::vector<Config>{{"t4", 12, 2}}));
  EXPECT_TRUE(candidateConfigs(rigidJob("r", 40), cluster).empty());
}

TEST(ConfigurationsTest, ConfigOfAnAllocation) {
  const Allocation allocation{"t4", {{"n0", 8}, {"n1", 4}}};
  EXPECT_EQ(configOf(allocation), (Config{"t4", 12, 2}));
}

TEST(ConfigurationsTest, ChangesInPlaceAreThoseSlurmMakesWithoutARequeue) {
  const Allocation two_nodes{"t4", {{"n0", 2}, {"n1", 2}}};
  // A part on new nodes with as many GPUs each.
  EXPECT_TRUE(changesInPlace(two_nodes, {"t4", {{"n0", 2}, {"n1", 2}, {"n2", 2}}}));
  EXPECT_FALSE(changesInPlace(two_nodes, {"t4", {{"n0", 2}, {"n1", 2}, {"n2", 4}}}));
  // A part on its own nodes: as many again on each.
  EXPECT_TRUE(changesInPlace(two_nodes, {"t4", {{"n0", 4}, {"n1", 4}}}));
  EXPECT_FALSE(changesInPlace(two_nodes, {"t4", {{"n0", 4}, {"n1", 2}}}));  // more on one node
  EXPECT_FALSE(changesInPlace(two_nodes, {"t4", {{"n0", 3}, {"n1", 3}}}));
  EXPECT_FALSE(changesInPlace(two_nodes, {"v100", {{"n0", 2}, {"n1", 2}, {"n2", 2}}}));
  // A shrink in place: some of its nodes as they are.
  EXPECT_TRUE(changesInPlace(two_nodes, {"t4", {{"n1", 2}}}));
  EXPECT_FALSE(changesInPlace(two_nodes, {"t4", {{"n0", 1}, {"n1", 1}}}));
  EXPECT_FALSE(changesInPlace(two_nodes, {"t4", {{"n2", 2}}}));
  // With a part on n1: dropping it, another part on new nodes, or one doubling it on its nodes.
  const std::vector<Allocation> part{{"t4", {{"n1", 2}}}};
  EXPECT_TRUE(changesInPlace(two_nodes, {"t4", {{"n0", 2}}}, part));
  EXPECT_FALSE(changesInPlace(two_nodes, {"t4", {{"n1", 2}}}, part));
  EXPECT_TRUE(changesInPlace(two_nodes, {"t4", {{"n0", 2}, {"n1", 2}, {"n2", 2}}}, part));
  EXPECT_TRUE(changesInPlace(two_nodes, {"t4", {{"n0", 4}, {"n1", 4}}}, part));
  EXPECT_FALSE(changesInPlace(two_nodes, {"t4", {{"n0", 4}, {"n1", 2}}}, part));
}

TEST(ConfigurationsTest, AJobDoubledOnItsNodeByAPartDoublesAgainByAnotherAndDropsItFirst) {
  const Allocation doubled{"t4", {{"n0", 2}}};
  const std::vector<Allocation> first{{"t4", {{"n0", 1}}}};
  EXPECT_TRUE(changesInPlace(doubled, {"t4", {{"n0", 4}}}, first));
  const Allocation again{"t4", {{"n0", 4}}};
  const std::vector<Allocation> both{{"t4", {{"n0", 1}}}, {"t4", {{"n0", 2}}}};
  EXPECT_TRUE(changesInPlace(again, doubled, both));
  EXPECT_FALSE(changesInPlace(again, {"t4", {{"n0", 1}}}, both));  // two parts at once
  EXPECT_TRUE(changesInPlace(again, {"t4", {{"n0", 3}}}, both));  // the first part only
}

TEST(ConfigurationsTest, AJobWithSeveralPartsShrinksLiveByAnyOneOfThem) {
  const Allocation three_nodes{"t4", {{"n0", 2}, {"n1", 2}, {"n2", 2}}};
  const std::vector<Allocation> parts{{"t4", {{"n1", 2}}}, {"t4", {{"n2", 2}}}};
  EXPECT_TRUE(changesInPlace(three_nodes, {"t4", {{"n0", 2}, {"n1", 2}}}, parts));
  EXPECT_EQ(droppedPart(three_nodes, {"t4", {{"n0", 2}, {"n1", 2}}}, parts), 1u);
  EXPECT_TRUE(changesInPlace(three_nodes, {"t4", {{"n0", 2}, {"n2", 2}}}, parts));
  EXPECT_EQ(droppedPart(three_nodes, {"t4", {{"n0", 2}, {"n2", 2}}}, parts), 0u);
  EXPECT_FALSE(changesInPlace(three_nodes, {"t4", {{"n1", 2}, {"n2", 2}}}, parts));  // its own
  EXPECT_FALSE(changesInPlace(three_nodes, {"t4", {{"n0", 2}}}, parts));  // two at once
  EXPECT_EQ(droppedPart(three_nodes, {"t4", {{"n0", 2}}}, parts), std::nullopt);
  EXPECT_TRUE(changesInPlace(three_nodes, {"t4", {{"n0", 2}, {"n1", 2}, {"n2", 2}, {"n3", 2}}},
                             parts));
}

TEST(ConfigurationsTest, APartShrinksLiveToSomeOfItsNodesButNeverOffItsBatchHost) {
  const Allocation four_nodes{"t4", {{"n0", 2}, {"n1", 2}, {"n2", 2}, {"n3", 2}}};
  const std::vector<Allocation> parts{{"t4", {{"n0", 2}}},
                                      {"t4", {{"n1", 2}, {"n2", 2}, {"n3", 2}}}};
  const Allocation without_n3{"t4", {{"n0", 2}, {"n1", 2}, {"n2", 2}}};
  EXPECT_EQ(shrunkPart(four_nodes, without_n3, parts, {}), 1u);
  EXPECT_TRUE(changesInPlace(four_nodes, without_n3, parts));
  EXPECT_EQ(shrunkPart(four_nodes, {"t4", {{"n0", 2}, {"n1", 2}}}, parts, {}), 1u);
  // n1 is its batch host by name; with n2 named as its batch host, n1 may leave instead.
  const Allocation without_n1{"t4", {{"n0", 2}, {"n2", 2}, {"n3", 2}}};
  EXPECT_FALSE(changesInPlace(four_nodes, without_n1, parts));
  EXPECT_TRUE(changesInPlace(four_nodes, without_n1, parts, {"n2"}));
  EXPECT_EQ(batchHostOf(parts[1], {"n2"}), "n2");
  EXPECT_EQ(batchHostOf(parts[1], {}), "n1");
  // Dropping the whole part is droppedPart's; fewer GPUs on a node, or nodes of two parts at
  // once, no part's shrink.
  EXPECT_EQ(shrunkPart(four_nodes, {"t4", {{"n0", 2}}}, parts, {}), std::nullopt);
  EXPECT_EQ(shrunkPart(four_nodes, {"t4", {{"n0", 2}, {"n1", 2}, {"n2", 2}, {"n3", 1}}}, parts, {}),
            std::nullopt);
  EXPECT_FALSE(changesInPlace(four_nodes, {"t4", {{"n1", 2}, {"n2", 2}}}, parts));
  // Its shrinks, fewest nodes dropped first, the last by name first, never its batch host.
  EXPECT_EQ(partShrinks(four_nodes, parts[1], {}),
            (std::vector<Allocation>{without_n3, {"t4", {{"n0", 2}, {"n1", 2}}}}));
  EXPECT_EQ(partShrinks(four_nodes, parts[1], {"n3"}),
            (std::vector<Allocation>{{"t4", {{"n0", 2}, {"n1", 2}, {"n3", 2}}},
                                     {"t4", {{"n0", 2}, {"n3", 2}}}}));
  EXPECT_TRUE(partShrinks(four_nodes, parts[0], {}).empty());  // a one-node part
}

}  // namespace
}  // namespace pollux::policy
