// SPDX-License-Identifier: GPL-2.0-or-later
#include "profile.hpp"

#include <gtest/gtest.h>

#include "testing/temp_file.hpp"

namespace pollux::trace {
namespace {

// The text in a file removed once the statement that reads it is done.
testing::TempFile writeTemp(const std::string& text) { return {"pollux-profile", text}; }

TEST(PlacementDigitsTest, CountsNodesAndReplicas) {
  EXPECT_EQ(parsePlacementDigits("1").num_nodes, 1);
  EXPECT_EQ(parsePlacementDigits("22").num_replicas, 4);
  EXPECT_EQ(parsePlacementDigits("1344").num_nodes, 4);
  EXPECT_EQ(parsePlacementDigits("1344").num_replicas, 12);
  EXPECT_THROW(parsePlacementDigits(""), std::invalid_argument);
  EXPECT_THROW(parsePlacementDigits("20"), std::invalid_argument);
  EXPECT_THROW(parsePlacementDigits("2x"), std::invalid_argument);
}

TEST(ProfileTest, ReadsBothFormats) {
  const auto placements = readPlacements(writeTemp(
      "placement,local_bsz,step_time,sync_time\n1,32,0.04,0.0005\n22,64,0.15,0.1\n"));
  ASSERT_EQ(placements.size(), 2u);
  EXPECT_EQ(placements[1].placement.num_replicas, 4);
  EXPECT_EQ(placements[1].local_bsz, 64);
  EXPECT_DOUBLE_EQ(placements[1].sync_time, 0.1);
  const auto scalability = readScalability(writeTemp(
      "num_nodes,num_replicas,local_bsz,step_time,sync_time\n6,24,32,0.14,0.09\n"));
  ASSERT_EQ(scalability.size(), 1u);
  EXPECT_EQ(scalability[0].placement.num_nodes, 6);
}

TEST(ProfileTest, BadFilesNameTheFileAndLine) {
  const std::string header = "placement,local_bsz,step_time,sync_time\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {header + "1,32,nan,0\n", ":2:"},
      {header + "1,32,0.1,0\n1,32,-0.1,0\n", ":3:"},
      {header + "1,0,0.1,0\n", ":2:"},
      {header + "1,32.5,0.1,0\n", ":2:"},
      {header + "1,32,0.1\n", ":2:"},
      {header + "1,32,0.1abc,0\n", ":2:"},
      {header + "0,32,0.1,0\n", ":2:"},
      {"wrong,header\n", ":1:"},
  };
  for (const auto& [text, where] : cases) {
    try {
      readPlacements(writeTemp(text));
      FAIL() << "accepted: " << text;
    } catch (const TraceError& error) {
      EXPECT_NE(std::string(error.what()).find(where), std::string::npos) << error.what();
    }
  }
  EXPECT_THROW(readPlacements("/nonexistent/placements.csv"), TraceError);
}

TEST(ProfileTest, ReadsSiaColumnOrder) {
  const auto placements = readPlacements(writeTemp(
      "local_bsz,step_time,sync_time,placement\n4,0.25,0.006,1\n8,0.6,0.3,44\n"));
  ASSERT_EQ(placements.size(), 2u);
  EXPECT_EQ(placements[1].placement_digits, "44");
  EXPECT_EQ(placements[1].placement.num_replicas, 8);
  EXPECT_EQ(placements[1].local_bsz, 8);
  EXPECT_DOUBLE_EQ(placements[1].step_time, 0.6);
  const auto scalability = readScalability(writeTemp(
      "local_bsz,step_time,sync_time,num_nodes,num_replicas\n4,0.58,0.34,3,24\n"));
  ASSERT_EQ(scalability.size(), 1u);
  EXPECT_EQ(scalability[0].placement.num_nodes, 3);
  EXPECT_EQ(scalability[0].placement.num_replicas, 24);
  EXPECT_EQ(scalability[0].local_bsz, 4);
}

TEST(ProfileTest, ReadsValidationCurves) {
  const auto rows = readValidation(writeTemp(
      "progress,iteration,metric,grad_sqr,grad_var\n391.0,390,0.44,8.9,5.0\n782.0,781,0.6,1.8,1.5\n"));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_DOUBLE_EQ(rows[1].progress, 782.0);
  EXPECT_DOUBLE_EQ(rows[1].grad_sqr, 1.8);
  EXPECT_DOUBLE_EQ(rows[1].grad_var, 1.5);
  EXPECT_THROW(readValidation(writeTemp("progress,grad_sqr,grad_var\n2,1,1\n1,1,1\n")),
               TraceError);
  EXPECT_THROW(readValidation(writeTemp("progress,grad_sqr,grad_var\n")), TraceError);
}

}  // namespace
}  // namespace pollux::trace
