// SPDX-License-Identifier: GPL-2.0-or-later
#include "live_shrink.hpp"

#include <gtest/gtest.h>

namespace pollux::agent {
namespace {

TEST(LiveShrink, TheWorkersOnTheNodesNotKeptLeave) {
  const LiveShrink shrink = liveShrinkOf({"n1", "n2", "n3"}, 2, {"n1", "n3"});
  EXPECT_EQ(shrink.kept, (std::vector<std::string>{"n1", "n3"}));
  EXPECT_EQ(shrink.leaving, (std::vector<int>{2, 3}));
  EXPECT_FALSE(shrink.requested);
  EXPECT_EQ(resizeRequest(shrink.leaving), "resize leave=2,3\n");
}

TEST(LiveShrink, NothingLeavesWhenRankZerosNodeWouldOrAllStay) {
  EXPECT_TRUE(liveShrinkOf({"n1", "n2"}, 1, {"n2"}).leaving.empty());
  EXPECT_TRUE(liveShrinkOf({"n1", "n2"}, 1, {"n1", "n2"}).leaving.empty());
  EXPECT_TRUE(liveShrinkOf({}, 1, {"n1"}).leaving.empty());
}

TEST(LiveShrink, JoinersAreAskedForByCount) { EXPECT_EQ(joinRequest(4), "resize join=4\n"); }

TEST(LiveShrink, ThePartsWorkersAreTheLastRanks) {
  LiveJoin join;
  join.part = 12;
  join.replicas_before = 2;
  EXPECT_TRUE(partLeaveOf(join, 4).leaving.empty());  // not joined yet
  join.done = true;
  const LiveShrink leave = partLeaveOf(join, 4);
  EXPECT_EQ(leave.leaving, (std::vector<int>{2, 3}));
  EXPECT_EQ(leave.part, 12u);
  join.left = true;
  EXPECT_TRUE(partLeaveOf(join, 2).leaving.empty());
}

TEST(LiveShrink, ARequestStaysPendingUntilATrainerReceivedIt) {
  std::optional<LiveShrink> shrink;
  std::optional<LiveJoin> join = LiveJoin{};
  join->joiners = 2;
  EXPECT_EQ(pendingRequest(shrink, join), "resize join=2\n");
  // Sent while no trainer was connected: asked for again.
  EXPECT_EQ(pendingRequest(shrink, join), "resize join=2\n");
  markRequested(shrink, join, "resize join=2\n");
  EXPECT_TRUE(join->requested);
  EXPECT_EQ(pendingRequest(shrink, join), "");
}

TEST(LiveShrink, AShrinkIsAskedForBeforeAJoinAndMarkedByItsMessage) {
  std::optional<LiveShrink> shrink = LiveShrink{};
  shrink->leaving = {1};
  std::optional<LiveJoin> join = LiveJoin{};
  join->joiners = 1;
  EXPECT_EQ(pendingRequest(shrink, join), "resize leave=1\n");
  markRequested(shrink, join, "resize join=1\n");  // the join, sent before the shrink came
  EXPECT_FALSE(shrink->requested);
  EXPECT_TRUE(join->requested);
  markRequested(shrink, join, "resize leave=1\n");
  EXPECT_TRUE(shrink->requested);
}

}  // namespace
}  // namespace pollux::agent
