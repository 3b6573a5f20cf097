// SPDX-License-Identifier: GPL-2.0-or-later
#include "snapshot_builder.hpp"
#include "site_policy.hpp"

#include <gtest/gtest.h>

#include "common/policy/policy.hpp"

namespace pollux::service {
namespace {

std::vector<SlurmNode> cluster() {
  return {{"n1", {"a100", 4}, true}, {"n2", {"a100", 4}, true}, {"n3", {"v100", 4}, false},
          {"cpu1", {"", 0}, true}};
}

SlurmJob runningOn(uint32_t id, const std::string& node, int gpus, std::vector<SlurmNode>& nodes) {
  SlurmJob running;
  running.id = id;
  running.state = JobState::kRunning;
  running.adaptive = schema::AdaptiveRequest{};
  running.nodes = {node};
  running.num_nodes = 1;
  running.gpus_per_node = GpuGres{"a100", gpus};
  for (auto& slurm : nodes) {
    if (slurm.name == node) slurm.gpus_used += gpus;
  }
  return running;
}

SlurmJob job(uint32_t id, JobState state, std::optional<schema::AdaptiveRequest> adaptive) {
  SlurmJob j;
  j.id = id;
  j.state = state;
  j.adaptive = adaptive;
  j.submit_time = 10;
  return j;
}

TEST(SnapshotBuilderTest, NodesJobsAndSpeeds) {
  config::PolicyConfig config;
  config.policy.relative_speeds["a100"] = 3;
  SlurmJob running = job(1, JobState::kRunning, schema::AdaptiveRequest{2, 8, std::nullopt});
  running.nodes = {"n3"};
  running.gpus_per_node = GpuGres{"", 2};
  running.start_time = 50;
  SlurmJob pending = job(2, JobState::kPending, schema::AdaptiveRequest{1, std::nullopt, "a100"});
  SlurmJob rigid = job(3, JobState::kPending, std::nullopt);
  rigid.requested_gpus = GpuGres{"v100", 4};  // --gres=gpu:v100:2 -N 2, --gpus=v100:4, ...
  SlurmJob cpu_only = job(4, JobState::kPending, std::nullopt);
  std::vector<SlurmNode> nodes = cluster();
  nodes[2].gpus_used = 2;
  const auto snapshot = buildSnapshot(100, nodes, {running, pending, rigid, cpu_only}, {}, config);

  ASSERT_EQ(snapshot.nodes.size(), 3u);  // cpu1 has no GPUs
  EXPECT_EQ(snapshot.nodes[2].name, "n3");
  EXPECT_EQ(snapshot.nodes[2].gpus, 2);  // drained: only what its running job holds
  EXPECT_DOUBLE_EQ(snapshot.params.relative_speeds.at("a100"), 3);
  EXPECT_DOUBLE_EQ(snapshot.params.relative_speeds.at("v100"), 1);  // default speed

  ASSERT_EQ(snapshot.jobs.size(), 3u);  // the CPU-only rigid job does not compete for GPUs
  const policy::Job& first = snapshot.jobs[0];
  EXPECT_TRUE(first.adaptive);
  EXPECT_EQ(first.min_gpus, 2);
  EXPECT_EQ(first.max_gpus, 8);
  ASSERT_TRUE(first.current.has_value());
  EXPECT_EQ(first.current->gpu_type, "v100");  // untyped request, typed by its node
  EXPECT_EQ(first.current->nodes.at("n3"), 2);
  EXPECT_DOUBLE_EQ(first.last_change_time, 50);
  EXPECT_TRUE(first.models.empty());  // no report yet
  const policy::Job& second = snapshot.jobs[1];
  EXPECT_EQ(second.max_gpus, 10);  // the cluster's GPUs
  EXPECT_EQ(*second.gpu_type, "a100");
  const policy::Job& third = snapshot.jobs[2];
  EXPECT_FALSE(third.adaptive);
  EXPECT_EQ(third.min_gpus, 4);
  EXPECT_EQ(third.max_gpus, 4);
  EXPECT_EQ(*third.gpu_type, "v100");
}

TEST(SnapshotBuilderTest, ReportsAndRecordsFeedTheModel) {
  JobRecord record;
  record.restarts = 2;
  record.last_change_time = 80;
  schema::GoodputReport report;
  report.perf_params["a100"] = {0.01, 0.001, 0.1, 0.01, 0.05, 0.005, 1.5};
  report.grad = {1, 3};
  report.limits = {64, 1024, 16, 128, true};
  report.restart_cost_s = 40;
  record.report = report;
  const auto snapshot = buildSnapshot(
      100, cluster(), {job(1, JobState::kPending, schema::AdaptiveRequest{})}, {{"1", record}},
      config::PolicyConfig{});
  const policy::Job& built = snapshot.jobs.at(0);
  EXPECT_EQ(built.restarts, 2);
  EXPECT_DOUBLE_EQ(built.last_change_time, 80);
  EXPECT_DOUBLE_EQ(built.restart_cost_s, 40);
  EXPECT_EQ(built.limits.max_batch_size, 1024);
  EXPECT_EQ(built.models.count("a100"), 1u);
}

TEST(SnapshotBuilderTest, AJobsJoinersTakeWhatTheyTookLastElseItsRestartCost) {
  JobRecord record;
  schema::GoodputReport report;
  report.grad = {1, 3};
  report.limits = {64, 1024, 16, 128, true};
  report.restart_cost_s = 40;
  report.in_place_resize = true;
  report.elastic = true;  // its workers join live
  record.report = report;
  const auto build = [&] {
    return buildSnapshot(100, cluster(), {job(1, JobState::kPending, schema::AdaptiveRequest{})},
                         {{"1", record}}, config::PolicyConfig{})
        .jobs.at(0);
  };
  ASSERT_TRUE(build().grows_live);
  EXPECT_DOUBLE_EQ(build().join_startup_s, 40);  // none joined yet
  record.report->join_startup_s = 6.5;
  EXPECT_DOUBLE_EQ(build().join_startup_s, 6.5);
}

TEST(SnapshotBuilderTest, AJobWhoseTrainingFinishedKeepsWhatItHolds) {
  std::vector<SlurmNode> nodes = cluster();
  const SlurmJob running = runningOn(1, "n1", 2, nodes);
  JobRecord record;
  record.lifecycle.phase = Phase::kRunning;
  const auto build = [&] {
    return buildSnapshot(100, nodes, {running}, {{"1", record}}, config::PolicyConfig{}).jobs.at(0);
  };
  EXPECT_EQ(build().max_gpus, 8);  // the policy may resize it up to the usable GPUs
  record.lifecycle.phase = Phase::kFinishing;
  const policy::Job finishing = build();
  EXPECT_EQ(finishing.min_gpus, 2);
  EXPECT_EQ(finishing.max_gpus, 2);
  EXPECT_EQ(finishing.gpu_type, "a100");
  ASSERT_TRUE(finishing.current.has_value());
  EXPECT_EQ(finishing.current->nodes.at("n1"), 2);
}

TEST(SnapshotBuilderTest, DeclaredLengthFromTheReportPastItsTargetToo) {
  JobRecord record;
  schema::GoodputReport report;
  report.grad = {1, 3};
  report.limits = {64, 1024, 16, 128, true};
  record.report = report;
  const auto build = [&] {
    return buildSnapshot(100, cluster(), {job(1, JobState::kPending, schema::AdaptiveRequest{})},
                         {{"1", record}}, config::PolicyConfig{})
        .jobs.at(0);
  };
  EXPECT_FALSE(build().length.has_value());  // undeclared
  record.report->length = policy::DeclaredLength{2500, 10000};
  ASSERT_TRUE(build().length.has_value());
  EXPECT_DOUBLE_EQ(build().length->progress, 2500);
  EXPECT_DOUBLE_EQ(build().length->target, 10000);
  // Past its target: the policy doubles it (policy::DeclaredLength::remaining).
  record.report->length = policy::DeclaredLength{12000, 10000};
  ASSERT_TRUE(build().length.has_value());
  EXPECT_DOUBLE_EQ(build().length->remaining(), 8000);
}

TEST(SnapshotBuilderTest, ObjectiveSettingsReachTheSnapshot) {
  config::PolicyConfig config;
  config.policy.objective = policy::Objective::kGoodput;
  config.policy.jct_guard = 4;
  const auto snapshot = buildSnapshot(100, cluster(), {}, {}, config);
  EXPECT_EQ(snapshot.params.objective, policy::Objective::kGoodput);
  EXPECT_DOUBLE_EQ(snapshot.params.jct_guard, 4);
}

TEST(SnapshotBuilderTest, JobWaitingForItsBeginTimeIsNotPlacedEarly) {
  SlurmJob later = job(1, JobState::kPending, schema::AdaptiveRequest{});
  later.eligible_time = 3700;
  JobStore store;  // first seen pending with a begin time ahead: its user's --begin
  store.observe({later}, 0);
  std::map<std::string, std::string> waiting;
  EXPECT_TRUE(buildSnapshot(100, cluster(), {later}, store.records(), config::PolicyConfig{}, {},
                            &waiting)
                  .jobs.empty());
  EXPECT_EQ(waiting["1"], "BeginTime");
  later.eligible_time = kPolluxHoldTime;  // held by Pollux since: still the user's begin time
  EXPECT_TRUE(buildSnapshot(100, cluster(), {later}, store.records(), config::PolicyConfig{})
                  .jobs.empty());
  EXPECT_EQ(buildSnapshot(3800, cluster(), {later}, store.records(), config::PolicyConfig{})
                .jobs.size(),
            1u);
  later.eligible_time = 3700;
  JobRecord requeued_by_us;
  requeued_by_us.last_change_time = 90;
  EXPECT_EQ(buildSnapshot(100, cluster(), {later}, {{"1", requeued_by_us}}, config::PolicyConfig{})
                .jobs.size(),
            1u);
}

TEST(SnapshotBuilderTest, APlacedPendingJobKeepsItsPlacementAsCurrent) {
  SlurmJob starting = job(1, JobState::kPending, schema::AdaptiveRequest{});
  starting.requested_nodes = {"n1", "n2"};
  starting.gpus_per_node = GpuGres{"", 4};
  starting.eligible_time = 95;
  auto snapshot = buildSnapshot(100, cluster(), {starting}, {}, config::PolicyConfig{});
  ASSERT_EQ(snapshot.jobs.size(), 1u);
  ASSERT_TRUE(snapshot.jobs[0].current);
  EXPECT_EQ(*snapshot.jobs[0].current, (policy::Allocation{"a100", {{"n1", 4}, {"n2", 4}}}));
  starting.held = true;  // held by its user since: not for the policy at all
  starting.state_reason = "JobHeldUser";
  snapshot = buildSnapshot(100, cluster(), {starting}, {}, config::PolicyConfig{});
  EXPECT_TRUE(snapshot.jobs.empty());
  starting.held = false;  // Slurm refuses to start it there: not current, placed anew
  starting.state_reason = "QOSMaxGRESPerUser";
  snapshot = buildSnapshot(100, cluster(), {starting}, {}, config::PolicyConfig{});
  ASSERT_EQ(snapshot.jobs.size(), 1u);
  EXPECT_FALSE(snapshot.jobs[0].current);
}

TEST(SnapshotBuilderTest, APlacementPushedOutBySlurmsRequeueDelayStands) {
  // Placed while its requeue completed; Slurm then set its begin time 2 minutes ahead.
  SlurmJob requeued = job(1, JobState::kPending, schema::AdaptiveRequest{});
  requeued.requested_nodes = {"n1", "n2"};
  requeued.gpus_per_node = GpuGres{"", 1};
  requeued.eligible_time = 221;
  JobRecord record;
  record.last_change_time = 99;
  auto snapshot = buildSnapshot(100, cluster(), {requeued}, {{"1", record}}, config::PolicyConfig{});
  ASSERT_EQ(snapshot.jobs.size(), 1u);
  ASSERT_TRUE(snapshot.jobs[0].current);
  EXPECT_EQ(*snapshot.jobs[0].current, (policy::Allocation{"a100", {{"n1", 1}, {"n2", 1}}}));
}

TEST(SnapshotBuilderTest, APlacementOnANodeThatWentDownIsRedone) {
  SlurmJob starting = job(1, JobState::kPending, schema::AdaptiveRequest{});
  starting.requested_nodes = {"n1", "n3"};  // n3 is not usable
  starting.gpus_per_node = GpuGres{"", 4};
  starting.eligible_time = 95;
  const auto snapshot = buildSnapshot(100, cluster(), {starting}, {}, config::PolicyConfig{});
  ASSERT_EQ(snapshot.jobs.size(), 1u);
  EXPECT_FALSE(snapshot.jobs[0].current);
  EXPECT_NO_THROW(policy::schedule(snapshot));
}

TEST(SnapshotBuilderTest, ANodeWithoutFreeCpusOffersOnlyTheGpusInUse) {
  std::vector<SlurmNode> nodes = cluster();
  nodes[0].free_cpus = 0;  // n1
  SlurmJob running = job(1, JobState::kRunning, schema::AdaptiveRequest{});
  running.nodes = {"n1"};
  running.num_nodes = 1;
  running.gpus_per_node = GpuGres{"a100", 1};
  const auto snapshot = buildSnapshot(100, nodes, {running}, {}, config::PolicyConfig{});
  ASSERT_EQ(snapshot.nodes.size(), 2u);
  EXPECT_EQ(snapshot.nodes[0].name, "n1");
  EXPECT_EQ(snapshot.nodes[0].gpus, 1);
  EXPECT_EQ(snapshot.nodes[1].gpus, 4);  // n2
}

TEST(SnapshotBuilderTest, ANodeNotRegisteredSinceARestartOffersOnlyTheGpusInUse) {
  std::vector<SlurmNode> nodes = cluster();
  nodes[0].registered = false;  // n1, shown in its saved state
  const SlurmJob running = runningOn(1, "n1", 1, nodes);
  const auto snapshot = buildSnapshot(100, nodes, {running}, {}, config::PolicyConfig{});
  ASSERT_EQ(snapshot.nodes.size(), 2u);
  EXPECT_EQ(snapshot.nodes[0].name, "n1");
  EXPECT_EQ(snapshot.nodes[0].gpus, 1);
  EXPECT_EQ(snapshot.nodes[1].gpus, 4);  // n2
}

TEST(SnapshotBuilderTest, APlacementOnANodeWithoutFreeCpusIsRedone) {
  std::vector<SlurmNode> nodes = cluster();
  nodes[0].free_cpus = 0;  // n1: two 1-GPU jobs took both CPUs; a third was placed there too
  std::vector<SlurmJob> jobs;
  for (uint32_t id : {1, 2}) {
    SlurmJob running = job(id, JobState::kRunning, schema::AdaptiveRequest{});
    running.nodes = {"n1"};
    running.num_nodes = 1;
    running.gpus_per_node = GpuGres{"a100", 1};
    jobs.push_back(running);
  }
  SlurmJob starting = job(3, JobState::kPending, schema::AdaptiveRequest{});
  starting.requested_nodes = {"n1"};
  starting.gpus_per_node = GpuGres{"", 1};
  starting.eligible_time = 95;
  jobs.push_back(starting);
  const auto snapshot = buildSnapshot(100, nodes, jobs, {}, config::PolicyConfig{});
  ASSERT_EQ(snapshot.jobs.size(), 3u);
  EXPECT_FALSE(snapshot.jobs[2].current);
  EXPECT_NO_THROW(policy::schedule(snapshot));  // it used to fail: n1 offers 2, jobs hold 3
}

TEST(SnapshotBuilderTest, NodesOfferTheCpusAndMemoryNoJobHoldsPlusWhatTheirJobsHold) {
  std::vector<SlurmNode> nodes = cluster();
  nodes[0].free_cpus = 2;  // n1
  nodes[0].memory_mb = 256000;
  nodes[0].free_memory_mb = 96000;
  nodes[1].memory_mb = 256000;  // n2: one job holds all its memory
  nodes[1].free_memory_mb = 0;
  SlurmJob on_n1 = runningOn(1, "n1", 2, nodes);
  on_n1.demand.cpus_per_gpu = 8;
  on_n1.demand.memory_mb_per_gpu = 64000;
  SlurmJob on_n2 = runningOn(2, "n2", 1, nodes);
  on_n2.demand.whole_node_memory = true;
  SlurmJob rigid_on_n2 = on_n2;
  rigid_on_n2.adaptive.reset();
  auto snapshot = buildSnapshot(100, nodes, {on_n1, on_n2}, {}, config::PolicyConfig{});
  ASSERT_EQ(snapshot.nodes.size(), 2u);
  EXPECT_EQ(snapshot.nodes[0].cpus, 2 + 16);
  EXPECT_EQ(snapshot.nodes[0].memory_mb, 96000 + 128000);
  EXPECT_EQ(snapshot.nodes[1].memory_mb, 256000);  // the adaptive job's: all of it
  snapshot = buildSnapshot(100, nodes, {on_n1, rigid_on_n2}, {}, config::PolicyConfig{});
  EXPECT_EQ(snapshot.nodes[1].memory_mb, 0);  // a rigid job's: none for the policy's jobs
  EXPECT_EQ(snapshot.jobs[0].demand.cpusFor(2), 16);  // the job's request reaches the policy
  EXPECT_FALSE(cluster()[0].memory_mb.has_value());   // memory not consumable: no limit
}

TEST(SnapshotBuilderTest, APlacementWhoseCpusOrMemoryAreGoneIsRedone) {
  std::vector<SlurmNode> nodes = cluster();
  nodes[0].free_cpus = 6;  // n1
  nodes[0].memory_mb = 64000;
  nodes[0].free_memory_mb = 64000;
  SlurmJob first = job(1, JobState::kPending, schema::AdaptiveRequest{});
  first.requested_nodes = {"n1"};
  first.gpus_per_node = GpuGres{"", 2};
  first.eligible_time = 95;
  first.demand.cpus = 4;
  first.demand.memory_mb = 16000;
  SlurmJob second = first;  // placed beside it: 8 CPUs wanted, 6 free
  second.id = 2;
  SlurmJob whole = first;  // wants all of n1's memory, which the first job claims part of
  whole.id = 3;
  whole.demand.cpus = 1;
  whole.demand.whole_node_memory = true;
  const auto snapshot = buildSnapshot(100, nodes, {first, second, whole}, {}, config::PolicyConfig{});
  ASSERT_EQ(snapshot.jobs.size(), 3u);
  EXPECT_TRUE(snapshot.jobs[0].current);
  EXPECT_FALSE(snapshot.jobs[1].current);
  EXPECT_FALSE(snapshot.jobs[2].current);
  EXPECT_NO_THROW(policy::schedule(snapshot));
}

TEST(SnapshotBuilderTest, APlacementWhoseGpusARunningJobTookIsRedone) {
  std::vector<SlurmNode> nodes = cluster();
  SlurmJob rigid = runningOn(1, "n1", 2, nodes);  // backfill started it there
  rigid.adaptive.reset();
  SlurmJob starting = job(2, JobState::kPending, schema::AdaptiveRequest{});
  starting.requested_nodes = {"n1"};
  starting.gpus_per_node = GpuGres{"", 4};
  starting.eligible_time = 95;
  const auto snapshot = buildSnapshot(100, nodes, {rigid, starting}, {}, config::PolicyConfig{});
  ASSERT_EQ(snapshot.jobs.size(), 1u);
  EXPECT_FALSE(snapshot.jobs[0].current);
  EXPECT_NO_THROW(policy::schedule(snapshot));
}

TEST(SnapshotBuilderTest, GpusRunningRigidJobsHoldAreNotFreeHoweverTheyAskedForThem) {
  std::vector<SlurmNode> nodes = cluster();
  nodes[0].gpus_used = 3;  // n1: a rigid --gpus=3 job (no per-node request to read)
  nodes[1].gpus_used = 1;  // n2: a job still completing
  SlurmJob per_job = job(1, JobState::kRunning, std::nullopt);
  per_job.nodes = {"n1"};
  per_job.requested_gpus = GpuGres{"", 3};
  SlurmJob adaptive = runningOn(2, "n1", 1, nodes);  // n1 is now full
  const auto snapshot = buildSnapshot(100, nodes, {per_job, adaptive}, {}, config::PolicyConfig{});
  ASSERT_EQ(snapshot.nodes.size(), 2u);
  EXPECT_EQ(snapshot.nodes[0].gpus, 1);  // n1: only what the adaptive job holds
  EXPECT_EQ(snapshot.nodes[1].gpus, 3);  // n2
  ASSERT_EQ(snapshot.jobs.size(), 1u);   // the rigid job is no decision of the policy's
  EXPECT_EQ(snapshot.jobs[0].id, "2");
  EXPECT_NO_THROW(policy::schedule(snapshot));
}

TEST(SnapshotBuilderTest, AJobSlurmHasNotCountedYetStillHoldsItsGpus) {
  std::vector<SlurmNode> nodes = cluster();
  SlurmJob adaptive = runningOn(1, "n1", 2, nodes);
  nodes[0].gpus_used = 0;  // started after the nodes were read
  const auto snapshot = buildSnapshot(100, nodes, {adaptive}, {}, config::PolicyConfig{});
  EXPECT_EQ(snapshot.nodes[0].gpus, 4);
  EXPECT_EQ(*snapshot.jobs[0].current, (policy::Allocation{"a100", {{"n1", 2}}}));
  EXPECT_NO_THROW(policy::schedule(snapshot));
}

TEST(SnapshotBuilderTest, MoreGpusInUseThanTheNodeHasStillLeaveOurJobsTheirs) {
  std::vector<SlurmNode> nodes = cluster();
  SlurmJob adaptive = runningOn(1, "n1", 2, nodes);
  nodes[0].gpus_used = 6;  // n1 has 4 (a Gres change not yet seen by all)
  const auto snapshot = buildSnapshot(100, nodes, {adaptive}, {}, config::PolicyConfig{});
  EXPECT_EQ(snapshot.nodes[0].gpus, 2);
  EXPECT_NO_THROW(policy::schedule(snapshot));
}

TEST(SnapshotBuilderTest, NodesWithUntypedGpusAreOfTypeGpu) {
  std::vector<SlurmNode> nodes = {{"g1", {"", 4}, true}};
  SlurmJob adaptive = runningOn(1, "g1", 2, nodes);
  adaptive.gpus_per_node->type.clear();
  const auto snapshot = buildSnapshot(100, nodes, {adaptive}, {}, config::PolicyConfig{});
  EXPECT_EQ(snapshot.nodes[0].gpu_type, kUntypedGpu);
  EXPECT_EQ(*snapshot.jobs[0].current, (policy::Allocation{kUntypedGpu, {{"g1", 2}}}));
}

TEST(SnapshotBuilderTest, AJobRunsOnTheNodesOfItsPartitions) {
  const std::map<std::string, policy::NodeSet> partitions = {
      {"all", {"n1", "n2", "n3", "cpu1"}}, {"first", {"n1"}}, {"second", {"n2", "cpu1"}}};
  std::vector<SlurmJob> jobs;
  for (std::vector<std::string> in : std::vector<std::vector<std::string>>{
           {"all"}, {"first"}, {"second", "first"}, {"second"}, {"unknown"}}) {
    jobs.push_back(job(static_cast<uint32_t>(jobs.size() + 1), JobState::kPending,
                       schema::AdaptiveRequest{}));
    jobs.back().partitions = in;
  }
  std::vector<SlurmNode> nodes = cluster();
  for (auto& node : nodes) node.free_cpus = 8;
  SiteRules site;
  site.partitions = partitions;
  const auto snapshot = buildSnapshot(100, nodes, jobs, {}, config::PolicyConfig{}, site);
  ASSERT_EQ(snapshot.jobs.size(), 5u);
  EXPECT_FALSE(snapshot.jobs[0].partition);  // all the snapshot's nodes: no restriction
  ASSERT_TRUE(snapshot.jobs[1].partition);
  EXPECT_EQ(*snapshot.jobs[1].partition, "first");
  EXPECT_FALSE(snapshot.jobs[2].partition);  // together n1 and n2, all the usable GPU nodes
  ASSERT_TRUE(snapshot.jobs[3].partition);
  EXPECT_EQ(*snapshot.jobs[3].partition, "second");
  EXPECT_FALSE(snapshot.jobs[4].partition);  // a partition Slurm did not list
  EXPECT_EQ(snapshot.partitions.at("first"), policy::NodeSet{"n1"});
  EXPECT_EQ(snapshot.partitions.at("second"), policy::NodeSet{"n2"});  // its GPU nodes
  EXPECT_EQ(snapshot.partitions.size(), 2u);
  const auto decision = policy::schedule(snapshot);
  EXPECT_EQ(decision.allocations.at("2").allocation.nodes.count("n1"), 1u);
  EXPECT_EQ(decision.allocations.at("4").allocation.nodes.count("n2"), 1u);
}

// A waiting rigid job's --nodelist is its user's: the GPUs Pollux frees for it must be there
// (a rigid job on n2 was taken for one Slurm could start on the free v100 node, and the
// adaptive job on n2 was never shrunk for it).
TEST(SnapshotBuilderTest, AWaitingRigidJobRunsOnlyOnItsUsersNodes) {
  SlurmJob rigid = job(2, JobState::kPending, std::nullopt);
  rigid.requested_nodes = {"n2"};
  rigid.gpus_per_node = GpuGres{"", 2};
  rigid.requested_gpus = GpuGres{"", 2};
  rigid.num_nodes = 1;
  std::vector<SlurmNode> nodes = cluster();
  for (auto& node : nodes) node.free_cpus = 8;
  const auto snapshot = buildSnapshot(100, nodes, {rigid}, {}, config::PolicyConfig{}, {});
  ASSERT_EQ(snapshot.jobs.size(), 1u);
  ASSERT_TRUE(snapshot.jobs[0].partition);
  EXPECT_EQ(snapshot.partitions.at(*snapshot.jobs[0].partition), policy::NodeSet{"n2"});
}

}  // namespace
}  // namespace pollux::service

namespace pollux::service {
namespace {

TEST(SnapshotBuilderTest, APartitionsMaxNodesCapsItsJobs) {
  SiteRules site;
  site.partitions["small"] = {"n1", "n2"};
  site.partition_max_nodes["small"] = 1;
  SlurmJob growing = job(1, JobState::kPending, schema::AdaptiveRequest{1, 8, std::nullopt});
  SlurmJob wide = job(2, JobState::kPending, schema::AdaptiveRequest{8, 8, std::nullopt});
  growing.partitions = wide.partitions = {"small"};
  std::vector<SlurmNode> nodes = cluster();
  for (auto& node : nodes) node.free_cpus = 8;
  std::map<std::string, std::string> waiting;
  const auto snapshot =
      buildSnapshot(100, nodes, {growing, wide}, {}, config::PolicyConfig{}, site, &waiting);
  ASSERT_EQ(snapshot.jobs.size(), 1u);
  EXPECT_EQ(snapshot.jobs[0].id, "1");
  EXPECT_EQ(snapshot.jobs[0].max_gpus, 4);  // one node of 4 GPUs
  EXPECT_EQ(waiting["2"], "PartitionNodeLimit");
}

TEST(SnapshotBuilderTest, AJobRunsOnlyInPartitionsWhoseMaxTimeItsLimitFits) {
  SiteRules site;
  site.partitions = {{"short", {"n1"}}, {"gpu", {"n1", "n2", "n3"}}};
  site.partition_max_time_min["short"] = 10;
  SlurmJob too_long = job(1, JobState::kPending, schema::AdaptiveRequest{});
  SlurmJob elsewhere = job(2, JobState::kPending, schema::AdaptiveRequest{});
  SlurmJob fits = job(3, JobState::kPending, schema::AdaptiveRequest{});
  too_long.partitions = {"short"};
  elsewhere.partitions = {"short", "gpu"};
  fits.partitions = {"short"};
  too_long.time_limit_min = elsewhere.time_limit_min = 30;
  fits.time_limit_min = 10;
  std::vector<SlurmNode> nodes = cluster();
  for (auto& node : nodes) node.free_cpus = 8;
  std::map<std::string, std::string> waiting;
  const auto snapshot = buildSnapshot(100, nodes, {too_long, elsewhere, fits}, {},
                                      config::PolicyConfig{}, site, &waiting);
  ASSERT_EQ(snapshot.jobs.size(), 2u);
  EXPECT_EQ(waiting["1"], "PartitionTimeLimit");
  EXPECT_EQ(snapshot.jobs[0].id, "2");
  EXPECT_FALSE(snapshot.jobs[0].partition);  // gpu: every usable GPU node
  EXPECT_EQ(snapshot.jobs[1].id, "3");
  ASSERT_TRUE(snapshot.jobs[1].partition);
  EXPECT_EQ(snapshot.partitions.at(*snapshot.jobs[1].partition), policy::NodeSet{"n1"});
}

TEST(SnapshotBuilderTest, JobsWhoseLicensesAreTakenWaitAndAreNoDemand) {
  SiteRules site;
  site.licenses = {{"lic", 1, 0}};
  SlurmJob placed = job(1, JobState::kPending, schema::AdaptiveRequest{});
  placed.requested_nodes = {"n1"};  // placed by Pollux: it keeps its license
  placed.priority = 10;
  SlurmJob urgent = job(2, JobState::kPending, schema::AdaptiveRequest{});
  urgent.priority = 1000;
  SlurmJob rigid = job(3, JobState::kPending, std::nullopt);
  rigid.requested_gpus = GpuGres{"a100", 4};
  SlurmJob held = job(4, JobState::kPending, schema::AdaptiveRequest{});
  held.held = true;
  held.state_reason = "JobHeldUser";
  placed.licenses = urgent.licenses = rigid.licenses = held.licenses = "lic:1";
  std::vector<SlurmNode> nodes = cluster();
  for (auto& node : nodes) node.free_cpus = 8;
  std::map<std::string, std::string> waiting;
  const auto snapshot = buildSnapshot(100, nodes, {placed, urgent, rigid, held}, {},
                                      config::PolicyConfig{}, site, &waiting);
  ASSERT_EQ(snapshot.jobs.size(), 1u);
  EXPECT_EQ(snapshot.jobs[0].id, "1");
  EXPECT_EQ(waiting["2"], "Licenses");
  EXPECT_EQ(waiting["4"], "JobHeldUser");  // a held job takes no license
  EXPECT_EQ(waiting.count("3"), 0u);       // rigid: Slurm shows its Reason
}

TEST(SnapshotBuilderTest, OfJobsWantingTheLastLicenseSlurmsFirstByPriorityGetsIt) {
  SiteRules site;
  site.licenses = {{"lic", 1, 0}};
  SlurmJob first = job(1, JobState::kPending, schema::AdaptiveRequest{});
  SlurmJob second = job(2, JobState::kPending, schema::AdaptiveRequest{});
  first.licenses = second.licenses = "lic";
  first.priority = 5;
  second.priority = 50;
  std::vector<SlurmNode> nodes = cluster();
  for (auto& node : nodes) node.free_cpus = 8;
  std::map<std::string, std::string> waiting;
  const auto snapshot =
      buildSnapshot(100, nodes, {first, second}, {}, config::PolicyConfig{}, site, &waiting);
  ASSERT_EQ(snapshot.jobs.size(), 1u);
  EXPECT_EQ(snapshot.jobs[0].id, "2");
  EXPECT_EQ(waiting["1"], "Licenses");
}

}  // namespace
}  // namespace pollux::service
