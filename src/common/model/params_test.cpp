// SPDX-License-Identifier: GPL-2.0-or-later
#include "params.hpp"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "common/invalid_input.hpp"

namespace pollux::model {
namespace {

const PerfParams kValid{0.1, 0.01, 0.5, 0.05, 0.2, 0.02, 1.5};

TEST(PerfParamsTest, AcceptsValidParameters) { EXPECT_NO_THROW(validate(kValid)); }

TEST(PerfParamsTest, RejectsNonFiniteZeroAndNegativeTimes) {
  for (double bad : {std::nan(""), std::numeric_limits<double>::infinity(), 0.0, -1.0}) {
    PerfParams params = kValid;
    params.beta_n = bad;
    try {
      validate(params);
      FAIL() << "accepted beta_n=" << bad;
    } catch (const InvalidInput& error) {
      EXPECT_NE(std::string(error.what()).find("perf_params.beta_n"), std::string::npos);
    }
  }
}

TEST(PerfParamsTest, RejectsGammaOutsideOneToTen) {
  for (double bad : {0.99, 10.01, std::nan("")}) {
    PerfParams params = kValid;
    params.gamma = bad;
    EXPECT_THROW(validate(params), InvalidInput) << "gamma=" << bad;
  }
}

TEST(GradParamsTest, AcceptsZeroRejectsNegativeAndNaN) {
  EXPECT_NO_THROW(validate(GradParams{0.0, 0.0}));
  EXPECT_THROW(validate(GradParams{-1.0, 1.0}), InvalidInput);
  EXPECT_THROW(validate(GradParams{1.0, std::nan("")}), InvalidInput);
  EXPECT_THROW(validate(GradParams{std::numeric_limits<double>::infinity(), 1.0}), InvalidInput);
}

TEST(PlacementTest, NeedsAtLeastOneReplicaPerNode) {
  EXPECT_NO_THROW(validate(Placement{2, 8}));
  EXPECT_THROW(validate(Placement{0, 1}), InvalidInput);
  EXPECT_THROW(validate(Placement{3, 2}), InvalidInput);
  EXPECT_THROW(validate(Placement{1, -4}), InvalidInput);
}

}  // namespace
}  // namespace pollux::model
