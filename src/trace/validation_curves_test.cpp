// SPDX-License-Identifier: GPL-2.0-or-later
#include "validation_curves.hpp"

#include <gtest/gtest.h>

namespace pollux::trace {
namespace {

ValidationCurves twoRuns() {
  return ValidationCurves({{10, {{100, 4.0, 8.0}, {200, 2.0, 4.0}}},
                           {40, {{50, 8.0, 16.0}, {150, 6.0, 12.0}, {300, 1.0, 2.0}}}});
}

TEST(ValidationCurvesTest, Limits) {
  const auto curves = twoRuns();
  EXPECT_EQ(curves.initBatchSize(), 10);
  EXPECT_EQ(curves.maxBatchSize(), 40);
  EXPECT_DOUBLE_EQ(curves.targetProgress(), 200);
}

TEST(ValidationCurvesTest, InterpolatesAlongProgressAndBatch) {
  const auto curves = twoRuns();
  EXPECT_DOUBLE_EQ(curves.gradParams(10, 100).sqr, 4.0);
  EXPECT_DOUBLE_EQ(curves.gradParams(10, 150).sqr, 3.0);  // halfway along progress
  EXPECT_DOUBLE_EQ(curves.gradParams(10, 20).var, 8.0);   // clamped before the first point
  EXPECT_DOUBLE_EQ(curves.gradParams(40, 100).sqr, 7.0);
  // B = 25 is halfway between 10 and 40: at progress 100, (4 + 7) / 2.
  EXPECT_DOUBLE_EQ(curves.gradParams(25, 100).sqr, 5.5);
  EXPECT_DOUBLE_EQ(curves.gradParams(80, 300).var, 2.0);  // clamped above the largest B
}

TEST(ValidationCurvesTest, GainFollowsTheNoiseScale) {
  const auto curves = twoRuns();
  EXPECT_DOUBLE_EQ(curves.gain(10, 100), 1.0);
  // B = 40 at progress 300: sqr 1, var 2, r = 4: (2 + 1) / (0.5 + 1) = 2.
  EXPECT_DOUBLE_EQ(curves.gain(40, 300), 2.0);
}

}  // namespace
}  // namespace pollux::trace
