// SPDX-License-Identifier: GPL-2.0-or-later
#include "live_shrink.hpp"

#include <gtest/gtest.h>

namespace pollux::agent {
namespace {

// Named by their job and nodes: the trainer finds their ranks, which live changes move.
TEST(LiveShrink, TheJobsWorkersOnTheNodesNotKeptLeave) {
  const LiveShrink shrink = liveShrinkOf({"n1", "n2", "n3", "n4"}, 2, {"n1", "n3"}, "7");
  EXPECT_EQ(shrink.kept, (std::vector<std::string>{"n1", "n3"}));
  EXPECT_EQ(shrink.nodes, (std::vector<std::string>{"n2", "n4"}));
  EXPECT_EQ(shrink.leavers, 4);
  EXPECT_FALSE(shrink.requested);
  EXPECT_EQ(resizeRequest(shrink), "resize leave_job=7 leave_nodes=n2,n4\n");
}

TEST(LiveShrink, NothingLeavesWhenTheBatchHostWouldOrAllStay) {
  EXPECT_EQ(liveShrinkOf({"n1", "n2"}, 1, {"n2"}, "7").leavers, 0);
  EXPECT_EQ(liveShrinkOf({"n1", "n2"}, 1, {"n1", "n2"}, "7").leavers, 0);
  EXPECT_EQ(liveShrinkOf({}, 1, {"n1"}, "7").leavers, 0);
}

TEST(LiveShrink, JoinersAreAskedForByCount) { EXPECT_EQ(joinRequest(4), "resize join=4\n"); }

TEST(LiveShrink, APartJoinsWithAWorkerForEachOfItsGpus) {
  // The job's step: 1 worker on n1. A part with 2 GPUs on n2 (a live move's target).
  const LiveJoin moving = joinOf(12, {"n2"}, 1, {1, 1}, 2);
  EXPECT_EQ(moving.joiners, 2);
  EXPECT_EQ(moving.replicas_before, 1);
  // Not told (plugins older than the key): as many as the step has on each of its nodes.
  EXPECT_EQ(joinOf(12, {"n2", "n3"}, 2, {1, 2}).joiners, 4);
}

// A join of part `part` (on one new node), as the reporter starts it, asked for and joined.
void joinAndGrow(std::vector<LiveJoin>& joins, uint32_t part, model::Placement& placement) {
  ASSERT_TRUE(mayJoin(joins, part));
  joins.push_back(joinOf(part, {"p" + std::to_string(part)}, 1, placement));
  std::optional<LiveShrink> no_shrink;
  markRequested(no_shrink, joins, pendingRequest(no_shrink, joins));
  const int to = placement.num_replicas + joins.back().joiners;
  placement.num_nodes = followResize(joins, placement.num_replicas, to).value_or(-1);
  placement.num_replicas = to;
}

TEST(LiveShrink, StepsOnTwoGpuTypesAreAttributedToNeither) {
  // The job trains on a100; a live move's part on v100 joins, then its old part leaves.
  const model::Placement placement{1, 1};
  std::vector<LiveJoin> joins{joinOf(12, {"n2"}, 1, placement)};
  joins.back().gpu_type = "v100";
  EXPECT_EQ(trainingGpuType("a100", joins), "a100");  // not joined yet
  joins.back().done = true;
  EXPECT_EQ(trainingGpuType("a100", joins), "");
  joins.back().left = true;  // a shrink that dropped it (the move undone)
  EXPECT_EQ(trainingGpuType("a100", joins), "a100");
  // A part of the job's own type, or whose type the plugin does not tell, is the job's.
  joins.push_back(joinOf(13, {"n3"}, 1, placement));
  joins.back().done = true;
  EXPECT_EQ(trainingGpuType("a100", joins), "a100");
  joins.back().gpu_type = "a100";
  EXPECT_EQ(trainingGpuType("a100", joins), "a100");
}

TEST(LiveShrink, ThePartsWorkersLeave) {
  std::vector<LiveJoin> joins = {joinOf(12, {"p12"}, 1, {1, 2})};
  EXPECT_EQ(partLeaveOf(joins, 12, 4).leavers, 0);  // not joined yet
  joins.back().done = true;
  const LiveShrink leave = partLeaveOf(joins, 12, 4);
  EXPECT_EQ(leave.leavers, 2);
  EXPECT_EQ(leave.part, 12u);
  EXPECT_EQ(resizeRequest(leave), "resize leave_job=12\n");
  joins.back().left = true;
  EXPECT_EQ(partLeaveOf(joins, 12, 2).leavers, 0);
}

TEST(LiveShrink, PartsJoinOneAfterTheOther) {
  model::Placement placement{1, 2};
  std::vector<LiveJoin> joins;
  joinAndGrow(joins, 12, placement);
  EXPECT_EQ(placement.num_nodes, 2);
  joinAndGrow(joins, 13, placement);
  EXPECT_EQ(joins[1].replicas_before, 4);  // the first join's total
  EXPECT_EQ(joins[1].nodes_before, 2);
  EXPECT_EQ(placement.num_nodes, 3);
  EXPECT_EQ(partLeaveOf(joins, 14, 6).leavers, 0);  // no part of the job
  EXPECT_EQ(partLeaveOf(joins, 13, 6).leavers, 2);
  EXPECT_EQ(followResize(joins, 6, 4), 2);
  EXPECT_TRUE(joins[1].left);
  EXPECT_FALSE(joins[0].left);
  EXPECT_FALSE(mayJoin(joins, 13));  // still shown running a moment: not joined again
  EXPECT_EQ(partLeaveOf(joins, 12, 4).leavers, 2);
  EXPECT_EQ(followResize(joins, 4, 2), 1);
  EXPECT_TRUE(joins[0].left);
  EXPECT_EQ(newestActiveJoin(joins), nullptr);
}

TEST(LiveShrink, AnOlderPartLeavesAndTheNewerOnesCountWithoutIt) {
  model::Placement placement{1, 2};
  std::vector<LiveJoin> joins;
  joinAndGrow(joins, 12, placement);
  joinAndGrow(joins, 13, placement);
  const LiveShrink leave = partLeaveOf(joins, 12, 6);
  EXPECT_EQ(leave.leavers, 2);
  EXPECT_EQ(resizeRequest(leave), "resize leave_job=12\n");
  EXPECT_EQ(followPartLeave(joins, 12, 6, 4, placement.num_nodes), 2);
  EXPECT_TRUE(joins[0].left);
  EXPECT_FALSE(joins[1].left);
  EXPECT_EQ(joins[1].replicas_before, 2);  // the step's own workers only
  EXPECT_EQ(joins[1].nodes_before, 1);
  // The newer part leaves as the newest, or goes with a failure, from the counts it keeps.
  EXPECT_EQ(partLeaveOf(joins, 13, 4).leavers, 2);
  EXPECT_EQ(followResize(joins, 4, 2), 1);
  EXPECT_TRUE(joins[1].left);
  EXPECT_EQ(followPartLeave(joins, 12, 4, 2, 1), std::nullopt);  // left already
}

TEST(LiveShrink, APartThatJoinedUnderAnEarlierLeadLeavesByItsNodes) {
  // This lead took over after the join: it has no record of part 12's workers.
  const std::vector<LiveJoin> none;
  const LiveShrink leave = partLeaveOf(none, 12, 4, 2);
  EXPECT_EQ(leave.leavers, 2);
  EXPECT_EQ(resizeRequest(leave), "resize leave_job=12\n");
  std::vector<LiveJoin> joins;
  EXPECT_EQ(followPartLeave(joins, 12, 4, 2, 2), 1);
  EXPECT_EQ(partLeaveOf(none, 12, 2, 2).leavers, 1);  // never all of the job's workers
}

TEST(LiveShrink, APartsWorkersOnSomeOfItsNodesLeaveAndItsJoinKeepsTheRest) {
  // The job's step on n1 (2 workers), part 12 on n2 and n3 joined, part 13 on n4 joined.
  model::Placement placement{1, 2};
  std::vector<LiveJoin> joins = {joinOf(12, {"n2", "n3"}, 2, placement)};
  joins.back().done = true;
  placement = {3, 6};
  joins.push_back(joinOf(13, {"n4"}, 1, placement));
  joins.back().done = true;
  placement = {4, 8};
  const LiveShrink leave = partNodesLeaveOf(joins, 12, {"n3"}, {"n2"}, 2, 8);
  EXPECT_EQ(leave.leavers, 2);
  EXPECT_EQ(leave.part, 12u);
  EXPECT_EQ(leave.kept, (std::vector<std::string>{"n2"}));
  EXPECT_EQ(resizeRequest(leave), "resize leave_job=12 leave_nodes=n3\n");
  EXPECT_EQ(followPartNodesLeave(joins, 12, 8, 6, {"n3"}, placement.num_nodes), 3);
  EXPECT_FALSE(joins[0].left);
  EXPECT_EQ(joins[0].joiners, 2);
  EXPECT_EQ(joins[0].part_nodes, 1);
  EXPECT_EQ(joins[0].nodes, (std::vector<std::string>{"n2"}));
  EXPECT_EQ(joins[1].replicas_before, 4);
  EXPECT_EQ(joins[1].nodes_before, 2);
  // The rest of part 12 leaves later as a whole part does.
  EXPECT_EQ(partLeaveOf(joins, 12, 6).leavers, 2);
  // The lead's own part (no join of it): its nodes' workers leave, never all of the job's.
  EXPECT_EQ(followPartNodesLeave(joins, 20, 6, 4, {"n5"}, 3), 2);
  EXPECT_EQ(partNodesLeaveOf({}, 20, {"n5", "n6"}, {"n4"}, 2, 4).leavers, 3);
  EXPECT_EQ(partNodesLeaveOf({}, 20, {"n5"}, {}, 2, 4).leavers, 0);  // it keeps a node
}

TEST(LiveShrink, NoPartLeavesWhileAJoinIsInFlight) {
  model::Placement placement{1, 2};
  std::vector<LiveJoin> joins;
  joinAndGrow(joins, 12, placement);
  joins.push_back(joinOf(13, {"p13"}, 1, placement));
  EXPECT_EQ(partLeaveOf(joins, 12, 4).leavers, 0);
}

TEST(LiveShrink, APartOnNodesTheJobsWorkersHoldAddsNone) {
  model::Placement placement{1, 1};  // one worker on n1
  const std::optional<std::vector<std::string>> step_nodes = std::vector<std::string>{"n1"};
  std::vector<LiveJoin> joins;
  EXPECT_EQ(nodesNewToJob({"n2"}, step_nodes, joins), 1);
  joins.push_back(joinOf(12, {"n2"}, 1, placement));
  EXPECT_EQ(nodesNewToJob({"n1", "n2"}, step_nodes, joins), 1);  // part 12 has not joined yet
  std::optional<LiveShrink> no_shrink;
  markRequested(no_shrink, joins, "resize join=1\n");
  placement = {followResize(joins, 1, 2).value_or(-1), 2};
  EXPECT_EQ(placement.num_nodes, 2);
  // The step's workers on n1 left live (its shrink in place): a part there adds n1 again.
  EXPECT_EQ(nodesNewToJob({"n1"}, step_nodes, joins, {"n1"}), 1);
  // Doubling the job's GPUs on n1 and on its part's n2: the same nodes, twice the workers.
  EXPECT_EQ(nodesNewToJob({"n1", "n2"}, step_nodes, joins), 0);
  joins.push_back(joinOf(13, {"n1", "n2"}, 0, placement));
  EXPECT_EQ(joins.back().joiners, 2);
  markRequested(no_shrink, joins, "resize join=2\n");
  EXPECT_EQ(followResize(joins, 2, 4), 2);
  EXPECT_EQ(partLeaveOf(joins, 13, 4).leavers, 2);
  // Step nodes that cannot be listed: only joined parts' nodes are known to be the job's.
  EXPECT_EQ(nodesNewToJob({"n1", "n3"}, std::nullopt, joins), 1);
}

TEST(LiveShrink, APartIsInFlightUntilItsWorkersJoinedAndAgainWhenItIsToLeave) {
  using State = schema::PartStatus::State;
  EXPECT_FALSE(partInFlight(std::nullopt, {}));
  EXPECT_TRUE(partInFlight(schema::PartStatus{State::kWanted, 0, {}}, {}));
  EXPECT_TRUE(partInFlight(schema::PartStatus{State::kPending, 12, {}}, {}));
  const schema::PartStatus running{State::kRunning, 12, {"n2"}};
  std::vector<LiveJoin> joins;
  EXPECT_TRUE(partInFlight(running, joins));  // not asked to join yet
  joins.push_back(joinOf(12, {"n2"}, 1, {1, 2}));
  EXPECT_TRUE(partInFlight(running, joins));  // joining
  joins.back().done = true;
  EXPECT_FALSE(partInFlight(running, joins));
  EXPECT_TRUE(partInFlight(schema::PartStatus{State::kLeaving, 12, {"n2"}}, joins));
  joins.back().left = true;
  EXPECT_TRUE(partInFlight(running, joins));  // shown running a moment after it left
}

TEST(LiveShrink, ASecondJoinWaitsUntilTheFirstIsDone) {
  model::Placement placement{1, 2};
  std::vector<LiveJoin> joins = {joinOf(12, {"p12"}, 1, placement)};
  EXPECT_FALSE(mayJoin(joins, 13));
  EXPECT_FALSE(mayJoin(joins, 12));
  std::optional<LiveShrink> no_shrink;
  markRequested(no_shrink, joins, "resize join=2\n");
  EXPECT_FALSE(mayJoin(joins, 13));  // asked for, not joined yet
  EXPECT_EQ(followResize(joins, 2, 4), 2);
  EXPECT_TRUE(mayJoin(joins, 13));
}

TEST(LiveShrink, AFailureThatDropsBothPartsLeavesBoth) {
  model::Placement placement{1, 2};
  std::vector<LiveJoin> joins;
  joinAndGrow(joins, 12, placement);
  joinAndGrow(joins, 13, placement);
  EXPECT_EQ(followResize(joins, 6, 5), std::nullopt);  // one worker lost: no part left
  EXPECT_EQ(followResize(joins, 5, 2), 1);
  EXPECT_TRUE(joins[0].left);
  EXPECT_TRUE(joins[1].left);
  EXPECT_TRUE(mayJoin(joins, 14));
}

TEST(LiveShrink, AJoinInFlightWhenAnOlderPartFailsJoinsAfterTheSurvivors) {
  model::Placement placement{1, 2};
  std::vector<LiveJoin> joins;
  joinAndGrow(joins, 12, placement);
  joins.push_back(joinOf(13, {"p13"}, 1, placement));
  std::optional<LiveShrink> no_shrink;
  markRequested(no_shrink, joins, "resize join=2\n");
  EXPECT_EQ(followResize(joins, 4, 2), 1);  // part 12 lost
  EXPECT_TRUE(joins[0].left);
  EXPECT_FALSE(joins[1].left);
  EXPECT_EQ(followResize(joins, 2, 4), 2);
  EXPECT_EQ(partLeaveOf(joins, 13, 4).leavers, 2);
}

TEST(LiveShrink, ARequestStaysPendingUntilATrainerReceivedIt) {
  std::optional<LiveShrink> shrink;
  std::vector<LiveJoin> joins = {joinOf(12, {"p12"}, 1, {1, 2})};
  EXPECT_EQ(pendingRequest(shrink, joins), "resize join=2\n");
  // Sent while no trainer was connected: asked for again.
  EXPECT_EQ(pendingRequest(shrink, joins), "resize join=2\n");
  markRequested(shrink, joins, "resize join=2\n");
  EXPECT_TRUE(joins.back().requested);
  EXPECT_EQ(pendingRequest(shrink, joins), "");
}

TEST(LiveShrink, AShrinkIsAskedForBeforeAJoinAndMarkedByItsMessage) {
  std::optional<LiveShrink> shrink = liveShrinkOf({"n1", "n2"}, 1, {"n1"}, "7");
  std::vector<LiveJoin> joins = {joinOf(12, {"p12"}, 1, {1, 1})};
  EXPECT_EQ(pendingRequest(shrink, joins), "resize leave_job=7 leave_nodes=n2\n");
  markRequested(shrink, joins, "resize join=1\n");  // the join, sent before the shrink came
  EXPECT_FALSE(shrink->requested);
  EXPECT_TRUE(joins.back().requested);
  markRequested(shrink, joins, "resize leave_job=7 leave_nodes=n2\n");
  EXPECT_TRUE(shrink->requested);
}

}  // namespace
}  // namespace pollux::agent
