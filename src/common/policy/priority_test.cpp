// SPDX-License-Identifier: GPL-2.0-or-later
// Slurm's priority in the policy (Params::priority_weight, PriorityScale).
#include <gtest/gtest.h>

#include "objective.hpp"
#include "policy.hpp"
#include "test_cluster.hpp"

namespace pollux::policy {
namespace {

using testing::adaptiveJob;
using testing::nodesOf;

// Two pending jobs without a model wanting the one node of 4 GPUs; `second` has the higher
// priority.
Snapshot twoJobsForOneNode(double priority_weight) {
  Snapshot snapshot;
  snapshot.nodes = nodesOf("a100", 1, 4, "n");
  snapshot.jobs = {adaptiveJob("first", 4, 4, "a100"), adaptiveJob("second", 4, 4, "a100")};
  snapshot.jobs[0].priority = 1000;
  snapshot.jobs[1].priority = 21000;
  snapshot.params.priority_weight = priority_weight;
  return snapshot;
}

TEST(PriorityTest, TheJobSlurmRanksFirstGetsContendedGpus) {
  const Decision decision = schedule(twoJobsForOneNode(1.0));
  EXPECT_EQ(decision.allocations.count("second"), 1u);
  EXPECT_EQ(decision.allocations.count("first"), 0u);
}

TEST(PriorityTest, WeightZeroLeavesGoodputAlone) {
  Snapshot snapshot = twoJobsForOneNode(0.0);
  const PriorityScale scale(snapshot);
  EXPECT_DOUBLE_EQ(scale.factor(snapshot.jobs[0]), 1.0);
  EXPECT_DOUBLE_EQ(scale.factor(snapshot.jobs[1]), 1.0);
  // Reversed priorities give the same decision as none: goodput alone decides.
  std::swap(snapshot.jobs[0].priority, snapshot.jobs[1].priority);
  const Decision swapped = schedule(snapshot);
  snapshot.jobs[0].priority = snapshot.jobs[1].priority = 0;
  const Decision none = schedule(snapshot);
  EXPECT_EQ(swapped.allocations.count("first"), none.allocations.count("first"));
}

TEST(PriorityTest, FactorsGrowWithThePriorityAboveTheLowestAsAShareOfTheHighest) {
  Snapshot snapshot = twoJobsForOneNode(2.0);
  snapshot.jobs.push_back(adaptiveJob("middle", 1, 4, "a100"));
  snapshot.jobs.back().priority = 11000;
  const PriorityScale scale(snapshot);
  EXPECT_DOUBLE_EQ(scale.factor(snapshot.jobs[0]), 1.0);
  EXPECT_DOUBLE_EQ(scale.factor(snapshot.jobs[1]), 1.0 + 2.0 * 20000 / 21000);
  EXPECT_DOUBLE_EQ(scale.factor(snapshot.jobs[2]), 1.0 + 2.0 * 10000 / 21000);
  snapshot.jobs[1].priority = snapshot.jobs[2].priority = 1000;  // all equal
  EXPECT_DOUBLE_EQ(PriorityScale(snapshot).factor(snapshot.jobs[1]), 1.0);
}

// Priorities a hair apart (Slurm's age and fairshare move them every PriorityCalcPeriod) do
// not make the running job of two identical ones give its GPUs to the waiting one.
TEST(PriorityTest, ARunningJobKeepsItsGpusAgainstANearlyEqualPriority) {
  Snapshot snapshot = twoJobsForOneNode(1.0);
  snapshot.time = 3600;
  snapshot.jobs[0].priority = 9999;
  snapshot.jobs[0].current = Allocation{"a100", {{"n0", 4}}};
  snapshot.jobs[1].priority = 10000;
  const Decision decision = schedule(snapshot);
  EXPECT_EQ(decision.allocations.count("first"), 1u);
  EXPECT_EQ(decision.allocations.count("second"), 0u);
}

// Slurm keeps a running job's priority from its start while it recomputes the waiting ones'
// (fairshare every PriorityCalcPeriod): a running job with priority 1 beside an identical
// waiting one of its own user at 2500 keeps its GPUs.
TEST(PriorityTest, ARunningJobsStalePriorityDoesNotPreemptIt) {
  Snapshot snapshot = twoJobsForOneNode(1.0);
  snapshot.time = 3600;
  snapshot.jobs[0].priority = 1;
  snapshot.jobs[0].current = Allocation{"a100", {{"n0", 4}}};
  snapshot.jobs[1].priority = 2500;
  const Decision decision = schedule(snapshot);
  EXPECT_EQ(decision.allocations.count("first"), 1u);
  EXPECT_EQ(decision.allocations.count("second"), 0u);
}

TEST(PriorityTest, ARunningJobRanksWithTheFirstWaitingJob) {
  Snapshot snapshot = twoJobsForOneNode(1.0);
  snapshot.jobs.push_back(adaptiveJob("running", 1, 4, "a100"));
  snapshot.jobs.back().priority = 5;
  snapshot.jobs.back().current = Allocation{"a100", {{"n0", 1}}};
  const PriorityScale scale(snapshot);
  EXPECT_DOUBLE_EQ(scale.factor(snapshot.jobs[0]), 1.0);
  EXPECT_DOUBLE_EQ(scale.factor(snapshot.jobs[1]), 1.0 + 20000.0 / 21000);
  EXPECT_DOUBLE_EQ(scale.factor(snapshot.jobs[2]), 1.0 + 20000.0 / 21000);
  snapshot.jobs.resize(1);  // no other job waits: the running one's factor is 1
  snapshot.jobs[0].current = Allocation{"a100", {{"n0", 4}}};
  EXPECT_DOUBLE_EQ(PriorityScale(snapshot).factor(snapshot.jobs[0]), 1.0);
}

}  // namespace
}  // namespace pollux::policy
