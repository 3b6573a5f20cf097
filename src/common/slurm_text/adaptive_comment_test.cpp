// SPDX-License-Identifier: GPL-2.0-or-later
#include "adaptive_comment.hpp"

#include <gtest/gtest.h>

#include "common/invalid_input.hpp"

namespace pollux::schema {
namespace {

TEST(AdaptiveCommentTest, PlainKeywordTakesDefaults) {
  const auto request = parseAdaptiveComment("adaptive");
  ASSERT_TRUE(request.has_value());
  EXPECT_EQ(request->min_gpus, 1);
  EXPECT_FALSE(request->max_gpus.has_value());
  EXPECT_FALSE(request->gpu_type.has_value());
}

TEST(AdaptiveCommentTest, ReadsEveryOption) {
  const auto request = parseAdaptiveComment("adaptive:min_gpus=2,max_gpus=16,gpu_type=a100");
  ASSERT_TRUE(request.has_value());
  EXPECT_EQ(request->min_gpus, 2);
  EXPECT_EQ(*request->max_gpus, 16);
  EXPECT_EQ(*request->gpu_type, "a100");
  EXPECT_FALSE(request->part_of.has_value());
}

TEST(AdaptiveCommentTest, ReadsThePartOfAJob) {
  const auto request = parseAdaptiveComment("adaptive:part_of=4294967294");
  ASSERT_TRUE(request.has_value());
  EXPECT_EQ(*request->part_of, 4294967294u);
}

TEST(AdaptiveCommentTest, ResizeLivePutsEveryGpuInParts) {
  EXPECT_TRUE(parseAdaptiveComment("adaptive:resize=live,max_gpus=8")->gpus_in_parts);
  EXPECT_FALSE(parseAdaptiveComment("adaptive:resize=requeue")->gpus_in_parts);
  EXPECT_FALSE(parseAdaptiveComment("adaptive")->gpus_in_parts);
}

TEST(AdaptiveCommentTest, OtherCommentsAreNotAdaptive) {
  EXPECT_FALSE(parseAdaptiveComment("").has_value());
  EXPECT_FALSE(parseAdaptiveComment("my experiment").has_value());
  EXPECT_FALSE(parseAdaptiveComment("adaptively tuned").has_value());
  EXPECT_FALSE(parseAdaptiveComment("Adaptive").has_value());
}

TEST(AdaptiveCommentTest, AsksForAdaptiveByTheKeywordAloneOrWithOptions) {
  EXPECT_TRUE(asksForAdaptive("adaptive"));
  EXPECT_TRUE(asksForAdaptive("adaptive:max_gpus=8"));
  EXPECT_TRUE(asksForAdaptive("adaptive:"));  // malformed: parseAdaptiveComment rejects it
  EXPECT_FALSE(asksForAdaptive("adaptively tuned"));
  EXPECT_FALSE(asksForAdaptive("Adaptive"));
  EXPECT_FALSE(asksForAdaptive("adapt"));
  EXPECT_FALSE(asksForAdaptive(""));
}

TEST(AdaptiveCommentTest, MalformedOptionsAreRejectedWithTheReason) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"adaptive:", "nothing after"},
      {"adaptive:min_gpus", "lacks '='"},
      {"adaptive:min_gpus=0", "min_gpus must be >= 1"},
      {"adaptive:min_gpus=-1", "needs a number"},
      {"adaptive:min_gpus=two", "needs a number"},
      {"adaptive:max_gpus=99999999", "needs a number"},
      {"adaptive:min_gpus=8,max_gpus=4", "below min_gpus"},
      {"adaptive:gpu_type=", "gpu_type needs a name"},
      {"adaptive:gpu_type=a100;rm", "characters other than"},
      {"adaptive:colour=red", "unknown option 'colour'"},
      {"adaptive:min_gpus=1,", "trailing ','"},
      {"adaptive:part_of=", "part_of needs a job id"},
      {"adaptive:part_of=0", "part_of needs a job id"},
      {"adaptive:part_of=4294967295", "part_of needs a job id"},
      {"adaptive:part_of=12a", "part_of needs a job id"},
      {"adaptive:resize=", "resize needs live or requeue"},
      {"adaptive:resize=grow", "resize needs live or requeue, got 'grow'"},
      {"adaptive:part_of=7,resize=live", "a part has no parts"},
  };
  for (const auto& [comment, reason] : cases) {
    try {
      parseAdaptiveComment(comment);
      ADD_FAILURE() << "accepted " << comment;
    } catch (const InvalidInput& error) {
      EXPECT_NE(std::string(error.what()).find(reason), std::string::npos) << error.what();
      EXPECT_NE(std::string(error.what()).find("syntax:"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace pollux::schema
