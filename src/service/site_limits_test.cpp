// SPDX-License-Identifier: GPL-2.0-or-later
#include "site_limits.hpp"

#include <gtest/gtest.h>

#include "snapshot_builder.hpp"

namespace pollux::service {
namespace {

constexpr uint32_t kUser = 1000;

SlurmJob jobOf(uint32_t id, JobState state, const std::string& qos, uint32_t association) {
  SlurmJob job;
  job.id = id;
  job.uid = kUser;
  job.state = state;
  job.qos = qos;
  job.association_id = association;
  job.comment = "adaptive:max_gpus=8";
  job.partitions = {"gpu"};
  readRequests(job);
  return job;
}

// Root (1) > account acct1 (2) > user 1000 in acct1 (3).
std::vector<SlurmAssociation> tree() {
  SlurmAssociation root, account, user;
  root.id = 1;
  root.account = "root";
  account.id = 2;
  account.parent_id = 1;
  account.account = "acct1";
  user.id = 3;
  user.parent_id = 2;
  user.account = "acct1";
  user.user = "alice";
  return {root, account, user};
}

TEST(SiteLimits, LimitsOnRunningJobsKeepAJobBack) {
  SlurmQos qos;
  qos.name = "normal";
  qos.max_jobs_per_user = 1;
  auto associations = tree();
  const SlurmJob job = jobOf(9, JobState::kPending, "normal", 3);
  EXPECT_EQ(SiteLimits({qos}, associations).runningJobsLimit(job), "");
  qos.users[kUser] = {2, 1};
  EXPECT_EQ(SiteLimits({qos}, associations).runningJobsLimit(job), "QOSMaxJobsPerUserLimit");
  qos.max_jobs_per_user.reset();
  associations[2].max_jobs = 1;
  associations[2].jobs_used = 1;
  EXPECT_EQ(SiteLimits({qos}, associations).runningJobsLimit(job), "AssocMaxJobsLimit");
  associations[2].max_jobs.reset();
  associations[1].grp_jobs = 3;  // the account's jobs, all its users together
  associations[1].jobs_used = 3;
  EXPECT_EQ(SiteLimits({qos}, associations).runningJobsLimit(job), "AssocGrpJobsLimit");
}

TEST(SiteLimits, PerJobCapIsTheLowerOfQosAndAssociation) {
  SlurmQos qos;
  qos.name = "normal";
  qos.max_gpus_per_job = 4;
  auto associations = tree();
  const SlurmJob job = jobOf(9, JobState::kPending, "normal", 3);
  const GpuCharge charge{4, 16000};
  auto cap = SiteLimits({qos}, associations).gpusPerJob(job, charge, 8);
  ASSERT_TRUE(cap);
  EXPECT_EQ(cap->gpus, 4);
  EXPECT_EQ(cap->reason, "QOSMaxGRESPerJob");
  associations[2].max_gpus_per_job = 2;
  cap = SiteLimits({qos}, associations).gpusPerJob(job, charge, 8);
  EXPECT_EQ(cap->gpus, 2);
  EXPECT_EQ(cap->reason, "AssocMaxGRESPerJob");
}

TEST(SiteLimits, PerJobLimitsOnCpusMemoryAndNodesCapItsGpus) {
  SlurmQos qos;
  qos.name = "normal";
  auto associations = tree();
  const SlurmJob job = jobOf(9, JobState::kPending, "normal", 3);
  const GpuCharge charge{4, 16000};  // per GPU: 4 CPUs, 16 GB
  qos.per_job.cpus = 14;             // 3 GPUs' CPUs
  auto cap = SiteLimits({qos}, associations).gpusPerJob(job, charge, 8);
  ASSERT_TRUE(cap);
  EXPECT_EQ(cap->gpus, 3);
  EXPECT_EQ(cap->reason, "QOSMaxCpuPerJobLimit");
  associations[2].per_job.memory_mb = 32000;
  cap = SiteLimits({qos}, associations).gpusPerJob(job, charge, 8);
  EXPECT_EQ(cap->gpus, 2);
  EXPECT_EQ(cap->reason, "AssocMaxMemPerJob");
  qos.per_job.nodes = 1;  // one node of 8 GPUs: above the memory's cap
  EXPECT_EQ(SiteLimits({qos}, associations).gpusPerJob(job, charge, 8)->gpus, 2);
  EXPECT_EQ(SiteLimits({qos}, associations).gpusPerJob(job, charge, 1)->reason,
            "QOSMaxNodePerJobLimit");
}

TEST(SiteLimits, ChargePerGpuIsTheMostOneGpuCanBring) {
  policy::NodeDemand demand;
  demand.cpus = 2;
  demand.cpus_per_gpu = 6;
  demand.memory_mb_per_gpu = 20000;
  EXPECT_EQ(chargeOf(demand, 512000).cpus, 6);
  EXPECT_EQ(chargeOf(demand, 512000).memory_mb, 20000);
  demand.cpus_per_gpu = 0;
  demand.memory_mb_per_gpu = 0;
  demand.memory_mb_per_cpu = 1000;
  EXPECT_EQ(chargeOf(demand, 512000).cpus, 2);  // the node's CPUs, were it one GPU
  EXPECT_EQ(chargeOf(demand, 512000).memory_mb, 2000);
  demand.memory_mb_per_cpu = 0;
  demand.whole_node_memory = true;
  EXPECT_EQ(chargeOf(demand, 512000).memory_mb, 512000);
}

TEST(SiteLimits, BudgetsOfTheQosTheUserAndEachAccountAbove) {
  SlurmQos qos;
  qos.name = "gpu2";
  qos.grp_gpus = 16;
  qos.gpus_used = 5;
  qos.max_gpus_per_user = 2;  // the user runs nothing under it yet
  auto associations = tree();
  associations[1].grp_gpus = 4;
  associations[1].gpus_used = 3;
  const auto budgets =
      SiteLimits({qos}, associations).budgetsOf(jobOf(9, JobState::kPending, "gpu2", 3));
  ASSERT_EQ(budgets.size(), 3u);
  EXPECT_EQ(budgets[0].name, "qos:gpu2");
  EXPECT_EQ(budgets[0].capacity(0), 11);
  EXPECT_EQ(budgets[1].name, "qos:gpu2:uid:1000");
  EXPECT_EQ(budgets[1].capacity(0), 2);
  EXPECT_EQ(budgets[2].name, "assoc:2:acct1");
  EXPECT_EQ(SiteLimits::reasonOf(budgets[2].name), "AssocGrpGRES");
  EXPECT_EQ(SiteLimits::reasonOf(budgets[1].name), "QOSMaxGRESPerUser");
  EXPECT_EQ(SiteLimits::reasonOf(budgets[0].name), "QOSGrpGRES");
  EXPECT_EQ(budgets[2].capacity(0), 1);
  // The policy's own running jobs hold 3 of the used GPUs: it re-decides them.
  EXPECT_EQ(budgets[2].capacity(3), 4);
  EXPECT_EQ(budgets[2].perGpu(GpuCharge{4, 16000}), 1);
  // Over the limit already (lowered since): what its jobs hold stays theirs.
  associations[1].gpus_used = 6;
  EXPECT_EQ(SiteLimits({qos}, associations)
                .budgetsOf(jobOf(9, JobState::kPending, "gpu2", 3))[2]
                .capacity(6),
            6);
}

TEST(SiteLimits, LimitsOnCpusAndMemoryAreBudgetsInTheirUnits) {
  SlurmQos qos;
  qos.name = "normal";
  qos.grp_tres.memory_mb = 256000;
  qos.tres_used.memory_mb = 64000;
  qos.per_user_tres.cpus = 32;
  qos.users[kUser] = {0, 1, SharedTresUsed{8, 0}};
  auto associations = tree();
  associations[1].grp_tres.cpus = 64;
  associations[1].tres_used.cpus = 16;
  const auto budgets =
      SiteLimits({qos}, associations).budgetsOf(jobOf(9, JobState::kPending, "normal", 3));
  ASSERT_EQ(budgets.size(), 3u);
  EXPECT_EQ(budgets[0].name, "qos:normal/mem");
  EXPECT_EQ(budgets[0].capacity(0), 192000);
  EXPECT_EQ(budgets[0].perGpu(GpuCharge{4, 16000}), 16000);
  EXPECT_EQ(SiteLimits::reasonOf(budgets[0].name), "QOSGrpMemLimit");
  EXPECT_EQ(budgets[1].name, "qos:normal:uid:1000/cpu");
  EXPECT_EQ(budgets[1].capacity(0), 24);
  EXPECT_EQ(budgets[1].perGpu(GpuCharge{4, 16000}), 4);
  EXPECT_EQ(SiteLimits::reasonOf(budgets[1].name), "QOSMaxCpuPerUserLimit");
  EXPECT_EQ(budgets[2].name, "assoc:2:acct1/cpu");
  EXPECT_EQ(budgets[2].capacity(0), 48);
  EXPECT_EQ(SiteLimits::reasonOf(budgets[2].name), "AssocGrpCpuLimit");
}

TEST(SiteLimits, APartitionsQosAppliesBesideTheJobsOwn) {
  SlurmQos normal, partition;
  normal.name = "normal";
  partition.name = "gpu-part";
  partition.max_gpus_per_user = 4;
  partition.max_gpus_per_job = 2;
  partition.grp_jobs = 1;
  partition.jobs_used = 1;
  const SiteLimits limits({normal, partition}, tree(), {{"gpu", "gpu-part"}});
  const SlurmJob job = jobOf(9, JobState::kPending, "normal", 3);  // in partition gpu
  const auto budgets = limits.budgetsOf(job);
  ASSERT_EQ(budgets.size(), 1u);
  EXPECT_EQ(budgets[0].name, "qos:gpu-part:uid:1000");
  EXPECT_EQ(limits.gpusPerJob(job, GpuCharge{}, 8)->reason, "QOSMaxGRESPerJob");
  EXPECT_EQ(limits.runningJobsLimit(job), "QOSGrpJobsLimit");
  SlurmJob elsewhere = job;
  elsewhere.partitions = {"cpu"};
  EXPECT_TRUE(limits.budgetsOf(elsewhere).empty());
  EXPECT_EQ(limits.runningJobsLimit(elsewhere), "");
}

TEST(SiteLimits, LimitsPerAccountAreTheAccountsBudgets) {
  SlurmQos qos;
  qos.name = "normal";
  qos.max_gpus_per_account = 6;
  qos.per_account_tres.cpus = 48;
  qos.max_jobs_per_account = 3;
  qos.accounts["acct1"] = {4, 2, SharedTresUsed{16, 0, 0}};
  qos.accounts["acct2"] = {6, 3, SharedTresUsed{}};
  const SiteLimits limits({qos}, tree());
  const SlurmJob job = jobOf(9, JobState::kPending, "normal", 3);  // alice in acct1
  const auto budgets = limits.budgetsOf(job);
  ASSERT_EQ(budgets.size(), 2u);
  EXPECT_EQ(budgets[0].name, "qos:normal:acct:acct1");
  EXPECT_EQ(budgets[0].capacity(0), 2);
  EXPECT_EQ(SiteLimits::reasonOf(budgets[0].name), "MaxGRESPerAccount");
  EXPECT_EQ(budgets[1].name, "qos:normal:acct:acct1/cpu");
  EXPECT_EQ(budgets[1].capacity(0), 32);
  EXPECT_EQ(SiteLimits::reasonOf(budgets[1].name), "MaxCpuPerAccount");
  EXPECT_EQ(limits.runningJobsLimit(job), "");
  SlurmQos full = qos;
  full.accounts["acct1"].jobs = 3;
  EXPECT_EQ(SiteLimits({full}, tree()).runningJobsLimit(job), "MaxJobsPerAccount");
}

TEST(SiteLimits, LimitsOnNodesCountEachNodeOfAJob) {
  SlurmQos qos;
  qos.name = "normal";
  qos.per_user_tres.nodes = 2;
  qos.users[kUser] = {4, 1, SharedTresUsed{0, 0, 1}};
  auto associations = tree();
  associations[1].grp_tres.nodes = 8;
  const auto budgets =
      SiteLimits({qos}, associations).budgetsOf(jobOf(9, JobState::kPending, "normal", 3));
  ASSERT_EQ(budgets.size(), 2u);
  EXPECT_EQ(budgets[0].name, "qos:normal:uid:1000/node");
  EXPECT_EQ(budgets[0].capacity(0), 1);
  EXPECT_EQ(budgets[0].perGpu(GpuCharge{4, 16000}), 0);
  EXPECT_EQ(budgets[0].perNode(), 1);
  EXPECT_EQ(SiteLimits::reasonOf(budgets[0].name), "QOSMaxNodePerUserLimit");
  EXPECT_EQ(SiteLimits::reasonOf(budgets[1].name), "AssocGrpNodeLimit");
  EXPECT_EQ(SiteLimits::reasonOf("qos:normal/node"), "QOSGrpNodeLimit");
}

SlurmNode a100(const std::string& name) {
  SlurmNode node;
  node.name = name;
  node.gpus = GpuGres{"a100", 4};
  node.free_cpus = 8;
  return node;
}

TEST(SiteLimits, TheSnapshotCarriesBudgetsAndLeavesOutJobsOverALimit) {
  SlurmQos qos;
  qos.name = "gpu2";
  qos.max_gpus_per_user = 2;
  qos.max_jobs_per_user = 2;
  qos.users[kUser] = {1, 1};  // job 1 runs on 1 GPU
  const auto associations = tree();
  SiteRules site;
  site.limits = SiteLimits({qos}, associations);
  SlurmJob running = jobOf(1, JobState::kRunning, "gpu2", 3);
  running.nodes = {"n1"};
  running.gpu_request.per_node = "gres:gpu:1";
  readRequests(running);
  const SlurmJob pending = jobOf(2, JobState::kPending, "gpu2", 3);
  const std::vector<SlurmNode> nodes = {a100("n1"), a100("n2")};
  std::vector<SlurmJob> jobs = {running, pending};
  resolveGpuTypes(jobs, nodes);
  std::map<std::string, std::string> waiting;
  const auto snapshot =
      buildSnapshot(100, nodes, jobs, {}, config::PolicyConfig{}, site, &waiting);
  ASSERT_EQ(snapshot.jobs.size(), 2u);
  // 2 for the user, 1 of them held by job 1, which the policy re-decides.
  EXPECT_EQ(snapshot.budgets.at("qos:gpu2:uid:1000"), 2);
  EXPECT_EQ(snapshot.jobs[1].budgets,
            std::vector<policy::BudgetUse>{policy::BudgetUse{"qos:gpu2:uid:1000"}});
  const auto decision = policy::schedule(snapshot);
  int gpus = 0;
  for (const auto& [id, decided] : decision.allocations) gpus += decided.allocation.totalGpus();
  EXPECT_LE(gpus, 2);

  qos.users[kUser] = {2, 2};  // two jobs run: a third is kept back
  SiteRules full;
  full.limits = SiteLimits({qos}, associations);
  const auto kept_back = buildSnapshot(100, nodes, {jobOf(3, JobState::kPending, "gpu2", 3)}, {},
                                       config::PolicyConfig{}, full, &waiting);
  EXPECT_TRUE(kept_back.jobs.empty());
  EXPECT_EQ(waiting["3"], "QOSMaxJobsPerUserLimit");
}

// A user's CPU limit: each of the user's jobs takes its CPUs per GPU of it, the one running
// what it holds; together never beyond the limit.
TEST(SiteLimits, TheSnapshotChargesCpusPerGpuAgainstACpuLimit) {
  SlurmQos qos;
  qos.name = "normal";
  qos.per_user_tres.cpus = 12;
  qos.users[kUser] = {1, 1, SharedTresUsed{4, 0}};  // job 1 runs on 1 GPU, 4 CPUs
  SiteRules site;
  site.limits = SiteLimits({qos}, tree());
  SlurmJob running = jobOf(1, JobState::kRunning, "normal", 3);
  running.nodes = {"n1"};
  running.gpu_request.per_node = "gres:gpu:1";
  running.resources.cpus_per_tres = "gres:gpu:4";
  readRequests(running);
  SlurmJob pending = jobOf(2, JobState::kPending, "normal", 3);
  pending.resources.cpus_per_tres = "gres:gpu:2";
  readRequests(pending);
  SlurmNode n1 = a100("n1"), n2 = a100("n2");
  n1.free_cpus = n2.free_cpus = 64;
  const std::vector<SlurmNode> nodes = {n1, n2};
  std::vector<SlurmJob> jobs = {running, pending};
  resolveGpuTypes(jobs, nodes);
  const auto snapshot = buildSnapshot(100, nodes, jobs, {}, config::PolicyConfig{}, site, nullptr);
  ASSERT_EQ(snapshot.jobs.size(), 2u);
  EXPECT_EQ(snapshot.budgets.at("qos:normal:uid:1000/cpu"), 12);
  const std::string budget = "qos:normal:uid:1000/cpu";
  ASSERT_EQ(snapshot.jobs[0].budgets.size(), 1u);
  EXPECT_EQ(snapshot.jobs[0].budgets[0], (policy::BudgetUse{budget, 4}));
  ASSERT_EQ(snapshot.jobs[1].budgets.size(), 1u);
  EXPECT_EQ(snapshot.jobs[1].budgets[0], (policy::BudgetUse{budget, 2}));
  const auto decision = policy::schedule(snapshot);
  std::int64_t cpus = 0;
  for (const auto& job : snapshot.jobs) {
    const auto decided = decision.allocations.find(job.id);
    if (decided == decision.allocations.end()) continue;
    cpus += decided->second.allocation.totalGpus() * job.budgets.front().per_gpu;
  }
  EXPECT_LE(cpus, 12);
  EXPECT_GT(cpus, 4);
}

}  // namespace
}  // namespace pollux::service
