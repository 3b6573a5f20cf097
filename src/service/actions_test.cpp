// SPDX-License-Identifier: GPL-2.0-or-later
#include "actions.hpp"
#include "site_policy.hpp"

#include <gtest/gtest.h>

namespace pollux::service {
namespace {

SlurmJob adaptiveJob(uint32_t id, JobState state) {
  SlurmJob job;
  job.id = id;
  job.state = state;
  job.adaptive = schema::AdaptiveRequest{};
  return job;
}

SlurmJob runningOn(uint32_t id, std::vector<std::string> nodes, const std::string& type,
                   int per_node) {
  SlurmJob job = adaptiveJob(id, JobState::kRunning);
  job.nodes = nodes;
  job.num_nodes = static_cast<int>(nodes.size());
  job.gpus_per_node = GpuGres{type, per_node};
  return job;
}

policy::Decision decide(const std::string& id, const std::string& type,
                        std::map<std::string, int> nodes) {
  policy::Decision decision;
  decision.allocations[id] = {{type, nodes}, 256, 64, 0, std::nullopt};
  return decision;
}

std::vector<Action> plan(const std::vector<SlurmJob>& jobs, const policy::Decision& decision,
                         const std::set<uint32_t>& resizes_in_place = {}) {
  std::vector<std::string> problems;
  auto actions = planActions(jobs, decision, 1000.0, resizes_in_place, problems);
  EXPECT_TRUE(problems.empty()) << problems.front();
  return actions;
}

TEST(ActionsTest, PendingJobIsStartedWherePlaced) {
  const auto actions = plan({adaptiveJob(7, JobState::kPending)}, decide("7", "a100", {{"n1", 2}}));
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::kStart);
  EXPECT_EQ(tresPerNode(actions[0]), "gres:gpu:2");
  EXPECT_EQ(actions[0].gpu_type, "a100");
  EXPECT_EQ(actions[0].nodes, std::vector<std::string>{"n1"});
}

TEST(ActionsTest, UnplacedPendingJobIsHeldOnce) {
  SlurmJob job = adaptiveJob(7, JobState::kPending);
  job.held = true;  // its user's hold is no hold of Pollux's: Pollux adds its own
  auto actions = plan({job}, policy::Decision{});
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::kHold);
  job.eligible_time = kPolluxHoldTime;
  EXPECT_TRUE(plan({job}, policy::Decision{}).empty());
}

TEST(ActionsTest, AHoldSaysWhyTheJobWaits) {
  const SlurmJob job = adaptiveJob(7, JobState::kPending);
  std::vector<std::string> problems;
  const auto actions =
      planActions({job}, policy::Decision{}, 100, {}, problems, {{"7", "QOSMaxGRESPerUser"}});
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].why, "waiting: Reason=QOSMaxGRESPerUser");
}

TEST(ActionsTest, PendingJobAlreadyAskingForItsPlacementIsLeftAlone) {
  SlurmJob job = adaptiveJob(7, JobState::kPending);
  job.gpus_per_node = GpuGres{"", 2};
  job.requested_nodes = {"n2", "n1"};
  EXPECT_TRUE(plan({job}, decide("7", "a100", {{"n1", 2}, {"n2", 2}})).empty());
  EXPECT_EQ(plan({job}, decide("7", "a100", {{"n1", 2}}))[0].kind, ActionKind::kStart);
  job.eligible_time = 1100.0;  // a requeue pushed eligibility past our begin_time: redo it
  EXPECT_EQ(plan({job}, decide("7", "a100", {{"n1", 2}, {"n2", 2}}))[0].kind, ActionKind::kStart);
}

TEST(ActionsTest, UnchangedRunningJobIsLeftAlone) {
  EXPECT_TRUE(plan({runningOn(7, {"n1"}, "a100", 2)}, decide("7", "a100", {{"n1", 2}})).empty());
}

TEST(ActionsTest, GrowingRequeuesToTheTarget) {
  const auto actions =
      plan({runningOn(7, {"n1"}, "a100", 2)}, decide("7", "a100", {{"n1", 4}, {"n2", 4}}));
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::kRequeue);
  EXPECT_EQ(actions[0].gpus_per_node, 4);
  EXPECT_EQ(actions[0].nodes, (std::vector<std::string>{"n1", "n2"}));
}

TEST(ActionsTest, ShrinkRequeuesAJobWhoseLauncherCannotShrinkIt) {
  const auto actions =
      plan({runningOn(7, {"n1", "n2"}, "a100", 4)}, decide("7", "a100", {{"n1", 4}}));
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::kRequeue);
  EXPECT_EQ(actions[0].nodes, std::vector<std::string>{"n1"});
}

SlurmJob launchedOn(uint32_t id, std::vector<std::string> nodes, const std::string& batch_host) {
  SlurmJob job = runningOn(id, nodes, "a100", 4);
  job.batch_host = batch_host;
  return job;
}

TEST(ActionsTest, ShrinkToNodesTheJobKeepsIsDoneInPlace) {
  const auto actions = plan({launchedOn(7, {"n1", "n2", "n3"}, "n2")},
                            decide("7", "a100", {{"n2", 4}, {"n3", 4}}), {7});
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::kShrink);
  EXPECT_EQ(actions[0].nodes, (std::vector<std::string>{"n2", "n3"}));
  EXPECT_EQ(targetOf(actions[0]), (policy::Allocation{"a100", {{"n2", 4}, {"n3", 4}}}));
}

TEST(ActionsTest, ShrinkSlurmCannotDoInPlaceIsARequeue) {
  const std::set<uint32_t> in_place = {7};
  const auto kind = [&](const policy::Decision& decision) {
    return plan({launchedOn(7, {"n1", "n2"}, "n1")}, decision, in_place).at(0).kind;
  };
  EXPECT_EQ(kind(decide("7", "a100", {{"n2", 4}})), ActionKind::kRequeue);  // batch host goes
  EXPECT_EQ(kind(decide("7", "a100", {{"n1", 2}})), ActionKind::kRequeue);  // fewer GPUs a node
  EXPECT_EQ(kind(decide("7", "v100", {{"n1", 4}})), ActionKind::kRequeue);  // another type
  EXPECT_EQ(kind(decide("7", "a100", {{"n1", 4}, {"n3", 4}})), ActionKind::kRequeue);  // moves
  EXPECT_EQ(kind(decide("7", "a100", {{"n1", 4}, {"n2", 4}, {"n3", 4}})), ActionKind::kRequeue);
  EXPECT_EQ(kind(policy::Decision{}), ActionKind::kRequeue);  // preempted: nothing to keep
}

TEST(ActionsTest, RunningJobWithoutGpusIsRequeued) {
  const auto actions = plan({runningOn(7, {"n1"}, "a100", 2)}, policy::Decision{});
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::kRequeue);
  EXPECT_TRUE(actions[0].nodes.empty());
}

TEST(ActionsTest, RigidAndFinishedJobsAreNotTouched) {
  SlurmJob rigid = runningOn(8, {"n1"}, "a100", 2);
  rigid.adaptive.reset();
  SlurmJob done = adaptiveJob(9, JobState::kOther);
  EXPECT_TRUE(plan({rigid, done}, policy::Decision{}).empty());
}

TEST(ActionsTest, UnequalGpusPerNodeIsReportedNotActedOn) {
  std::vector<std::string> problems;
  const auto actions = planActions({adaptiveJob(7, JobState::kPending)},
                                   decide("7", "a100", {{"n1", 4}, {"n2", 2}}), 1000.0, {},
                                   problems);
  EXPECT_TRUE(actions.empty());
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("JobId=7"), std::string::npos);
}

TEST(ActionsTest, JobOnUntypedGpusKeepingItsAllocationIsLeftAlone) {
  std::vector<SlurmJob> jobs = {runningOn(7, {"g1"}, "", 2)};  // Gres=gpu:4, --gres=gpu:2
  resolveGpuTypes(jobs, {{"g1", {"", 4}, true}});
  EXPECT_TRUE(plan(jobs, decide("7", kUntypedGpu, {{"g1", 2}})).empty());
}

SlurmJob failedOn(uint32_t id, std::vector<std::string> nodes, double end_time) {
  SlurmJob job = runningOn(id, nodes, "a100", 4);
  job.state = JobState::kOther;
  job.failed = true;
  job.end_time = end_time;
  return job;
}

TEST(ActionsTest, JobThatFailedOnADeadNodeIsRequeued) {
  const std::vector<SlurmNode> nodes = {{"n1", {"a100", 4}, true}, {"n2", {"a100", 4}, false}};
  const auto actions = planNodeFailureRequeues({failedOn(7, {"n1", "n2"}, 990)}, nodes, 900);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].job_id, 7u);
  EXPECT_EQ(actions[0].kind, ActionKind::kRequeue);
  EXPECT_TRUE(actions[0].nodes.empty());
  EXPECT_NE(actions[0].why.find("n2"), std::string::npos) << actions[0].why;
}

TEST(ActionsTest, AJobThatFailedAfterSlurmRemovedItsDeadNodeIsRequeued) {
  const std::vector<SlurmNode> nodes = {{"n1", {"a100", 4}, true}, {"n2", {"a100", 4}, false}};
  const std::vector<SlurmJob> jobs = {failedOn(7, {"n1"}, 990)};
  EXPECT_TRUE(planNodeFailureRequeues(jobs, nodes, 900).empty());
  const auto actions = planNodeFailureRequeues(jobs, nodes, 900, {{7, {"n1", "n2"}}});
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_NE(actions[0].why.find("n2"), std::string::npos) << actions[0].why;
}

TEST(ActionsTest, OtherFailuresAreLeftAlone) {
  const std::vector<SlurmNode> nodes = {{"n1", {"a100", 4}, true}, {"n2", {"a100", 4}, false}};
  SlurmJob completed = failedOn(1, {"n2"}, 990);
  completed.failed = false;
  SlurmJob rigid = failedOn(2, {"n2"}, 990);
  rigid.adaptive.reset();
  const std::vector<SlurmJob> jobs = {completed, rigid, failedOn(3, {"n1"}, 990),
                                      failedOn(4, {"n2"}, 800)};
  EXPECT_TRUE(planNodeFailureRequeues(jobs, nodes, 900).empty());
}

}  // namespace
}  // namespace pollux::service
