// SPDX-License-Identifier: GPL-2.0-or-later
// Fits each AdaptDL application on its placements of up to 4 GPUs and predicts the larger ones.
#include "fit_check.hpp"

#include <cstdio>
#include <cstdlib>

#include <gtest/gtest.h>

#include "testing/shipped_traces.hpp"

namespace pollux::trace {
namespace {

TEST(FitOnTracesTest, SmallPlacementsPredictLargeOnes) {
  std::printf("%-12s %8s %9s %9s %9s\n", "application", "fit_rows", "held_out", "median_err",
              "p90_err");
  std::vector<double> all_errors;
  for (const char* app : {"bert", "cifar10", "deepspeech2", "imagenet", "ncf", "yolov3"}) {
    const std::string dir = pollux::testing::shippedTraces() + "/" + app;
    auto rows = readPlacements(dir + "/placements.csv");
    const auto large = readScalability(dir + "/scalability.csv");
    rows.insert(rows.end(), large.begin(), large.end());
    const FitCheck check = checkFit(rows, 4);
    std::printf("%-12s %8zu %9zu %9.1f%% %8.1f%%\n", app, check.fit_samples,
                check.held_out.size(), 100 * check.medianError(), 100 * check.quantileError(0.9));
    EXPECT_GT(check.held_out.size(), 100u) << app;
    EXPECT_LT(check.medianError(), 0.20) << app;
    for (const auto& p : check.held_out) all_errors.push_back(p.relative_error);
  }
  std::nth_element(all_errors.begin(), all_errors.begin() + all_errors.size() / 2,
                   all_errors.end());
  const double overall = all_errors[all_errors.size() / 2];
  std::printf("%-12s %28.1f%%\n", "all", 100 * overall);
  EXPECT_LT(overall, 0.15);
}

TEST(FitOnTracesTest, NothingToFitIsAnError) {
  const std::vector<ProfileRow> only_large = {{{2, 8}, 32, 0.1, 0.05, ""}};
  EXPECT_THROW(checkFit(only_large, 4), std::invalid_argument);
}

}  // namespace
}  // namespace pollux::trace
