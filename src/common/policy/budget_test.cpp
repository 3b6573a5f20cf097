// SPDX-License-Identifier: GPL-2.0-or-later
// Budgets: site limits on the GPUs (or CPUs, memory) that groups of jobs hold together
// (Snapshot::budgets).
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "policy.hpp"
#include "test_cluster.hpp"

namespace pollux::policy {
namespace {

using testing::adaptiveJob;
using testing::nodesOf;
using testing::rigidJob;

const std::string kUserBudget = "qos:gpu2:user:1000";

int gpusOf(const Decision& decision, const std::string& id) {
  const auto found = decision.allocations.find(id);
  return found == decision.allocations.end() ? 0 : found->second.allocation.totalGpus();
}

// Units of `budget` the decision gives the jobs of `snapshot` that count against it.
std::int64_t gpusIn(const Decision& decision, const Snapshot& snapshot,
                    const std::string& budget) {
  std::int64_t total = 0;
  for (const Job& job : snapshot.jobs) {
    for (const auto& use : job.budgets) {
      if (use.name == budget) total += gpusOf(decision, job.id) * use.per_gpu;
    }
  }
  return total;
}

// Two adaptive jobs of one user (up to 8 GPUs each) on 16 free GPUs, in the user's budget.
Snapshot twoJobsOfOneUser(int budget_gpus) {
  Snapshot snapshot;
  snapshot.nodes = nodesOf("t4", 2, 8, "n");
  snapshot.jobs = {adaptiveJob("a", 1, 8, "t4"), adaptiveJob("b", 1, 8, "t4")};
  for (Job& job : snapshot.jobs) job.budgets = {BudgetUse{kUserBudget}};
  snapshot.budgets[kUserBudget] = budget_gpus;
  return snapshot;
}

TEST(BudgetTest, JobsOfAUserShareItsBudget) {
  const Snapshot snapshot = twoJobsOfOneUser(2);
  const Decision decision = schedule(snapshot);
  EXPECT_EQ(decision.stats.solver_status, "optimal");
  EXPECT_EQ(gpusIn(decision, snapshot, kUserBudget), 2);
  Snapshot unlimited = snapshot;
  unlimited.budgets.clear();
  for (Job& job : unlimited.jobs) job.budgets.clear();
  EXPECT_GT(gpusOf(schedule(unlimited), "a") + gpusOf(schedule(unlimited), "b"), 2);
}

TEST(BudgetTest, AJobInNoBudgetTakesWhatTheBudgetLeaves) {
  Snapshot snapshot = twoJobsOfOneUser(2);
  snapshot.jobs.push_back(adaptiveJob("c", 1, 8, "t4"));
  const Decision decision = schedule(snapshot);
  EXPECT_EQ(gpusIn(decision, snapshot, kUserBudget), 2);
  EXPECT_EQ(gpusOf(decision, "c"), 8);
}

TEST(BudgetTest, RunningRigidJobsUseTheirBudgetFirst) {
  Snapshot snapshot = twoJobsOfOneUser(3);
  Job rigid = rigidJob("r", 2);
  rigid.current = Allocation{"t4", {{"n0", 2}}};
  rigid.budgets = {BudgetUse{kUserBudget}};
  snapshot.jobs.push_back(rigid);
  Decision decision = schedule(snapshot);
  EXPECT_EQ(gpusOf(decision, "r"), 2);
  EXPECT_EQ(gpusOf(decision, "a") + gpusOf(decision, "b"), 1);
  // Holding more than the whole budget: the rigid job keeps it, the others get none.
  snapshot.budgets[kUserBudget] = 1;
  decision = schedule(snapshot);
  EXPECT_EQ(decision.stats.solver_status, "optimal");
  EXPECT_EQ(gpusOf(decision, "r"), 2);
  EXPECT_EQ(gpusOf(decision, "a") + gpusOf(decision, "b"), 0);
}

TEST(BudgetTest, ARunningJobAboveALoweredBudgetIsBroughtWithinIt) {
  Snapshot snapshot = twoJobsOfOneUser(2);
  snapshot.time = 3600;
  snapshot.jobs[0].current = Allocation{"t4", {{"n0", 8}}};
  const Decision decision = schedule(snapshot);
  EXPECT_EQ(decision.stats.solver_status, "optimal");
  EXPECT_FALSE(decision.stats.kept_current);
  EXPECT_LE(gpusIn(decision, snapshot, kUserBudget), 2);
}

TEST(BudgetTest, NestedBudgetsAllHold) {
  Snapshot snapshot;
  snapshot.nodes = nodesOf("t4", 4, 8, "n");
  snapshot.budgets = {{"account:physics", 6}, {"qos:gpu2:user:1", 4}, {"qos:gpu2:user:2", 4}};
  for (int j = 0; j < 6; ++j) {
    Job job = adaptiveJob("j" + std::to_string(j), 1, 8, "t4");
    job.budgets = {BudgetUse{"qos:gpu2:user:" + std::to_string(1 + j % 2)},
                   BudgetUse{"account:physics"}};
    snapshot.jobs.push_back(job);
  }
  snapshot.jobs.push_back(adaptiveJob("free", 1, 8, "t4"));
  const Decision decision = schedule(snapshot);
  EXPECT_LE(gpusIn(decision, snapshot, "qos:gpu2:user:1"), 4);
  EXPECT_LE(gpusIn(decision, snapshot, "qos:gpu2:user:2"), 4);
  EXPECT_EQ(gpusIn(decision, snapshot, "account:physics"), 6);
  EXPECT_EQ(gpusOf(decision, "free"), 8);
}

// A limit on CPUs: each job takes its CPUs per GPU of it, a running rigid job what it holds.
TEST(BudgetTest, JobsTakeTheirUnitsPerGpuOfABudget) {
  const std::string cpus = "qos:normal/cpu";
  Snapshot snapshot;
  snapshot.nodes = nodesOf("t4", 4, 8, "n");
  snapshot.budgets[cpus] = 40;
  Job wide = adaptiveJob("wide", 1, 8, "t4");
  wide.budgets = {BudgetUse{cpus, 8}};
  Job narrow = adaptiveJob("narrow", 1, 8, "t4");
  narrow.budgets = {BudgetUse{cpus, 2}};
  Job rigid = rigidJob("r", 2);
  rigid.current = Allocation{"t4", {{"n3", 2}}};
  rigid.budgets = {BudgetUse{cpus, 4}};
  snapshot.jobs = {wide, narrow, rigid};
  const Decision decision = schedule(snapshot);
  EXPECT_EQ(decision.stats.solver_status, "optimal");
  EXPECT_EQ(gpusOf(decision, "r"), 2);
  EXPECT_LE(gpusIn(decision, snapshot, cpus), 40);
  EXPECT_GE(gpusOf(decision, "wide"), 1);
  EXPECT_GE(gpusOf(decision, "narrow"), 1);
  // 32 CPUs left: never 8 GPUs of each as without the limit.
  EXPECT_LE(8 * gpusOf(decision, "wide") + 2 * gpusOf(decision, "narrow"), 32);
}

// A limit on nodes: each job takes one unit per node it spans, whatever its GPUs.
TEST(BudgetTest, JobsTakeTheirNodesOfANodeBudget) {
  const std::string nodes = "qos:normal:uid:1/node";
  Snapshot snapshot;
  snapshot.nodes = nodesOf("t4", 4, 4, "n");
  snapshot.budgets[nodes] = 2;
  for (const char* id : {"a", "b", "c"}) {
    Job job = adaptiveJob(id, 1, 8, "t4");
    job.budgets = {BudgetUse{nodes, 0, 1}};
    snapshot.jobs.push_back(job);
  }
  const Decision decision = schedule(snapshot);
  EXPECT_EQ(decision.stats.solver_status, "optimal");
  int spanned = 0, placed = 0;
  for (const auto& [id, decided] : decision.allocations) {
    spanned += int(decided.allocation.nodes.size());
    placed += 1;
  }
  EXPECT_LE(spanned, 2);
  EXPECT_EQ(placed, 2);  // two jobs on a node each: the third would be a third node
}

// Many jobs in a few budgets, solved by rounding (one group) and by several groups.
TEST(BudgetTest, RoundingAndPartitionsRespectBudgets) {
  Snapshot snapshot;
  snapshot.nodes = nodesOf("t4", 8, 8, "n");
  snapshot.budgets = {{"qos:small", 5}, {"qos:medium", 12}};
  for (int j = 0; j < 24; ++j) {
    Job job = adaptiveJob("j" + std::to_string(j), 1, 8, "t4");
    if (j % 3 == 0) job.budgets = {BudgetUse{"qos:small"}};
    if (j % 3 == 1) job.budgets = {BudgetUse{"qos:medium", 3}};
    snapshot.jobs.push_back(job);
  }
  for (int partition_jobs : {0, 5}) {
    snapshot.params.exact_jobs = 0;
    snapshot.params.partition_jobs = partition_jobs;
    const Decision decision = schedule(snapshot);
    EXPECT_EQ(decision.stats.solver_status, "feasible") << partition_jobs;
    EXPECT_FALSE(decision.stats.exact);
    EXPECT_LE(gpusIn(decision, snapshot, "qos:small"), 5) << partition_jobs;
    EXPECT_LE(gpusIn(decision, snapshot, "qos:medium"), 12) << partition_jobs;
    EXPECT_GT(gpusIn(decision, snapshot, "qos:medium"), 5) << partition_jobs;
  }
}

// The completion-time pass re-decides jobs that declared their length: within budgets too.
TEST(BudgetTest, CompletionTimePassRespectsBudgets) {
  Snapshot snapshot = twoJobsOfOneUser(3);
  snapshot.params.objective = Objective::kJct;
  snapshot.jobs[0].length = DeclaredLength{0, 1e6};
  snapshot.jobs[1].length = DeclaredLength{0, 5e7};
  const Decision decision = schedule(snapshot);
  EXPECT_EQ(decision.stats.solver_status, "optimal");
  EXPECT_EQ(gpusIn(decision, snapshot, kUserBudget), 3);
  EXPECT_TRUE(decision.allocations.at("a").remaining_s.has_value());
}

}  // namespace
}  // namespace pollux::policy
