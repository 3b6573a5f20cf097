// SPDX-License-Identifier: GPL-2.0-or-later
#include "goodput.hpp"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "common/invalid_input.hpp"

namespace pollux::model {
namespace {

const PerfParams kPerf{0.05, 0.002, 0.3, 0.02, 0.05, 0.005, 1.2};
const GradParams kGrad{0.5, 20.0};
const BatchLimits kLimits{64, 4096, 16, 256, true};

// Highest goodput over every admissible (local_bsz, accum_steps) pair.
double bruteForceBest(const GoodputModel& model, const Placement& placement) {
  const auto& limits = model.limits();
  double best = 0.0;
  for (int accum = 0; accum <= (limits.accumulation ? 64 : 0); ++accum) {
    for (int local = limits.min_local_bsz; local <= limits.max_local_bsz; ++local) {
      const long batch = long(placement.num_replicas) * local * (accum + 1);
      if (batch < limits.init_batch_size || batch > limits.max_batch_size) continue;
      best = std::max(best, model.goodput(placement, local, accum));
    }
  }
  return best;
}

TEST(GoodputTest, IsThroughputTimesEfficiency) {
  const GoodputModel model(kPerf, kGrad, kLimits);
  const Placement placement{1, 4};
  const double expected = model.throughput(placement, 32, 1) * model.efficiency(4 * 32 * 2);
  EXPECT_DOUBLE_EQ(model.goodput(placement, 32, 1), expected);
}

TEST(GoodputTest, BestBatchIsWithinOnePercentOfBruteForce) {
  const GoodputModel model(kPerf, kGrad, kLimits);
  for (const Placement placement : {Placement{1, 1}, Placement{1, 2}, Placement{1, 4},
                                    Placement{2, 8}, Placement{4, 16}}) {
    const auto choice = model.bestBatch(placement);
    ASSERT_TRUE(choice.has_value());
    EXPECT_GE(choice->goodput, 0.99 * bruteForceBest(model, placement))
        << "replicas=" << placement.num_replicas;
  }
}

TEST(GoodputTest, BestBatchRespectsEveryLimit) {
  const BatchLimits no_accumulation{64, 1000, 16, 100, false};
  const GoodputModel model(kPerf, kGrad, no_accumulation);
  for (int replicas : {1, 2, 3, 4, 8}) {
    const auto choice = model.bestBatch({1, replicas});
    ASSERT_TRUE(choice.has_value());
    EXPECT_EQ(choice->accum_steps, 0);
    EXPECT_GE(choice->local_bsz, 16);
    EXPECT_LE(choice->local_bsz, 100);
    EXPECT_GE(choice->batch_size, 64);
    EXPECT_LE(choice->batch_size, 1000);
    EXPECT_EQ(choice->batch_size, long(replicas) * choice->local_bsz);
  }
}

TEST(GoodputTest, InfeasiblePlacementHasNoBatch) {
  const GoodputModel model(kPerf, kGrad, BatchLimits{64, 256, 16, 64, false});
  EXPECT_FALSE(model.bestBatch({4, 32}).has_value());  // 32 * 16 > 256
  const GoodputModel small(kPerf, kGrad, BatchLimits{512, 512, 16, 64, false});
  EXPECT_FALSE(small.bestBatch({1, 1}).has_value());  // 64 per GPU cannot reach 512
}

TEST(GoodputTest, SpeedupIsRelativeToTheBaseline) {
  const GoodputModel model(kPerf, kGrad, kLimits);
  EXPECT_NEAR(*model.speedup({1, 1}, {1, 1}), 1.0, 1e-12);
  const double four = *model.speedup({1, 4}, {1, 1});
  EXPECT_GT(four, 1.0);
  EXPECT_LT(four, 4.0);
  EXPECT_NEAR(four, model.bestBatch({1, 4})->goodput / model.bestBatch({1, 1})->goodput, 1e-12);
}

TEST(GoodputTest, RejectsBadInputAtConstruction) {
  const double nan = std::nan("");
  PerfParams bad_perf = kPerf;
  bad_perf.alpha_c = nan;
  EXPECT_THROW(GoodputModel(bad_perf, kGrad, kLimits), InvalidInput);
  EXPECT_THROW(GoodputModel(kPerf, GradParams{-1, 1}, kLimits), InvalidInput);
  EXPECT_THROW(GoodputModel(kPerf, kGrad, BatchLimits{0, 64, 1, 8, false}), InvalidInput);
  EXPECT_THROW(GoodputModel(kPerf, kGrad, BatchLimits{64, 32, 1, 8, false}), InvalidInput);
  EXPECT_THROW(GoodputModel(kPerf, kGrad, BatchLimits{64, 128, 0, 8, false}), InvalidInput);
  EXPECT_THROW(GoodputModel(kPerf, kGrad, BatchLimits{64, 128, 16, 8, false}), InvalidInput);
}

TEST(GoodputTest, RejectsBadPlacement) {
  const GoodputModel model(kPerf, kGrad, kLimits);
  EXPECT_THROW(model.bestBatch({0, 0}), InvalidInput);
  EXPECT_THROW(model.bestBatch({2, 1}), InvalidInput);
}

}  // namespace
}  // namespace pollux::model
