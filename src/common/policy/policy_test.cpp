// SPDX-License-Identifier: GPL-2.0-or-later
#include "policy.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "common/invalid_input.hpp"
#include "test_cluster.hpp"

namespace pollux::policy {
namespace {

using testing::adaptiveJob;
using testing::nodesOf;
using testing::rigidJob;

int gpusOf(const Decision& decision, const std::string& id) {
  const auto found = decision.allocations.find(id);
  return found == decision.allocations.end() ? 0 : found->second.allocation.totalGpus();
}

std::optional<Allocation> allocationOf(const Decision& decision, const std::string& id) {
  const auto found = decision.allocations.find(id);
  if (found == decision.allocations.end()) return std::nullopt;
  return found->second.allocation;
}

std::string typeOf(const Decision& decision, const std::string& id) {
  const auto allocation = allocationOf(decision, id);
  return allocation ? allocation->gpu_type : "";
}

// A job whose goodput barely grows (2 %) from 4 to 8 GPUs: large gradient signal.
Job flatJob(const std::string& id) {
  Job job = adaptiveJob(id, 1, 8, "t4");
  job.grad = {50.0, 20.0};
  return job;
}

TEST(PolicyTest, NoJobs) {
  Snapshot snapshot;
  snapshot.nodes = nodesOf("t4", 1, 8, "n");
  const Decision decision = schedule(snapshot);
  EXPECT_EQ(decision.stats.solver_status, "no_jobs");
  EXPECT_TRUE(decision.allocations.empty());
}

TEST(PolicyTest, PendingJobGetsGpusAndABatchSize) {
  Snapshot snapshot;
  snapshot.nodes = nodesOf("t4", 1, 8, "n");
  snapshot.jobs = {adaptiveJob("a", 1, 8, "t4")};
  const Decision decision = schedule(snapshot);
  EXPECT_EQ(decision.stats.solver_status, "optimal");
  EXPECT_GT(decision.stats.candidate_configs, 0);
  const JobDecision& a = decision.allocations.at("a");
  EXPECT_EQ(a.allocation.totalGpus(), 8);
  EXPECT_GT(a.batch_size, 0);
  EXPECT_EQ(a.batch_size, 8L * a.local_bsz * (a.accum_steps + 1));
}

TEST(PolicyTest, FairnessSplitsGpusBetweenIdenticalJobs) {
  Snapshot snapshot;
  snapshot.nodes = nodesOf("t4", 1, 8, "n");
  snapshot.jobs = {adaptiveJob("a", 1, 8, "t4"), adaptiveJob("b", 1, 8, "t4")};
  const Decision decision = schedule(snapshot);
  EXPECT_EQ(gpusOf(decision, "a"), 4);
  EXPECT_EQ(gpusOf(decision, "b"), 4);
}

TEST(PolicyTest, JobWithoutModelStartsOnItsMinimum) {
  Snapshot snapshot;
  snapshot.nodes = nodesOf("t4", 1, 8, "n");
  Job job = adaptiveJob("a", 2, 8, "t4");
  job.models.clear();
  snapshot.jobs = {job};
  const Decision decision = schedule(snapshot);
  const JobDecision& a = decision.allocations.at("a");
  EXPECT_EQ(a.allocation.totalGpus(), 2);
  EXPECT_EQ(a.batch_size, 0);
}

// flatJob "a" running on 4 of a node's 8 GPUs.
Snapshot flatJobOnHalfANode() {
  Snapshot snapshot;
  snapshot.time = 10000;
  snapshot.nodes = nodesOf("t4", 1, 8, "n");
  Job job = flatJob("a");
  job.current = Allocation{"t4", {{"n0", 4}}};
  snapshot.jobs = {job};
  return snapshot;
}

TEST(PolicyTest, SmallGainDoesNotMoveARunningJob) {
  Snapshot snapshot = flatJobOnHalfANode();
  EXPECT_EQ(gpusOf(schedule(snapshot), "a"), 4);
  snapshot.params.restart_threshold = 0.01;  // the 2 % gain is now worth a restart
  EXPECT_EQ(gpusOf(schedule(snapshot), "a"), 8);
}

TEST(PolicyTest, ARunningJobWhoseMinimumWasRaisedGrowsToIt) {
  Snapshot snapshot = flatJobOnHalfANode();
  snapshot.jobs[0].min_gpus = 8;  // the 2 % gain of 8 GPUs would not move it
  EXPECT_EQ(gpusOf(schedule(snapshot), "a"), 8);
  // Where its minimum cannot be placed, it keeps what it holds.
  Job rigid = rigidJob("r", 2);
  rigid.current = Allocation{"t4", {{"n0", 2}}};
  snapshot.jobs.push_back(rigid);
  EXPECT_EQ(gpusOf(schedule(snapshot), "a"), 4);
}

TEST(PolicyTest, BigGainMovesARunningJobOnlyAfterTheMinimumInterval) {
  Snapshot snapshot;
  snapshot.time = 10000;
  snapshot.nodes = nodesOf("t4", 1, 8, "n");
  Job job = adaptiveJob("a", 1, 8, "t4");
  job.current = Allocation{"t4", {{"n0", 4}}};
  job.last_change_time = snapshot.time - 100;
  snapshot.jobs = {job};
  snapshot.params.min_change_interval_s = 300;
  EXPECT_EQ(gpusOf(schedule(snapshot), "a"), 4);
  snapshot.jobs[0].last_change_time = snapshot.time - 400;
  EXPECT_EQ(gpusOf(schedule(snapshot), "a"), 8);
}

// Keeping a running job that may not change yet must weigh as much as starting a pending one:
// the unallocated penalty is relative to the baseline, not to the single option offered.
TEST(PolicyTest, RunningJobInsideTheMinimumIntervalIsNotPreemptedForAPendingOne) {
  Snapshot snapshot;
  snapshot.time = 10000;
  snapshot.nodes = nodesOf("t4", 1, 8, "n");
  Job running = adaptiveJob("a", 1, 8, "t4");
  running.current = Allocation{"t4", {{"n0", 8}}};
  running.last_change_time = snapshot.time;
  Job pending = adaptiveJob("b", 1, 8, "t4");
  pending.submit_time = snapshot.time;
  snapshot.jobs = {running, pending};
  const Decision decision = schedule(snapshot);
  EXPECT_EQ(gpusOf(decision, "a"), 8);
  EXPECT_EQ(gpusOf(decision, "b"), 0);
}

TEST(PolicyTest, UnchangedRunningJobStaysOnItsNodes) {
  Snapshot snapshot;
  snapshot.time = 10000;
  snapshot.nodes = nodesOf("t4", 2, 8, "n");
  Job job = adaptiveJob("a", 1, 4, "t4");
  job.current = Allocation{"t4", {{"n1", 4}}};
  snapshot.jobs = {job};
  EXPECT_EQ(schedule(snapshot).allocations.at("a").allocation, *job.current);
}

// Doubling a job that grows live on its own node is live only where the node has the room;
// elsewhere it is a move, and costs the job its restart.
TEST(PolicyTest, AJobThatGrowsLiveDoublesOnItsNodeOnlyWhereThereIsRoom) {
  Snapshot snapshot;
  snapshot.time = 10000;
  snapshot.nodes = nodesOf("t4", 2, 8, "n");
  Job job = adaptiveJob("a", 1, 8, "t4");
  job.current = Allocation{"t4", {{"n0", 4}}};
  job.grows_live = true;
  job.restart_cost_s = 1e5;  // a restart never pays
  snapshot.jobs = {job};
  EXPECT_EQ(*allocationOf(schedule(snapshot), "a"), (Allocation{"t4", {{"n0", 8}}}));
  Job rigid = rigidJob("r", 4);
  rigid.current = Allocation{"t4", {{"n0", 4}}};
  snapshot.jobs.push_back(rigid);
  EXPECT_EQ(*allocationOf(schedule(snapshot), "a"), *job.current);  // not moved to n1
}

TEST(PolicyTest, RigidWaitingJobMakesAdaptiveJobsYieldGpusAboveTheirMinimum) {
  Snapshot snapshot;
  snapshot.time = 10000;
  snapshot.nodes = nodesOf("t4", 1, 8, "n");
  Job adaptive = adaptiveJob("a", 1, 8, "t4");
  adaptive.current = Allocation{"t4", {{"n0", 8}}};
  adaptive.last_change_time = snapshot.time;  // within min_change_interval_s
  snapshot.jobs = {adaptive, rigidJob("r", 4)};
  const Decision decision = schedule(snapshot);
  EXPECT_EQ(gpusOf(decision, "r"), 4);
  EXPECT_EQ(gpusOf(decision, "a"), 4);
  EXPECT_EQ(decision.allocations.at("r").batch_size, 0);
}

TEST(PolicyTest, AJobWithPartsDropsThePartWhoseNodeAWaitingRigidJobCanTake) {
  Snapshot snapshot;
  snapshot.time = 10000;
  snapshot.nodes = nodesOf("t4", 2, 4, "n");
  Job running = rigidJob("held", 2);
  running.current = Allocation{"t4", {{"n0", 2}}};
  Job adaptive = adaptiveJob("a", 1, 8, "t4");
  adaptive.current = Allocation{"t4", {{"n0", 2}, {"n1", 2}}};
  adaptive.parts = {Allocation{"t4", {{"n1", 2}}}, Allocation{"t4", {{"n0", 2}}}};
  adaptive.grows_live = true;
  adaptive.live_resize_cost_s = 0.5;
  adaptive.last_change_time = snapshot.time;  // within min_change_interval_s
  snapshot.jobs = {running, adaptive, rigidJob("r", 4)};
  const Decision decision = schedule(snapshot);
  // Its newest part is on n0, where the rigid job would not fit: it drops the one on n1.
  EXPECT_EQ(allocationOf(decision, "a"), (Allocation{"t4", {{"n0", 2}}}));
  EXPECT_EQ(allocationOf(decision, "r"), (Allocation{"t4", {{"n1", 4}}}));
}

TEST(PolicyTest, AJobStartsOnGpusFreeAtOnceBeforeThoseAMoveStillLeaves) {
  Snapshot snapshot;
  snapshot.time = 10000;
  snapshot.nodes = nodesOf("t4", 3, 4, "n");
  // A job moved from n0 to n2 in an earlier round; its old part leaves n0 once its target's
  // workers have joined.
  Job moved = rigidJob("moved", 4);
  moved.current = Allocation{"t4", {{"n2", 4}}};
  moved.leaving = Allocation{"t4", {{"n0", 4}}};
  snapshot.jobs = {moved, rigidJob("r", 4)};
  EXPECT_EQ(allocationOf(schedule(snapshot), "r"), (Allocation{"t4", {{"n1", 4}}}));
  snapshot.jobs[0].leaving.reset();
  EXPECT_EQ(allocationOf(schedule(snapshot), "r"), (Allocation{"t4", {{"n0", 4}}}));
}

TEST(PolicyTest, RigidJobWaitingForAnotherTypeDoesNotShrinkAdaptiveJobs) {
  Snapshot snapshot;
  snapshot.time = 10000;
  snapshot.nodes = nodesOf("a100", 1, 8, "a");
  const auto v100 = nodesOf("v100", 1, 4, "v");
  snapshot.nodes.insert(snapshot.nodes.end(), v100.begin(), v100.end());
  Job adaptive = adaptiveJob("a", 1, 8, "a100");
  adaptive.current = Allocation{"a100", {{"a0", 8}}};
  adaptive.last_change_time = snapshot.time;  // within min_change_interval_s
  Job rigid = rigidJob("r", 4);
  rigid.gpu_type = "v100";
  // A pending adaptive job would gladly take half of the a100s, were "a" free to shrink.
  snapshot.jobs = {adaptive, adaptiveJob("b", 1, 8, "a100"), rigid};
  const Decision decision = schedule(snapshot);
  EXPECT_EQ(decision.allocations.at("a").allocation, *adaptive.current);
}

TEST(PolicyTest, RigidWaitingJobDoesNotTakeAdaptiveMinimums) {
  Snapshot snapshot;
  snapshot.nodes = nodesOf("t4", 1, 8, "n");
  snapshot.jobs = {adaptiveJob("a", 4, 8, "t4"), adaptiveJob("b", 4, 8, "t4"), rigidJob("r", 8)};
  const Decision decision = schedule(snapshot);
  EXPECT_EQ(gpusOf(decision, "a"), 4);
  EXPECT_EQ(gpusOf(decision, "b"), 4);
  EXPECT_EQ(gpusOf(decision, "r"), 0);
}

TEST(PolicyTest, RunningRigidJobKeepsItsAllocation) {
  Snapshot snapshot;
  snapshot.nodes = nodesOf("t4", 1, 8, "n");
  Job rigid = rigidJob("r", 2);
  rigid.current = Allocation{"t4", {{"n0", 2}}};
  snapshot.jobs = {rigid, adaptiveJob("a", 1, 8, "t4")};
  const Decision decision = schedule(snapshot);
  EXPECT_EQ(decision.allocations.at("r").allocation, *rigid.current);
  EXPECT_EQ(gpusOf(decision, "a"), 4);
}

TEST(PolicyTest, AJobGoesWhereItsCpusAreAndWaitsWhereNoNodeHasThem) {
  Snapshot snapshot;
  snapshot.nodes = nodesOf("t4", 2, 4, "n");
  snapshot.nodes[0].cpus = 8;
  snapshot.nodes[1].cpus = 8;
  Job rigid = rigidJob("r", 1);
  rigid.current = Allocation{"t4", {{"n0", 1}}};
  rigid.demand.cpus = 6;  // leaves n0 two CPUs and three GPUs
  Job wide = adaptiveJob("wide", 1, 4, "t4");
  wide.demand.cpus = 4;
  Job huge = adaptiveJob("huge", 1, 4, "t4");
  huge.demand.cpus = 16;  // more than any node has
  snapshot.jobs = {rigid, wide, huge};
  const Decision decision = schedule(snapshot);
  ASSERT_EQ(gpusOf(decision, "wide"), 4);
  EXPECT_EQ(decision.allocations.at("wide").allocation.nodes.count("n1"), 1u);
  EXPECT_EQ(gpusOf(decision, "huge"), 0);
  EXPECT_EQ(decision.stats.placement_fallbacks, 0);  // huge's GPUs were never chosen
}

TEST(PolicyTest, AJobRunsOnlyInItsPartition) {
  Snapshot snapshot;
  snapshot.nodes = nodesOf("t4", 1, 4, "t");
  const auto a100 = nodesOf("a100", 1, 4, "a");
  snapshot.nodes.insert(snapshot.nodes.end(), a100.begin(), a100.end());
  snapshot.params.relative_speeds = {{"t4", 1.0}, {"a100", 3.0}};
  snapshot.partitions = {{"t4s", {"t0"}}, {"none", {}}};
  Job in_t4s = adaptiveJob("a", 1, 4, "t4");
  in_t4s.partition = "t4s";  // would take the faster a100 anywhere else
  Job nowhere = adaptiveJob("b", 1, 4, "t4");
  nowhere.partition = "none";
  snapshot.jobs = {in_t4s, nowhere};
  const Decision decision = schedule(snapshot);
  EXPECT_EQ(decision.allocations.at("a").allocation, (Allocation{"t4", {{"t0", 4}}}));
  EXPECT_EQ(gpusOf(decision, "b"), 0);
  snapshot.jobs[1].partition = "gone";
  EXPECT_THROW(schedule(snapshot), InvalidInput);
}

TEST(PolicyTest, EstimatedFasterTypeIsPreferred) {
  Snapshot snapshot;
  snapshot.nodes = nodesOf("t4", 1, 4, "t");
  const auto a100 = nodesOf("a100", 1, 4, "a");
  snapshot.nodes.insert(snapshot.nodes.end(), a100.begin(), a100.end());
  snapshot.params.relative_speeds = {{"t4", 1.0}, {"a100", 3.0}};
  snapshot.jobs = {adaptiveJob("a", 1, 4, "t4")};
  EXPECT_EQ(schedule(snapshot).allocations.at("a").allocation.gpu_type, "a100");
}

// One node of `slow_gpus` k80 GPUs and one of `fast_gpus` v100 GPUs, v100 3x as fast (the
// slower type sorts first, where the solver would break a tie).
Snapshot twoTypeSnapshot(int slow_gpus, int fast_gpus) {
  Snapshot snapshot;
  snapshot.nodes = nodesOf("k80", 1, slow_gpus, "k");
  const auto v100 = nodesOf("v100", 1, fast_gpus, "v");
  snapshot.nodes.insert(snapshot.nodes.end(), v100.begin(), v100.end());
  snapshot.params.relative_speeds = {{"k80", 1.0}, {"v100", 3.0}};
  return snapshot;
}

Job modelFreeJob(const std::string& id) {
  Job job = adaptiveJob(id, 1, 4, "k80");
  job.models.clear();
  return job;
}

TEST(PolicyTest, JobWithoutModelStartsOnTheFastestType) {
  for (const bool fast_node_first : {false, true}) {
    Snapshot snapshot = twoTypeSnapshot(4, 4);
    if (fast_node_first) std::reverse(snapshot.nodes.begin(), snapshot.nodes.end());
    snapshot.jobs = {modelFreeJob("a")};
    const Decision decision = schedule(snapshot);
    const JobDecision& a = decision.allocations.at("a");
    EXPECT_EQ(a.allocation.gpu_type, "v100");
    EXPECT_EQ(a.allocation.totalGpus(), 1);
  }
}

TEST(PolicyTest, JobsWithoutModelTakeTheSlowerTypeWhenTheFastestIsFull) {
  Snapshot snapshot = twoTypeSnapshot(4, 1);
  snapshot.jobs = {modelFreeJob("a"), modelFreeJob("b")};
  const Decision decision = schedule(snapshot);
  std::multiset<std::string> types;
  for (const char* id : {"a", "b"}) types.insert(decision.allocations.at(id).allocation.gpu_type);
  EXPECT_EQ(types, (std::multiset<std::string>{"k80", "v100"}));
}

// The snapshot of the next round, `seconds` later, once `decision` was applied: a running job
// whose allocation changed (or that lost it) was requeued.
Snapshot nextRound(Snapshot snapshot, const Decision& decision, double seconds) {
  for (auto& job : snapshot.jobs) {
    const auto next = allocationOf(decision, job.id);
    if (next == job.current) continue;
    if (job.current) ++job.restarts;
    job.current = next;
    job.last_change_time = snapshot.time;
  }
  snapshot.time += seconds;
  return snapshot;
}

// Two a100 nodes, one held by a rigid job, and two idle v100 nodes, a100 3x as fast; job "a"
// runs on the other a100 node, free to change, and "b", the same job, arrives.
Snapshot fastestGpusTakenSnapshot(bool with_model) {
  Snapshot snapshot;
  snapshot.time = 10000;
  snapshot.nodes = nodesOf("a100", 2, 4, "a");
  const auto v100 = nodesOf("v100", 2, 4, "v");
  snapshot.nodes.insert(snapshot.nodes.end(), v100.begin(), v100.end());
  snapshot.params.relative_speeds = {{"a100", 3.0}};
  Job rigid = rigidJob("r", 4);
  rigid.current = Allocation{"a100", {{"a0", 4}}};
  Job running = adaptiveJob("a", 4, 4, "a100");
  if (!with_model) running.models.clear();
  running.current = Allocation{"a100", {{"a1", 4}}};
  running.last_change_time = snapshot.time - 100;
  Job arriving = running;
  arriving.id = "b";
  arriving.current.reset();
  arriving.submit_time = snapshot.time;
  snapshot.jobs = {rigid, running, arriving};
  return snapshot;
}

// Site policy study, section 3: a running job (without a model: offered only its current GPUs)
// was worth less than the fastest type to the same job pending, so the two swapped the free
// a100s every round while the v100s stayed idle.
TEST(PolicyTest, RunningAndArrivingJobsDoNotSwapTheFastestGpus) {
  for (const bool with_model : {false, true}) {
    SCOPED_TRACE(with_model ? "with a model" : "without a model");
    Snapshot snapshot = fastestGpusTakenSnapshot(with_model);
    const auto running = snapshot.jobs[1].current;
    for (int round = 1; round <= 4; ++round) {
      SCOPED_TRACE("round " + std::to_string(round));
      const Decision decision = schedule(snapshot);
      EXPECT_EQ(allocationOf(decision, "a"), running);
      EXPECT_EQ(typeOf(decision, "b"), "v100");
      EXPECT_EQ(gpusOf(decision, "b"), 4);
      snapshot = nextRound(snapshot, decision, 2);
    }
    for (const auto& job : snapshot.jobs) EXPECT_EQ(job.restarts, 0) << job.id;
  }
}

// Keeping a running job and starting the same job pending weigh alike: the restart threshold
// decides for the running one, whichever comes first.
TEST(PolicyTest, PreemptionMustBeatKeepingByTheRestartThreshold) {
  for (const bool running_first : {true, false}) {
    Snapshot snapshot;
    snapshot.time = 10000;
    snapshot.nodes = nodesOf("a100", 1, 4, "a");
    Job running = adaptiveJob("a", 4, 4, "a100");
    running.current = Allocation{"a100", {{"a0", 4}}};
    Job arriving = adaptiveJob("b", 4, 4, "a100");
    arriving.submit_time = snapshot.time;
    snapshot.jobs = {running, arriving};
    if (!running_first) std::swap(snapshot.jobs[0], snapshot.jobs[1]);
    const Decision decision = schedule(snapshot);
    EXPECT_EQ(allocationOf(decision, "a"), running.current) << running_first;
    EXPECT_EQ(gpusOf(decision, "b"), 0) << running_first;
  }
}

TEST(PolicyTest, ARunningJobWhoseTypeWasChangedMovesToIt) {
  Snapshot snapshot = twoTypeSnapshot(4, 4);
  snapshot.time = 10000;
  Job job = adaptiveJob("a", 2, 2, "k80");
  job.models["v100"] = job.models.at("k80");
  job.current = Allocation{"v100", {{"v0", 2}}};
  job.gpu_type = "k80";  // three times slower than what it holds: a move only its type makes
  snapshot.jobs = {job};
  EXPECT_EQ(schedule(snapshot).allocations.at("a").allocation.gpu_type, "k80");
  // Where nothing of its type can be placed, it keeps what it holds.
  Job rigid = rigidJob("r", 4);
  rigid.current = Allocation{"k80", {{"k0", 4}}};
  snapshot.jobs.push_back(rigid);
  EXPECT_EQ(schedule(snapshot).allocations.at("a").allocation, *job.current);
}

TEST(PolicyTest, RunningJobWithoutModelMovesToTheFastestTypeOnlyAfterTheMinimumInterval) {
  Snapshot snapshot = twoTypeSnapshot(4, 4);
  snapshot.time = 10000;
  Job job = modelFreeJob("a");
  job.current = Allocation{"k80", {{"k0", 1}}};
  job.last_change_time = snapshot.time - 10;
  snapshot.jobs = {job};
  EXPECT_EQ(schedule(snapshot).allocations.at("a").allocation, *job.current);
  snapshot.jobs[0].last_change_time = snapshot.time - 100;
  EXPECT_EQ(schedule(snapshot).allocations.at("a").allocation, (Allocation{"v100", {{"v0", 1}}}));
}

// Without a model, GPUs above min_gpus seem worth nothing to the job: it gives them up only
// to a waiting rigid job, not every round for nothing.
TEST(PolicyTest, RunningJobWithoutModelShrinksOnlyForAWaitingRigidJob) {
  Snapshot snapshot = twoTypeSnapshot(4, 4);
  snapshot.time = 10000;
  Job job = modelFreeJob("a");
  job.current = Allocation{"v100", {{"v0", 4}}};
  snapshot.jobs = {job};
  EXPECT_EQ(schedule(snapshot).allocations.at("a").allocation, *job.current);
  Job rigid = rigidJob("r", 3);
  rigid.gpu_type = "v100";
  snapshot.jobs.push_back(rigid);
  const Decision decision = schedule(snapshot);
  EXPECT_EQ(gpusOf(decision, "a"), 1);
  EXPECT_EQ(gpusOf(decision, "r"), 3);
}

Snapshot largeSnapshot() {
  Snapshot snapshot;
  snapshot.time = 100000;
  for (const char* type : {"t4", "v100", "a100"}) {
    const auto nodes = nodesOf(type, 64, 8, type);
    snapshot.nodes.insert(snapshot.nodes.end(), nodes.begin(), nodes.end());
  }
  snapshot.params.relative_speeds = {{"t4", 1.0}, {"v100", 2.0}, {"a100", 3.5}};
  for (int i = 0; i < 1500; ++i) {
    Job job = adaptiveJob("j" + std::to_string(i), 1 + i % 3, 4 + i % 60, i % 2 ? "t4" : "v100");
    job.grad = {0.2 + (i % 17), 10.0 + (i % 13)};
    job.submit_time = i;
    if (i < 64) job.current = Allocation{"t4", {{"t4" + std::to_string(i), 8}}};
    snapshot.jobs.push_back(job);
  }
  return snapshot;
}

TEST(PolicyTest, SolverTimeoutKeepsCurrentAllocations) {
  Snapshot snapshot = largeSnapshot();
  snapshot.params.time_limit_s = 1e-3;
  const Decision decision = schedule(snapshot);
  EXPECT_EQ(decision.stats.solver_status, "time_limit");
  EXPECT_TRUE(decision.stats.kept_current);
  ASSERT_EQ(decision.allocations.size(), 64u);
  for (const auto& job : snapshot.jobs) {
    if (job.current) {
      EXPECT_EQ(decision.allocations.at(job.id).allocation, *job.current);
    }
  }
}

TEST(PolicyTest, InconsistentSnapshotThrows) {
  Snapshot snapshot;
  snapshot.nodes = nodesOf("t4", 1, 8, "n");
  Job job = adaptiveJob("a", 1, 8, "t4");
  job.current = Allocation{"t4", {{"gone", 2}}};
  snapshot.jobs = {job};
  EXPECT_THROW(schedule(snapshot), InvalidInput);
}

}  // namespace
}  // namespace pollux::policy
