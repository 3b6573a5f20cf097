// SPDX-License-Identifier: GPL-2.0-or-later
#include "job_parts.hpp"

#include <gtest/gtest.h>

#include "job_lifecycle.hpp"

namespace pollux::service {
namespace {

constexpr uint32_t kUser = 1000;
constexpr double kNow = 1000;  // the round's time of foldParts

SlurmJob runningOn(uint32_t id, std::vector<std::string> nodes, int per_node = 2) {
  SlurmJob job;
  job.id = id;
  job.uid = kUser;
  job.state = JobState::kRunning;
  job.adaptive = schema::AdaptiveRequest{};
  job.nodes = nodes;
  job.num_nodes = static_cast<int>(nodes.size());
  job.gpus_per_node = GpuGres{"a100", per_node};
  job.start_time = 100;
  return job;
}

SlurmJob partOf(uint32_t id, uint32_t owner, JobState state, std::vector<std::string> nodes = {}) {
  SlurmJob part = runningOn(id, std::move(nodes));
  part.state = state;
  part.adaptive->part_of = owner;
  return part;
}

policy::Allocation onNodes(std::map<std::string, int> nodes) { return {"a100", nodes}; }

Action requeueTo(uint32_t id, std::vector<std::string> nodes, int per_node = 2) {
  Action action;
  action.job_id = id;
  action.kind = ActionKind::kRequeue;
  action.gpu_type = "a100";
  action.gpus_per_node = per_node;
  action.nodes = nodes;
  action.why = "resize";
  return action;
}

TEST(JobPartsTest, RunningPartAddsItsNodesToItsJob) {
  const FoldedJobs folded =
      foldParts({runningOn(7, {"n1"}), partOf(8, 7, JobState::kRunning, {"n2"})}, kNow);
  ASSERT_EQ(folded.jobs.size(), 1u);
  EXPECT_EQ(folded.jobs[0].nodes, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(folded.jobs[0].num_nodes, 2);
  ASSERT_EQ(folded.parts.count(7), 1u);
  ASSERT_EQ(folded.parts.at(7).running.size(), 1u);
  EXPECT_EQ(folded.parts.at(7).running[0].id, 8u);
  EXPECT_TRUE(folded.to_cancel.empty());
}

TEST(JobPartsTest, SeveralRunningPartsAddTheirNodesInTheOrderOfTheirGrowths) {
  const FoldedJobs folded =
      foldParts({partOf(12, 7, JobState::kRunning, {"n3"}), runningOn(7, {"n1"}),
                 partOf(8, 7, JobState::kRunning, {"n1"}), partOf(13, 7, JobState::kPending)},
                kNow);
  ASSERT_EQ(folded.jobs.size(), 1u);
  EXPECT_EQ(folded.jobs[0].nodes, (std::vector<std::string>{"n1", "n3"}));
  EXPECT_EQ(folded.jobs[0].gpus_per_node->count, 4);  // the first doubled it on n1
  const JobParts& parts = folded.parts.at(7);
  ASSERT_EQ(parts.running.size(), 2u);
  EXPECT_EQ(parts.running[0].id, 8u);
  EXPECT_EQ(parts.running[1].id, 12u);
  EXPECT_EQ(parts.pending, 13u);
  EXPECT_TRUE(folded.to_cancel.empty());
}

// A job whose GPUs are all in parts, its home running on n9 with no GPU.
SlurmJob homeOn(uint32_t id, const std::string& node = "n9") {
  SlurmJob home = runningOn(id, {node});
  home.adaptive->gpus_in_parts = true;
  home.gpus_per_node.reset();
  return home;
}

TEST(JobPartsTest, AJobWhoseGpusAreAllInPartsHoldsWhatItsRunningPartsHold) {
  FoldedJobs folded = foldParts({homeOn(7), partOf(8, 7, JobState::kRunning, {"n1", "n2"}),
                                 partOf(9, 7, JobState::kRunning, {"n3"})},
                                kNow);
  ASSERT_EQ(folded.jobs.size(), 1u);
  const SlurmJob& job = folded.jobs[0];
  EXPECT_EQ(job.state, JobState::kRunning);
  EXPECT_EQ(job.nodes, (std::vector<std::string>{"n1", "n2", "n3"}));  // not its home's n9
  EXPECT_EQ(job.num_nodes, 3);
  ASSERT_TRUE(job.gpus_per_node.has_value());
  EXPECT_EQ(job.gpus_per_node->count, 2);
  EXPECT_EQ(job.gpus_per_node->type, "a100");  // its first part's
  EXPECT_EQ(folded.parts.at(7).running[1].gpu_type, "a100");
  EXPECT_TRUE(folded.homes.empty());
  EXPECT_EQ(currentAllocation(folded.jobs[0]), onNodes({{"n1", 2}, {"n2", 2}, {"n3", 2}}));
  // Parts untyped in Slurm's view: resolveGpuTypes types the job by its nodes.
  std::vector<SlurmJob> untyped = {homeOn(7), partOf(8, 7, JobState::kRunning, {"n1"})};
  untyped[1].gpus_per_node->type.clear();
  folded = foldParts(untyped, kNow);
  EXPECT_TRUE(folded.jobs[0].gpus_per_node->type.empty());
  SlurmNode n1;
  n1.name = "n1";
  n1.gpus = GpuGres{"a100", 2};
  resolveGpuTypes(folded.jobs, {n1});
  EXPECT_EQ(currentAllocation(folded.jobs[0]), onNodes({{"n1", 2}}));
}

TEST(JobPartsTest, AHomeWithoutARunningPartIsPendingWhereItsPartIsPlaced) {
  SlurmJob placed = partOf(8, 7, JobState::kPending);
  placed.requested_nodes = {"n1", "n2"};
  placed.gpus_per_node = GpuGres{"", 2};
  placed.eligible_time = 150;
  placed.state_reason = "Resources";
  FoldedJobs folded = foldParts({homeOn(7), placed}, kNow);
  ASSERT_EQ(folded.jobs.size(), 1u);
  const SlurmJob& job = folded.jobs[0];
  EXPECT_EQ(job.state, JobState::kPending);
  EXPECT_TRUE(job.nodes.empty());
  EXPECT_EQ(job.requested_nodes, (std::vector<std::string>{"n1", "n2"}));
  ASSERT_TRUE(job.gpus_per_node.has_value());
  EXPECT_EQ(job.gpus_per_node->count, 2);
  EXPECT_EQ(job.eligible_time, 150);
  EXPECT_EQ(job.state_reason, "Resources");
  EXPECT_EQ(folded.homes, std::set<uint32_t>{7});
  EXPECT_EQ(folded.parts.at(7).pending, 8u);
}

TEST(JobPartsTest, AHomeWithNoPartIsPendingUnplaced) {
  FoldedJobs folded = foldParts({homeOn(7)}, kNow);
  ASSERT_EQ(folded.jobs.size(), 1u);
  EXPECT_EQ(folded.jobs[0].state, JobState::kPending);
  EXPECT_TRUE(folded.jobs[0].requested_nodes.empty());
  EXPECT_FALSE(folded.jobs[0].gpus_per_node.has_value());
  EXPECT_EQ(folded.homes, std::set<uint32_t>{7});
}

TEST(JobPartsTest, APendingHomeStaysAsItIs) {
  SlurmJob home = homeOn(7);
  home.state = JobState::kPending;
  home.nodes.clear();
  FoldedJobs folded = foldParts({home}, kNow);
  EXPECT_EQ(folded.jobs[0].state, JobState::kPending);
  EXPECT_TRUE(folded.homes.empty());
}

TEST(JobPartsTest, RunningPartOnItsJobsNodesDoublesItsGpusThere) {
  const FoldedJobs folded =
      foldParts({runningOn(7, {"n1"}), partOf(8, 7, JobState::kRunning, {"n1"})}, kNow);
  ASSERT_EQ(folded.jobs.size(), 1u);
  EXPECT_EQ(folded.jobs[0].nodes, std::vector<std::string>{"n1"});
  EXPECT_EQ(folded.jobs[0].gpus_per_node->count, 4);
  EXPECT_EQ(folded.parts.at(7).running[0].gpus_per_node, 2);
  // Dropping it is dropping its GPUs there.
  const JobParts& parts = folded.parts.at(7);
  EXPECT_EQ(droppedRunningPart(onNodes({{"n1", 4}}), onNodes({{"n1", 2}}), parts),
            &parts.running[0]);
  EXPECT_EQ(droppedRunningPart(onNodes({{"n1", 4}}), onNodes({{"n1", 1}}), parts), nullptr);
}

TEST(JobPartsTest, ThePolicySeesWhatTheRunningPartsHold) {
  SlurmJob on_two_nodes = partOf(11, 7, JobState::kRunning, {"n3", "n4"});
  on_two_nodes.batch_host = "n4";
  const FoldedJobs folded = foldParts(
      {runningOn(7, {"n1"}), partOf(8, 7, JobState::kRunning, {"n2"}), on_two_nodes}, kNow);
  policy::Snapshot snapshot;
  policy::Job job;
  job.id = "7";
  job.current = onNodes({{"n1", 2}, {"n2", 2}, {"n3", 2}, {"n4", 2}});
  snapshot.jobs = {job};
  job.id = "9";
  snapshot.jobs.push_back(job);
  markParts(snapshot, folded.parts);
  EXPECT_EQ(snapshot.jobs[0].parts, (std::vector<policy::Allocation>{
                                        onNodes({{"n2", 2}}), onNodes({{"n3", 2}, {"n4", 2}})}));
  // Slurm's batch host of each (a part shrinks only to nodes that keep it).
  EXPECT_EQ(snapshot.jobs[0].batch_hosts, (std::set<std::string>{"n4"}));
  EXPECT_TRUE(snapshot.jobs[1].parts.empty());
  EXPECT_FALSE(snapshot.jobs[0].leaving);  // each part within what it is seen on
}

TEST(JobPartsTest, ThePolicySeesTheGpusAMovesOldPartsStillHoldAsLeaving) {
  // Moving from 2 a100 on each of n1 and n2 to 2 v100 on n3: seen on its target, its old
  // part on n1 and n2 leaving once the target's workers have joined.
  SlurmJob target = partOf(9, 7, JobState::kRunning, {"n3"});
  target.gpus_per_node = GpuGres{"v100", 2};
  const FoldedJobs folded =
      foldParts({homeOn(7), partOf(8, 7, JobState::kRunning, {"n1", "n2"}), target}, kNow);
  policy::Snapshot snapshot;
  policy::Job job;
  job.id = "7";
  job.current = policy::Allocation{"v100", {{"n3", 2}}};
  snapshot.jobs = {job};
  markParts(snapshot, folded.parts);
  EXPECT_EQ(snapshot.jobs[0].parts, (std::vector<policy::Allocation>{*job.current}));
  EXPECT_EQ(snapshot.jobs[0].leaving, onNodes({{"n1", 2}, {"n2", 2}}));
  // A shrink off some of a part's nodes: the GPUs on the nodes it leaves.
  snapshot.jobs[0] = job;
  snapshot.jobs[0].current = onNodes({{"n1", 2}});
  markParts(snapshot,
            foldParts({homeOn(7), partOf(8, 7, JobState::kRunning, {"n1", "n2"})}, kNow).parts);
  EXPECT_EQ(snapshot.jobs[0].leaving, onNodes({{"n2", 2}}));
}

TEST(JobPartsTest, PendingPartIsKeptForTheNextGrowth) {
  const FoldedJobs folded =
      foldParts({runningOn(7, {"n1"}), partOf(8, 7, JobState::kPending)}, kNow);
  EXPECT_EQ(folded.jobs[0].nodes, std::vector<std::string>{"n1"});
  EXPECT_EQ(folded.parts.at(7).pending, 8u);
  EXPECT_TRUE(folded.parts.at(7).running.empty());
}

TEST(JobPartsTest, PartsWithNoUseAreCancelled) {
  SlurmJob foreign = partOf(9, 7, JobState::kPending);
  foreign.uid = kUser + 1;
  SlurmJob waiting = runningOn(10, {});
  waiting.state = JobState::kPending;
  const FoldedJobs folded =
      foldParts({runningOn(7, {"n1"}), partOf(8, 7, JobState::kPending), foreign,
                 partOf(11, 7, JobState::kPending), waiting,
                 partOf(12, 10, JobState::kRunning, {"n3"}), partOf(13, 99, JobState::kPending)},
                kNow);
  EXPECT_EQ(folded.to_cancel.size(), 4u);
  EXPECT_NE(folded.to_cancel.at(9).find("another user"), std::string::npos);
  EXPECT_NE(folded.to_cancel.at(11).find("second pending part"), std::string::npos);
  EXPECT_NE(folded.to_cancel.at(12).find("does not run"), std::string::npos);
  EXPECT_NE(folded.to_cancel.at(13).find("does not run"), std::string::npos);
  EXPECT_EQ(folded.parts.at(7).pending, 8u);
  EXPECT_EQ(folded.parts.count(10), 0u);
}

// Cancelled, its job's launcher checkpoints the training in its parts while Slurm ends it.
TEST(JobPartsTest, TheRunningPartsOfAJobEndingOrJustEndedAreLeftToItsLauncher) {
  SlurmJob ending = runningOn(7, {});
  ending.state = JobState::kOther;
  ending.completing = true;
  const std::vector<SlurmJob> jobs = {ending, partOf(8, 7, JobState::kRunning, {"n2"}),
                                      partOf(9, 7, JobState::kPending)};
  FoldedJobs folded = foldParts(jobs, kNow);
  EXPECT_EQ(folded.to_cancel.count(8), 0u);
  EXPECT_EQ(folded.ending.at(7), std::vector<uint32_t>{8});
  EXPECT_NE(folded.to_cancel.at(9).find("does not run"), std::string::npos);
  EXPECT_EQ(folded.parts.count(7), 0u);
  ending.completing = false;  // done, but ended just now: its launcher may have been killed
  ending.end_time = kNow - kEndedJobPartGraceS + 1;
  folded = foldParts({ending, jobs[1], jobs[2]}, kNow);
  EXPECT_EQ(folded.to_cancel.count(8), 0u);
  EXPECT_EQ(folded.ending.count(7), 1u);
  ending.end_time = kNow - kEndedJobPartGraceS;  // its parts, if any is left, have no use
  folded = foldParts({ending, jobs[1], jobs[2]}, kNow);
  EXPECT_NE(folded.to_cancel.at(8).find("does not run"), std::string::npos);
  EXPECT_TRUE(folded.ending.empty());
}

// Requeued (its home's node failed, say): pending again, its end time Slurm's estimate.
TEST(JobPartsTest, TheRunningPartsOfARequeuedJobCheckpointFirst) {
  SlurmJob requeued = runningOn(7, {});
  requeued.state = JobState::kPending;
  requeued.restarts = 1;
  requeued.end_time = kNow + 600;
  const SlurmJob part = partOf(8, 7, JobState::kRunning, {"n2"});
  FoldedJobs folded = foldParts({requeued, part}, kNow);
  EXPECT_EQ(folded.to_cancel.count(8), 0u);
  EXPECT_EQ(folded.ending.at(7), std::vector<uint32_t>{8});
  EXPECT_EQ(folded.parts.count(7), 0u);
  requeued.restarts = 0;  // a job that never ran has no part to keep
  folded = foldParts({requeued, part}, kNow);
  EXPECT_NE(folded.to_cancel.at(8).find("does not run"), std::string::npos);
  EXPECT_TRUE(folded.ending.empty());
}

TEST(JobPartsTest, GrowthOntoNewNodesWithEqualGpusIsAPartGrowth) {
  EXPECT_EQ(partGrowthNodes(onNodes({{"n1", 2}}), onNodes({{"n1", 2}, {"n2", 2}, {"n3", 2}})),
            (std::vector<std::string>{"n2", "n3"}));
  EXPECT_FALSE(partGrowthNodes(onNodes({{"n1", 2}}), onNodes({{"n1", 2}, {"n2", 1}})));
  EXPECT_FALSE(partGrowthNodes(onNodes({{"n1", 1}}), onNodes({{"n1", 2}, {"n2", 1}})));
  EXPECT_FALSE(partGrowthNodes(onNodes({{"n1", 2}}), onNodes({{"n2", 2}, {"n3", 2}})));
  EXPECT_FALSE(partGrowthNodes(onNodes({{"n1", 2}}), {"v100", {{"n1", 2}, {"n2", 2}}}));
  EXPECT_FALSE(partGrowthNodes(onNodes({{"n1", 2}}), onNodes({{"n1", 2}})));
  // On its own nodes, as many again on each.
  EXPECT_EQ(partGrowthNodes(onNodes({{"n1", 2}, {"n2", 2}}), onNodes({{"n1", 4}, {"n2", 4}})),
            (std::vector<std::string>{"n1", "n2"}));
  EXPECT_FALSE(partGrowthNodes(onNodes({{"n1", 2}}), onNodes({{"n1", 3}})));
  // Holding a part on n2: a part on n1 and n2 doubles it there too.
  const std::vector<policy::Allocation> part{onNodes({{"n2", 2}})};
  EXPECT_EQ(partGrowthNodes(onNodes({{"n1", 2}, {"n2", 2}}), onNodes({{"n1", 4}, {"n2", 4}}), part),
            (std::vector<std::string>{"n1", "n2"}));
}

TEST(JobPartsTest, APartOnTheNodesOfTheJobAndOfItsEarlierPartDoublesItsGpusThere) {
  const FoldedJobs folded =
      foldParts({runningOn(7, {"n1"}), partOf(8, 7, JobState::kRunning, {"n2"}),
                 partOf(9, 7, JobState::kRunning, {"n1", "n2"})},
                kNow);
  ASSERT_EQ(folded.jobs.size(), 1u);
  EXPECT_EQ(folded.jobs[0].nodes, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(folded.jobs[0].gpus_per_node->count, 4);
  EXPECT_EQ(folded.parts.at(7).running.size(), 2u);
}

PartRound roundAt(double now, std::set<uint32_t> joined = {},
                  std::map<uint32_t, PartLeave> leaving_since = {}) {
  PartRound round;
  round.grows_live = {7};
  round.joined = std::move(joined);
  round.leaving_since = std::move(leaving_since);
  round.now = now;
  return round;
}

JobParts runningPart() {
  JobParts parts;
  parts.running.push_back({8, {"n2"}, 2, 100});
  return parts;
}

// Job 7 on n1 with part 8 on n2 (joined long ago) and part 11 on n3 since 300.
JobParts twoRunningParts() {
  JobParts parts = runningPart();
  parts.running.push_back({11, {"n3"}, 2, 300});
  return parts;
}

TEST(JobPartsTest, GrowthPlacesThePendingPartOrAsksForOne) {
  const std::vector<SlurmJob> jobs = {runningOn(7, {"n1"})};
  PartRound round = roundAt(200);
  auto actions = planPartActions({requeueTo(7, {"n1", "n2"})}, jobs, {}, round);
  EXPECT_TRUE(actions.empty());
  EXPECT_EQ(round.wanted, std::set<uint32_t>{7});

  JobParts parts;
  parts.pending = 8;
  round = roundAt(200);
  actions = planPartActions({requeueTo(7, {"n1", "n2"})}, jobs, {{7, parts}}, round);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::kStart);
  EXPECT_EQ(actions[0].job_id, 8u);
  EXPECT_EQ(actions[0].owner, 7u);
  EXPECT_EQ(actions[0].nodes, std::vector<std::string>{"n2"});
  EXPECT_EQ(actions[0].gpus_per_node, 2);
  EXPECT_TRUE(round.wanted.empty());
}

Action startOn(uint32_t id, std::vector<std::string> nodes, int per_node = 2) {
  Action start = requeueTo(id, std::move(nodes), per_node);
  start.kind = ActionKind::kStart;
  start.why = "placed";
  return start;
}

TEST(JobPartsTest, APendingHomeStartsOnThePlacementsFirstNodeWithNoGpu) {
  SlurmJob home = homeOn(7);
  home.state = JobState::kPending;
  PartRound round = roundAt(200);
  const auto actions = planPartActions({startOn(7, {"n1", "n2"})}, {home}, {}, round);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::kStart);
  EXPECT_EQ(actions[0].job_id, 7u);
  EXPECT_EQ(actions[0].nodes, std::vector<std::string>{"n1"});
  EXPECT_EQ(actions[0].gpus_per_node, 0);
  EXPECT_EQ(tresPerNode(actions[0]), "");
  EXPECT_EQ(actions[0].why, "home on n1, its first part to be placed (placed)");
  EXPECT_EQ(round.wanted, std::set<uint32_t>{7});  // its launcher submits the part at once
  EXPECT_EQ(round.growing, (std::map<uint32_t, double>{{7, 200.0}}));
}

TEST(JobPartsTest, ARunningHomesStartPlacesItsPendingPartOrAsksForOne) {
  FoldedJobs folded = foldParts({homeOn(7)}, kNow);
  PartRound round = roundAt(200);
  round.homes = folded.homes;
  auto actions = planPartActions({startOn(7, {"n1", "n2"})}, folded.jobs, {}, round);
  EXPECT_TRUE(actions.empty());
  EXPECT_EQ(round.wanted, std::set<uint32_t>{7});

  folded = foldParts({homeOn(7), partOf(8, 7, JobState::kPending)}, kNow);
  round = roundAt(210);
  round.homes = folded.homes;
  round.growing_since = {{7, 200.0}};
  actions = planPartActions({startOn(7, {"n1", "n2"})}, folded.jobs, folded.parts, round);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::kStart);
  EXPECT_EQ(actions[0].job_id, 8u);
  EXPECT_EQ(actions[0].owner, 7u);
  EXPECT_EQ(actions[0].nodes, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(actions[0].gpus_per_node, 2);
  EXPECT_EQ(actions[0].why, "first part of JobId=7 on n1,n2 (placed)");
  EXPECT_TRUE(round.wanted.empty());
  EXPECT_EQ(round.growing, (std::map<uint32_t, double>{{7, 200.0}}));
}

TEST(JobPartsTest, ARunningHomesHoldHoldsItsPendingPart) {
  Action hold;
  hold.job_id = 7;
  hold.kind = ActionKind::kHold;
  hold.why = "waiting for GPUs";
  FoldedJobs folded = foldParts({homeOn(7)}, kNow);
  PartRound round = roundAt(200);
  round.homes = folded.homes;
  EXPECT_TRUE(planPartActions({hold}, folded.jobs, folded.parts, round).empty());

  folded = foldParts({homeOn(7), partOf(8, 7, JobState::kPending)}, kNow);
  round = roundAt(200);
  round.homes = folded.homes;
  const auto actions = planPartActions({hold}, folded.jobs, folded.parts, round);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::kHold);
  EXPECT_EQ(actions[0].job_id, 8u);
  EXPECT_EQ(actions[0].owner, 7u);
}

TEST(JobPartsTest, AHomeWhoseFirstPartDoesNotRunInTimeIsRequeuedItsPartCancelled) {
  Action hold;
  hold.job_id = 7;
  hold.kind = ActionKind::kHold;
  hold.why = "waiting: Reason=QOSMaxGRESPerUser";
  const FoldedJobs folded = foldParts({homeOn(7), partOf(8, 7, JobState::kPending)}, kNow);
  PartRound round = roundAt(200 + kPartStartTimeoutS);
  round.homes = folded.homes;
  round.growing_since = {{7, 200.0}};
  EXPECT_EQ(planPartActions({hold}, folded.jobs, folded.parts, round).size(), 1u);
  EXPECT_EQ(round.growing, (std::map<uint32_t, double>{{7, 200.0}}));  // its clock runs on

  round = roundAt(201 + kPartStartTimeoutS);
  round.homes = folded.homes;
  round.growing_since = {{7, 200.0}};
  const auto actions = planPartActions({hold}, folded.jobs, folded.parts, round);
  ASSERT_EQ(actions.size(), 2u);
  EXPECT_EQ(actions[0].kind, ActionKind::kCancel);
  EXPECT_EQ(actions[0].job_id, 8u);
  EXPECT_EQ(actions[1].kind, ActionKind::kRequeue);
  EXPECT_EQ(actions[1].job_id, 7u);
  EXPECT_TRUE(actions[1].nodes.empty());
  EXPECT_EQ(actions[1].why, "home requeued: its first part did not run within 90 s");
  EXPECT_TRUE(round.growing.empty());  // pending again, its next start starts the clock anew
}

// Slurm's jobs folded, their GPUs typed as on an a100 node (n1, 4 GPUs).
FoldedJobs foldedOnA100(std::vector<SlurmJob> jobs) {
  FoldedJobs folded = foldParts(std::move(jobs), kNow);
  SlurmNode n1;
  n1.name = "n1";
  n1.gpus = GpuGres{"a100", 4};
  resolveGpuTypes(folded.jobs, {n1});
  return folded;
}

// Job 7's GPUs all in parts: parts 8 on n1 and 9 on n2, both joined.
FoldedJobs inTwoParts() {
  return foldedOnA100({homeOn(7), partOf(8, 7, JobState::kRunning, {"n1"}),
                       partOf(9, 7, JobState::kRunning, {"n2"})});
}

TEST(JobPartsTest, AChangeNoPartCarriesIsARestartInNewPartsNotARequeue) {
  const FoldedJobs folded = inTwoParts();
  PartRound round = roundAt(200, {7});
  // 4 GPUs on n1, where it holds 2: no part can carry it while the job holds its own.
  const auto actions = planPartActions({requeueTo(7, {"n1"}, 4)}, folded.jobs, folded.parts, round);
  ASSERT_EQ(actions.size(), 2u);
  for (const auto& action : actions) {
    EXPECT_EQ(action.kind, ActionKind::kCheckpoint);
    EXPECT_EQ(action.owner, 7u);
  }
  EXPECT_EQ(actions[0].job_id, 8u);
  EXPECT_EQ(actions[1].job_id, 9u);
  EXPECT_EQ(actions[0].why, "restart of JobId=7 in new parts: its part on n1 checkpoints (resize)");
}

TEST(JobPartsTest, AMoveBesideWhatItHoldsStartsItsPendingPartThereOrAsksForOne) {
  FoldedJobs folded = foldedOnA100({homeOn(7), partOf(8, 7, JobState::kRunning, {"n1"}),
                                    partOf(9, 7, JobState::kPending)});
  PartRound round = roundAt(200, {7});
  auto actions = planPartActions({requeueTo(7, {"n2"})}, folded.jobs, folded.parts, round);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::kStart);
  EXPECT_EQ(actions[0].job_id, 9u);
  EXPECT_EQ(actions[0].owner, 7u);
  EXPECT_EQ(actions[0].nodes, std::vector<std::string>{"n2"});
  EXPECT_EQ(actions[0].gpus_per_node, 2);
  EXPECT_EQ(actions[0].moves_to, onNodes({{"n2", 2}}));
  EXPECT_EQ(actions[0].why,
            "live move of JobId=7: part on n2, its parts on n1 leave once it has joined (resize)");

  folded = foldedOnA100({homeOn(7), partOf(8, 7, JobState::kRunning, {"n1"})});
  round = roundAt(200, {7});
  actions = planPartActions({requeueTo(7, {"n2"})}, folded.jobs, folded.parts, round);
  EXPECT_TRUE(actions.empty());
  EXPECT_EQ(round.wanted, std::set<uint32_t>{7});
  EXPECT_EQ(round.growing, (std::map<uint32_t, double>{{7, 200.0}}));
}

TEST(JobPartsTest, AMoveThePolicyMakesARestartIsARestartInNewParts) {
  const FoldedJobs folded = foldedOnA100(
      {homeOn(7), partOf(8, 7, JobState::kRunning, {"n1"}), partOf(9, 7, JobState::kPending)});
  PartRound round = roundAt(200, {7});
  Action move = requeueTo(7, {"n2"});
  move.restarted_for = "12";  // job 12 starts on n1
  const auto actions = planPartActions({move}, folded.jobs, folded.parts, round);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::kCheckpoint);
  EXPECT_EQ(actions[0].job_id, 8u);
  EXPECT_EQ(actions[0].owner, 7u);
  EXPECT_TRUE(round.moving.empty());
}

// Job 7 moving from n1 to n2: its part 10 on n2 runs beside its old part 8 on n1.
FoldedJobs moving() {
  return foldedOnA100({homeOn(7), partOf(8, 7, JobState::kRunning, {"n1"}),
                       partOf(10, 7, JobState::kRunning, {"n2"})});
}

TEST(JobPartsTest, AMoveWaitsWhileAPartsWorkersJoin) {
  const FoldedJobs folded = moving();  // its part on n2 has not joined
  PartRound round = roundAt(230);
  EXPECT_TRUE(planPartActions({requeueTo(7, {"n3"}, 4)}, folded.jobs, folded.parts, round).empty());
  EXPECT_TRUE(round.wanted.empty());
}

TEST(JobPartsTest, AMovingJobsOldPartsLeaveOnceItsTargetsPartHasJoined) {
  const FoldedJobs folded = moving();
  PartRound round = roundAt(230);
  round.moving = {{7, PartMove{onNodes({{"n2", 2}}), 200}}};
  EXPECT_TRUE(planPartActions({}, folded.jobs, folded.parts, round).empty());
  EXPECT_TRUE(round.leaving.empty());  // not joined yet

  round = roundAt(240, {7});
  round.moving = {{7, PartMove{onNodes({{"n2", 2}}), 200}}};
  EXPECT_TRUE(planPartActions({}, folded.jobs, folded.parts, round).empty());
  EXPECT_EQ(round.leaving, (std::map<uint32_t, PartLeave>{{7, PartLeave{8, 240}}}));
}

TEST(JobPartsTest, TheNodesARoundPlacesOnAreWithoutTheOldPartsOfMovingJobs) {
  std::vector<SlurmJob> jobs = {homeOn(7), partOf(8, 7, JobState::kRunning, {"n1"}),
                                partOf(10, 7, JobState::kRunning, {"n2"})};
  jobs[1].demand.cpus_per_gpu = 3;
  jobs[1].demand.memory_mb_per_gpu = 1000;
  const FoldedJobs folded = foldedOnA100(jobs);
  std::vector<SlurmNode> nodes(2);
  for (size_t i = 0; i < nodes.size(); ++i) {
    nodes[i].name = "n" + std::to_string(i + 1);
    nodes[i].gpus = GpuGres{"a100", 4};
    nodes[i].gpus_used = 2;
    nodes[i].free_cpus = 10;
    nodes[i].memory_mb = 8000;
    nodes[i].free_memory_mb = 5000;
  }
  // Not moving: as Slurm shows them.
  auto after = nodesAfterMoves(nodes, jobs, folded.parts, {});
  EXPECT_EQ(after[0].gpus_used, 2);
  // Moving to n2: its part on n1 is gone, with its 2 GPUs, 6 CPUs and 2,000 MB.
  after = nodesAfterMoves(nodes, jobs, folded.parts, {{7, PartMove{onNodes({{"n2", 2}}), 200}}});
  EXPECT_EQ(after[0].gpus_used, 0);
  EXPECT_EQ(after[0].free_cpus, 16);
  EXPECT_EQ(after[0].free_memory_mb, 7000);
  EXPECT_EQ(after[1].gpus_used, 2);
  EXPECT_EQ(after[1].free_cpus, 10);
}

TEST(JobPartsTest, AMoveWhosePartDoesNotRunInTimeIsARestartInNewParts) {
  const FoldedJobs folded = foldParts(
      {homeOn(7), partOf(8, 7, JobState::kRunning, {"n1"}), partOf(9, 7, JobState::kPending)},
      kNow);
  PartRound round = roundAt(200 + kPartStartTimeoutS, {7});
  round.moving = {{7, PartMove{onNodes({{"n2", 2}}), 200}}};
  EXPECT_TRUE(planPartActions({}, folded.jobs, folded.parts, round).empty());

  round = roundAt(201 + kPartStartTimeoutS, {7});
  round.moving = {{7, PartMove{onNodes({{"n2", 2}}), 200}}};
  const auto actions = planPartActions({}, folded.jobs, folded.parts, round);
  ASSERT_EQ(actions.size(), 2u);
  EXPECT_EQ(actions[0].kind, ActionKind::kCancel);
  EXPECT_EQ(actions[0].job_id, 9u);
  EXPECT_EQ(actions[1].kind, ActionKind::kCheckpoint);
  EXPECT_EQ(actions[1].job_id, 8u);
}

TEST(JobPartsTest, APreemptionOfAJobWhoseGpusAreInPartsIsACheckpointInItsParts) {
  const FoldedJobs folded = inTwoParts();
  PartRound round = roundAt(200, {7});
  const Action preempted{7, ActionKind::kRequeue, "", 0, {}, "preempted: its GPUs go elsewhere"};
  const auto actions = planPartActions({preempted}, folded.jobs, folded.parts, round);
  ASSERT_EQ(actions.size(), 2u);
  EXPECT_EQ(actions[0].kind, ActionKind::kCheckpoint);
  EXPECT_EQ(actions[1].kind, ActionKind::kCheckpoint);
  EXPECT_TRUE(round.homes.empty());
}

TEST(JobPartsTest, PartsThatDoNotCheckpointInTimeAreCancelled) {
  const FoldedJobs folded = inTwoParts();
  PartRound round = roundAt(200 + kCheckpointTimeoutS, {7});
  round.checkpointing_since = {{7, 200.0}};
  EXPECT_TRUE(planPartActions({}, folded.jobs, folded.parts, round).empty());

  round = roundAt(201 + kCheckpointTimeoutS, {7});
  round.checkpointing_since = {{7, 200.0}};
  const auto actions = planPartActions({}, folded.jobs, folded.parts, round);
  ASSERT_EQ(actions.size(), 2u);
  EXPECT_EQ(actions[0].kind, ActionKind::kCancel);
  EXPECT_EQ(actions[0].job_id, 8u);
  EXPECT_EQ(actions[1].job_id, 9u);
  EXPECT_EQ(actions[1].why,
            "restart of JobId=7 in new parts: its part on n2 did not checkpoint within 120 s");
}

TEST(JobPartsTest, AJobWhoseGpusAreInPartsGrowsThroughAPartAsAnyJobThatGrowsLive) {
  FoldedJobs folded = foldedOnA100({homeOn(7), partOf(8, 7, JobState::kRunning, {"n1"}),
                                    partOf(9, 7, JobState::kPending)});
  PartRound round = roundAt(200, {7});
  round.homes = folded.homes;
  round.joined = {7};
  const auto actions =
      planPartActions({requeueTo(7, {"n1", "n2"})}, folded.jobs, folded.parts, round);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::kStart);
  EXPECT_EQ(actions[0].job_id, 9u);
  EXPECT_EQ(actions[0].nodes, std::vector<std::string>{"n2"});
}

TEST(JobPartsTest, GrowthOnItsOwnNodePlacesThePartThereWithTheJobsGpus) {
  JobParts parts;
  parts.pending = 8;
  PartRound round = roundAt(200);
  const auto actions =
      planPartActions({requeueTo(7, {"n1"}, 4)}, {runningOn(7, {"n1"})}, {{7, parts}}, round);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::kStart);
  EXPECT_EQ(actions[0].job_id, 8u);
  EXPECT_EQ(actions[0].nodes, std::vector<std::string>{"n1"});
  EXPECT_EQ(actions[0].gpus_per_node, 2);
}

TEST(JobPartsTest, GrowthWhosePartDoesNotRunInTimeIsARequeue) {
  const std::vector<SlurmJob> jobs = {runningOn(7, {"n1"})};
  PartRound round = roundAt(150);
  round.growing_since = {{7, 100.0}};
  EXPECT_TRUE(planPartActions({requeueTo(7, {"n1", "n2"})}, jobs, {}, round).empty());
  EXPECT_EQ(round.growing, (std::map<uint32_t, double>{{7, 100.0}}));
  JobParts parts;
  parts.pending = 8;
  round = roundAt(101 + kPartStartTimeoutS);
  round.growing_since = {{7, 100.0}};
  const auto actions = planPartActions({requeueTo(7, {"n1", "n2"})}, jobs, {{7, parts}}, round);
  ASSERT_EQ(actions.size(), 2u);
  EXPECT_EQ(actions[0].kind, ActionKind::kCancel);
  EXPECT_EQ(actions[0].job_id, 8u);
  EXPECT_EQ(actions[1].kind, ActionKind::kRequeue);
  EXPECT_EQ(actions[1].job_id, 7u);
  EXPECT_EQ(round.growth_failed, std::set<uint32_t>{7});
  EXPECT_TRUE(round.growing.empty());
}

TEST(JobPartsTest, AShrinkThatKeepsThePartIsARequeue) {
  const std::vector<SlurmJob> jobs = {runningOn(7, {"n1", "n2"})};
  PartRound round = roundAt(200, {7});
  Action shrink = requeueTo(7, {"n2"});
  shrink.kind = ActionKind::kShrink;
  shrink.live = true;
  const auto actions = planPartActions({shrink}, jobs, {{7, runningPart()}}, round);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::kRequeue);
  EXPECT_FALSE(actions[0].live);
  EXPECT_TRUE(round.leaving.empty());
}

TEST(JobPartsTest, JobsThatDoNotGrowLiveKeepTheirRequeue) {
  PartRound round = roundAt(200);
  round.grows_live.clear();
  const auto actions =
      planPartActions({requeueTo(7, {"n1", "n2"})}, {runningOn(7, {"n1"})}, {}, round);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::kRequeue);
  EXPECT_TRUE(round.wanted.empty());
}

TEST(JobPartsTest, ShrinkOffThePartHasItsWorkersLeaveThenCancelsIt) {
  const std::vector<SlurmJob> jobs = {runningOn(7, {"n1", "n2"})};
  PartRound round = roundAt(200, {7});
  EXPECT_TRUE(planPartActions({requeueTo(7, {"n1"})}, jobs, {{7, runningPart()}}, round).empty());
  EXPECT_EQ(round.leaving, (std::map<uint32_t, PartLeave>{{7, {8, 200.0}}}));
  // Asked again while they have not left, whatever the round decides now.
  round = roundAt(210, {7}, {{7, {8, 200.0}}});
  EXPECT_TRUE(planPartActions({}, jobs, {{7, runningPart()}}, round).empty());
  EXPECT_EQ(round.leaving, (std::map<uint32_t, PartLeave>{{7, {8, 200.0}}}));
  // Left (the report no longer counts n2): the part is cancelled.
  round = roundAt(211, {}, {{7, {8, 200.0}}});
  const auto actions = planPartActions({}, jobs, {{7, runningPart()}}, round);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::kCancel);
  EXPECT_EQ(actions[0].job_id, 8u);
  EXPECT_EQ(actions[0].owner, 7u);
  EXPECT_NE(actions[0].why.find("live shrink of JobId=7"), std::string::npos);
  EXPECT_TRUE(round.leaving.empty());
  // Not left in time: cancelled all the same.
  round = roundAt(201 + kPartLeaveTimeoutS, {7}, {{7, {8, 200.0}}});
  ASSERT_EQ(planPartActions({}, jobs, {{7, runningPart()}}, round).size(), 1u);
  EXPECT_TRUE(round.growth_failed.empty());
}

TEST(JobPartsTest, ShrinkOffAPartNotJoinedYetWaitsForTheJoin) {
  const std::vector<SlurmJob> jobs = {runningOn(7, {"n1", "n2"})};
  // The last report does not count the part's workers: their join may end any moment, and a
  // part cancelled then would take them from the trainer as a failure does.
  PartRound round = roundAt(120);
  EXPECT_TRUE(planPartActions({requeueTo(7, {"n1"})}, jobs, {{7, runningPart()}}, round).empty());
  EXPECT_TRUE(round.leaving.empty());
  // Joined: they are asked to leave.
  round = roundAt(130, {7});
  EXPECT_TRUE(planPartActions({requeueTo(7, {"n1"})}, jobs, {{7, runningPart()}}, round).empty());
  EXPECT_EQ(round.leaving, (std::map<uint32_t, PartLeave>{{7, {8, 130.0}}}));
  // Never joined: the part is cancelled as late, as without the shrink.
  round = roundAt(101 + kPartJoinTimeoutS);
  const auto actions =
      planPartActions({requeueTo(7, {"n1"})}, jobs, {{7, runningPart()}}, round);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::kCancel);
  EXPECT_EQ(actions[0].job_id, 8u);
}

TEST(JobPartsTest, PartNotJoinedInTimeIsCancelledAndTheJobGrowsByRequeue) {
  const std::vector<SlurmJob> jobs = {runningOn(7, {"n1", "n2"})};
  PartRound round = roundAt(100 + kPartJoinTimeoutS);
  EXPECT_TRUE(planPartActions({}, jobs, {{7, runningPart()}}, round).empty());
  round = roundAt(1000, {7});
  EXPECT_TRUE(planPartActions({}, jobs, {{7, runningPart()}}, round).empty());
  round = roundAt(101 + kPartJoinTimeoutS);
  const auto actions = planPartActions({}, jobs, {{7, runningPart()}}, round);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::kCancel);
  EXPECT_EQ(actions[0].job_id, 8u);
  EXPECT_EQ(round.growth_failed, std::set<uint32_t>{7});
}

TEST(JobPartsTest, AJobWithRunningPartsGrowsThroughAnotherOnceTheyJoined) {
  const std::vector<SlurmJob> jobs = {runningOn(7, {"n1", "n2"})};
  JobParts parts = runningPart();
  parts.pending = 11;
  PartRound round = roundAt(200, {7});
  auto actions = planPartActions({requeueTo(7, {"n1", "n2", "n3"})}, jobs, {{7, parts}}, round);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::kStart);
  EXPECT_EQ(actions[0].job_id, 11u);
  EXPECT_EQ(actions[0].nodes, std::vector<std::string>{"n3"});
  // Not joined yet: the growth waits, nothing is asked for.
  round = roundAt(120);
  actions = planPartActions({requeueTo(7, {"n1", "n2", "n3"})}, jobs, {{7, parts}}, round);
  EXPECT_TRUE(actions.empty());
  EXPECT_TRUE(round.growing.empty());
  // Doubling on its nodes while it holds a part: another part, on its nodes, with as many
  // GPUs on each as it holds there.
  round = roundAt(200, {7});
  actions = planPartActions({requeueTo(7, {"n1", "n2"}, 4)}, jobs, {{7, parts}}, round);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::kStart);
  EXPECT_EQ(actions[0].job_id, 11u);
  EXPECT_EQ(actions[0].nodes, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(actions[0].gpus_per_node, 2);
  // Twice as many on one node only is no part's growth: a requeue.
  round = roundAt(200, {7});
  actions = planPartActions({requeueTo(7, {"n1"}, 4)}, jobs, {{7, parts}}, round);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::kRequeue);
}

TEST(JobPartsTest, AShrinkDropsAnyOneRunningPart) {
  const std::vector<SlurmJob> jobs = {runningOn(7, {"n1", "n2", "n3"})};
  PartRound round = roundAt(400, {7});
  const auto drop_newest =
      planPartActions({requeueTo(7, {"n1", "n2"})}, jobs, {{7, twoRunningParts()}}, round);
  EXPECT_TRUE(drop_newest.empty());
  EXPECT_EQ(round.leaving, (std::map<uint32_t, PartLeave>{{7, {11, 400.0}}}));
  // Left: the newest part is cancelled, the older one stays.
  round = roundAt(410, {}, {{7, {11, 400.0}}});
  auto actions = planPartActions({}, jobs, {{7, twoRunningParts()}}, round);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::kCancel);
  EXPECT_EQ(actions[0].job_id, 11u);
  // Dropping the older part and keeping the newest: its workers leave the same way.
  round = roundAt(400, {7});
  actions = planPartActions({requeueTo(7, {"n1", "n3"})}, jobs, {{7, twoRunningParts()}}, round);
  EXPECT_TRUE(actions.empty());
  EXPECT_EQ(round.leaving, (std::map<uint32_t, PartLeave>{{7, {8, 400.0}}}));
  round = roundAt(410, {}, {{7, {8, 400.0}}});
  actions = planPartActions({}, jobs, {{7, twoRunningParts()}}, round);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].job_id, 8u);
  // Dropping both parts at once, or the job's own node: by requeue.
  round = roundAt(400, {7});
  actions = planPartActions({requeueTo(7, {"n2", "n3"})}, jobs, {{7, twoRunningParts()}}, round);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::kRequeue);
  EXPECT_TRUE(round.leaving.empty());
}

// Job 7 on n1 with part 8 on n2 and n3, its batch script on `batch_host`.
JobParts partOnTwoNodes(const std::string& batch_host) {
  JobParts parts;
  parts.running.push_back({8, {"n2", "n3"}, 2, 100, batch_host});
  return parts;
}

TEST(JobPartsTest, AShrinkToSomeOfAPartsNodesHasTheirWorkersLeaveThenWaitsForTheShrink) {
  const std::vector<SlurmJob> jobs = {runningOn(7, {"n1", "n2", "n3"})};
  const std::map<uint32_t, JobParts> parts{{7, partOnTwoNodes("n2")}};
  PartRound round = roundAt(200, {7});
  EXPECT_TRUE(planPartActions({requeueTo(7, {"n1", "n2"})}, jobs, parts, round).empty());
  const PartLeave leave{8, 200.0, {"n3"}};
  EXPECT_EQ(round.leaving, (std::map<uint32_t, PartLeave>{{7, leave}}));
  // Left (the report no longer counts n3): the job's agent shrinks the part; nothing is
  // cancelled meanwhile.
  round = roundAt(210, {}, {{7, leave}});
  EXPECT_TRUE(planPartActions({}, jobs, parts, round).empty());
  EXPECT_EQ(round.leaving, (std::map<uint32_t, PartLeave>{{7, leave}}));
  // Slurm shows the part on n2 alone: the leave is done.
  round = roundAt(215, {7}, {{7, leave}});
  const std::vector<SlurmJob> shrunk = {runningOn(7, {"n1", "n2"})};
  JobParts on_n2;
  on_n2.running.push_back({8, {"n2"}, 2, 100, "n2"});
  EXPECT_TRUE(planPartActions({}, shrunk, {{7, on_n2}}, round).empty());
  EXPECT_TRUE(round.leaving.empty());
  // Not shrunk in time: the part is cancelled.
  round = roundAt(201 + kPartLeaveTimeoutS, {}, {{7, leave}});
  const auto actions = planPartActions({}, jobs, parts, round);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::kCancel);
  EXPECT_EQ(actions[0].job_id, 8u);
}

TEST(JobPartsTest, AShrinkOffAPartsBatchHostIsARequeue) {
  const std::vector<SlurmJob> jobs = {runningOn(7, {"n1", "n2", "n3"})};
  PartRound round = roundAt(200, {7});
  auto actions =
      planPartActions({requeueTo(7, {"n1", "n2"})}, jobs, {{7, partOnTwoNodes("n3")}}, round);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::kRequeue);
  EXPECT_TRUE(round.leaving.empty());
  // Keeping it, n2's workers leave.
  actions = planPartActions({requeueTo(7, {"n1", "n3"})}, jobs, {{7, partOnTwoNodes("n3")}}, round);
  EXPECT_TRUE(actions.empty());
  EXPECT_EQ(round.leaving, (std::map<uint32_t, PartLeave>{{7, {8, 200.0, {"n2"}}}}));
}

TEST(JobPartsTest, ALeaveSavedWithoutItsPartIsTheNewestPartsLeave) {
  const std::vector<SlurmJob> jobs = {runningOn(7, {"n1", "n2", "n3"})};
  PartRound round = roundAt(410, {7}, {{7, {0, 400.0}}});
  EXPECT_TRUE(planPartActions({}, jobs, {{7, twoRunningParts()}}, round).empty());
  EXPECT_EQ(round.leaving, (std::map<uint32_t, PartLeave>{{7, {11, 400.0}}}));
}

TEST(JobPartsTest, TheNewestPartNotJoinedInTimeIsCancelled) {
  const std::vector<SlurmJob> jobs = {runningOn(7, {"n1", "n2", "n3"})};
  PartRound round = roundAt(301 + kPartJoinTimeoutS);
  const auto actions = planPartActions({requeueTo(7, {"n1", "n2", "n3", "n4"})}, jobs,
                                       {{7, twoRunningParts()}}, round);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::kCancel);
  EXPECT_EQ(actions[0].job_id, 11u);
  EXPECT_EQ(round.growth_failed, std::set<uint32_t>{7});
}

}  // namespace
}  // namespace pollux::service
