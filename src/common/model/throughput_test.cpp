// SPDX-License-Identifier: GPL-2.0-or-later
#include "throughput.hpp"

#include <gtest/gtest.h>

namespace pollux::model {
namespace {

// Reference values below are computed by hand from docs/design.md section 4.1.
const PerfParams kNoOverlap{0.1, 0.01, 0.5, 0.05, 0.2, 0.02, 1.0};

TEST(ThroughputTest, ComputeTimeIsLinearInLocalBatch) {
  EXPECT_DOUBLE_EQ(computeTime(kNoOverlap, 10), 0.2);   // 0.1 + 0.01 * 10
  EXPECT_DOUBLE_EQ(computeTime(kNoOverlap, 100), 1.1);  // 0.1 + 0.01 * 100
}

TEST(ThroughputTest, SyncTimeByPlacement) {
  EXPECT_DOUBLE_EQ(syncTime(kNoOverlap, {1, 1}), 0.0);
  EXPECT_DOUBLE_EQ(syncTime(kNoOverlap, {1, 2}), 0.2);            // alpha_r
  EXPECT_DOUBLE_EQ(syncTime(kNoOverlap, {1, 4}), 0.2 + 0.02 * 2);  // alpha_r + 2 beta_r
  EXPECT_DOUBLE_EQ(syncTime(kNoOverlap, {2, 8}), 0.5 + 0.05 * 6);  // alpha_n + 6 beta_n
  EXPECT_DOUBLE_EQ(syncTime(kNoOverlap, {2, 2}), 0.5);
}

TEST(ThroughputTest, StepTimeWithoutOverlapAddsComputeAndSync) {
  EXPECT_DOUBLE_EQ(stepTime(kNoOverlap, {1, 1}, 10, 0), 0.2);
  EXPECT_NEAR(stepTime(kNoOverlap, {1, 4}, 10, 0), 0.44, 1e-12);
  // Two accumulation micro-batches add 2 * T_grad.
  EXPECT_NEAR(stepTime(kNoOverlap, {1, 4}, 10, 2), 0.84, 1e-12);
}

TEST(ThroughputTest, OverlapIsAGammaNorm) {
  PerfParams overlapped = kNoOverlap;
  overlapped.gamma = 2.0;
  // sqrt(0.2^2 + 0.24^2) = sqrt(0.0976)
  EXPECT_NEAR(stepTime(overlapped, {1, 4}, 10, 0), 0.31240998703626616, 1e-12);
  overlapped.gamma = 10.0;  // close to max(T_grad, T_sync)
  EXPECT_NEAR(stepTime(overlapped, {1, 4}, 10, 0), 0.24, 0.01);
}

TEST(ThroughputTest, ThroughputCountsEveryExampleOfTheStep) {
  EXPECT_NEAR(throughput(kNoOverlap, {1, 4}, 10, 0), 40 / 0.44, 1e-9);
  EXPECT_NEAR(throughput(kNoOverlap, {1, 4}, 10, 2), 120 / 0.84, 1e-9);
  EXPECT_NEAR(throughput(kNoOverlap, {1, 1}, 10, 0), 50.0, 1e-9);
}

}  // namespace
}  // namespace pollux::model
