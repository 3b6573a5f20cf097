// SPDX-License-Identifier: GPL-2.0-or-later
#include "efficiency.hpp"

#include <gtest/gtest.h>

#include "common/invalid_input.hpp"

namespace pollux::model {
namespace {

const GradParams kGrad{1.0, 3.0};  // |g|^2 = 1, tr(Sigma) = 3

TEST(EfficiencyTest, IsOneAtTheInitialBatchSize) {
  EXPECT_DOUBLE_EQ(efficiency(kGrad, 32, 32), 1.0);
}

TEST(EfficiencyTest, MatchesHandComputedValue) {
  // r = 4: gain = (3 + 1) / (3/4 + 1) = 16/7; E = gain / r = 4/7.
  EXPECT_NEAR(efficiency(kGrad, 32, 128), 4.0 / 7.0, 1e-12);
}

TEST(EfficiencyTest, NoiseDominatedGradientsScalePerfectly) {
  EXPECT_NEAR(efficiency(GradParams{0.0, 5.0}, 32, 1024), 1.0, 1e-12);
}

TEST(EfficiencyTest, WithoutStatisticsLargerBatchesGainNothing) {
  EXPECT_NEAR(efficiency(GradParams{0.0, 0.0}, 32, 128), 0.25, 1e-12);
}

TEST(EfficiencyTest, DecreasesWithBatchSize) {
  double previous = 1.0;
  for (double batch = 64; batch <= 8192; batch *= 2) {
    const double current = efficiency(kGrad, 32, batch);
    EXPECT_LT(current, previous);
    previous = current;
  }
}

TEST(LrScaleTest, RulesAtScaleFour) {
  EXPECT_NEAR(lrScale(LrScaling::kAdaScale, kGrad, 32, 128), 16.0 / 7.0, 1e-12);
  EXPECT_NEAR(lrScale(LrScaling::kSquareRoot, kGrad, 32, 128), 2.0, 1e-12);
  EXPECT_NEAR(lrScale(LrScaling::kLinear, kGrad, 32, 128), 4.0, 1e-12);
}

TEST(LrScaleTest, ParsesNamesAndRejectsOthers) {
  EXPECT_EQ(parseLrScaling("adascale"), LrScaling::kAdaScale);
  EXPECT_EQ(parseLrScaling("sqrt"), LrScaling::kSquareRoot);
  EXPECT_EQ(parseLrScaling("linear"), LrScaling::kLinear);
  EXPECT_STREQ(toString(parseLrScaling("sqrt")), "sqrt");
  EXPECT_THROW(parseLrScaling("Linear "), InvalidInput);
  EXPECT_THROW(parseLrScaling(""), InvalidInput);
}

}  // namespace
}  // namespace pollux::model
