// SPDX-License-Identifier: GPL-2.0-or-later
#include "type_models.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include "common/invalid_input.hpp"

namespace pollux::model {
namespace {

const PerfParams kV100{0.3, 0.03, 0.5, 0.05, 0.2, 0.02, 1.5};
const RelativeSpeeds kSpeeds{{"a100", 3.0}, {"v100", 1.0}};

TEST(TypeModelsTest, EstimatesUnmeasuredTypeFromRelativeSpeed) {
  TypeModels models;
  models.setMeasured("v100", kV100);
  const auto complete = models.complete(kSpeeds);
  ASSERT_EQ(complete.size(), 2u);
  EXPECT_FALSE(complete.at("v100").estimated);
  const TypeModel& a100 = complete.at("a100");
  EXPECT_TRUE(a100.estimated);
  EXPECT_NEAR(a100.params.alpha_c, 0.1, 1e-12);  // three times as fast
  EXPECT_NEAR(a100.params.beta_c, 0.01, 1e-12);
  EXPECT_DOUBLE_EQ(a100.params.alpha_n, kV100.alpha_n);  // network is not the GPU's
  EXPECT_DOUBLE_EQ(a100.params.gamma, kV100.gamma);
}

TEST(TypeModelsTest, MeasurementReplacesTheEstimate) {
  TypeModels models;
  models.setMeasured("v100", kV100);
  PerfParams a100 = kV100;
  a100.alpha_c = 0.07;
  models.setMeasured("a100", a100);
  const auto complete = models.complete(kSpeeds);
  EXPECT_FALSE(complete.at("a100").estimated);
  EXPECT_DOUBLE_EQ(complete.at("a100").params.alpha_c, 0.07);
}

TEST(TypeModelsTest, SeveralSourcesAreAveragedGeometrically) {
  TypeModels models;
  models.setMeasured("v100", kV100);
  PerfParams a100 = kV100;
  a100.alpha_c = 0.4;  // v100 predicts t4 = 0.3 * 1/0.5 = 0.6; a100 predicts 0.4 * 3/0.5 = 2.4
  models.setMeasured("a100", a100);
  RelativeSpeeds speeds = kSpeeds;
  speeds["t4"] = 0.5;
  const auto t4 = models.complete(speeds).at("t4");
  EXPECT_TRUE(t4.estimated);
  EXPECT_NEAR(t4.params.alpha_c, std::sqrt(0.6 * 2.4), 1e-12);
}

// A fit that saturates gamma at 10 is estimated for other types with gamma 10, not the
// 10.000000000000002 of exp(log(10)), which validation rejects (every round failed so).
TEST(TypeModelsTest, AGammaAtItsBoundStaysWithinIt) {
  TypeModels models;
  PerfParams saturated = kV100;
  saturated.gamma = kMaxGamma;
  models.setMeasured("v100", saturated);
  const PerfParams a100 = models.complete(kSpeeds).at("a100").params;
  EXPECT_DOUBLE_EQ(a100.gamma, kMaxGamma);
  EXPECT_NO_THROW(validate(a100));
}

TEST(TypeModelsTest, TypesWithoutSpeedGetNoEstimate) {
  TypeModels models;
  models.setMeasured("v100", kV100);
  const auto complete = models.complete({{"v100", 1.0}});
  EXPECT_EQ(complete.count("a100"), 0u);
  EXPECT_TRUE(TypeModels().complete(kSpeeds).empty());  // nothing measured yet
}

TEST(TypeModelsTest, RejectsBadInput) {
  TypeModels models;
  EXPECT_THROW(models.setMeasured("", kV100), InvalidInput);
  PerfParams bad = kV100;
  bad.beta_r = -1;
  EXPECT_THROW(models.setMeasured("v100", bad), InvalidInput);
  EXPECT_FALSE(models.hasMeasured("v100"));
  models.setMeasured("v100", kV100);
  EXPECT_THROW(models.complete({{"a100", 0.0}}), InvalidInput);
  EXPECT_THROW(models.complete({{"a100", std::nan("")}}), InvalidInput);
}

}  // namespace
}  // namespace pollux::model
