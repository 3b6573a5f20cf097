// SPDX-License-Identifier: GPL-2.0-or-later
#include "throughput_profile.hpp"

#include <gtest/gtest.h>

#include "testing/shipped_traces.hpp"

namespace pollux::trace {
namespace {

ThroughputProfile cifar10() {
  const std::string dir = pollux::testing::shippedTraces() + "/cifar10/";
  return ThroughputProfile(readPlacements(dir + "placements.csv"),
                           readScalability(dir + "scalability.csv"));
}

TEST(ThroughputProfileTest, CanonicalRotation) {
  EXPECT_EQ(canonicalRotation("212"), "122");
  EXPECT_EQ(canonicalRotation("1313"), "1313");
  EXPECT_EQ(canonicalRotation("3131"), "1313");
  EXPECT_EQ(canonicalRotation("4"), "4");
}

TEST(ThroughputProfileTest, ExactPlacementRows) {
  const auto profile = cifar10();
  // placements.csv: 1,32,0.0427886962890625,0.0004995360016822816
  EXPECT_DOUBLE_EQ(profile.timing({1}, 32).step_time, 0.0427886962890625);
  EXPECT_DOUBLE_EQ(profile.timing({1}, 32).sync_time, 0.0004995360016822816);
  // 12,45,0.12848591804504395: {2, 1} is the rotation of "12".
  EXPECT_DOUBLE_EQ(profile.timing({2, 1}, 45).step_time, 0.12848591804504395);
  EXPECT_EQ(profile.minLocalBsz(), 32);
  EXPECT_EQ(profile.maxLocalBsz(), 1024);
}

TEST(ThroughputProfileTest, InterpolatesOverLocalBatchAndClamps) {
  const auto profile = cifar10();
  // Halfway between local_bsz 32 (0.04278...) and 45 (0.05048...) on one GPU.
  EXPECT_NEAR(profile.timing({1}, 38).step_time,
              0.0427886962890625 + 6.0 / 13 * (0.05048525333404541 - 0.0427886962890625), 1e-12);
  EXPECT_DOUBLE_EQ(profile.timing({1}, 8).step_time, 0.0427886962890625);
}

TEST(ThroughputProfileTest, LargePlacementsUseTheScalabilityGrid) {
  const auto profile = cifar10();
  // scalability.csv: 6,6,32,0.14090566635131835
  EXPECT_DOUBLE_EQ(profile.timing({1, 1, 1, 1, 1, 1}, 32).step_time, 0.14090566635131835);
  // 7 nodes x 1 GPU: halfway between (6 nodes, 7 replicas) and (8 nodes, 8 replicas: the
  // fewest replicas measured on 8 nodes).
  EXPECT_NEAR(profile.timing({1, 1, 1, 1, 1, 1, 1}, 32).step_time,
              (0.14091217517852783 + 0.1917647361755371) / 2, 1e-12);
}

TEST(ThroughputProfileTest, AccumulationCostsComputeTimeOnly) {
  EXPECT_DOUBLE_EQ(optimizerStepTime({1.0, 0.25}, 0), 1.0);
  EXPECT_DOUBLE_EQ(optimizerStepTime({1.0, 0.25}, 2), 2.5);
}

}  // namespace
}  // namespace pollux::trace
