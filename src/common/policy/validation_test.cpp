// SPDX-License-Identifier: GPL-2.0-or-later
#include "validation.hpp"

#include <cmath>
#include <functional>

#include <gtest/gtest.h>

#include "common/invalid_input.hpp"
#include "test_cluster.hpp"

namespace pollux::policy {
namespace {

using testing::adaptiveJob;
using testing::nodesOf;

Snapshot goodSnapshot() {
  Snapshot snapshot;
  snapshot.nodes = nodesOf("t4", 2, 4, "n");
  snapshot.jobs = {adaptiveJob("a", 1, 4, "t4"), adaptiveJob("b", 1, 4, "t4")};
  return snapshot;
}

// The message of the InvalidInput that validate throws after `breakIt`, or "" if none.
std::string problemAfter(const std::function<void(Snapshot&)>& breakIt) {
  Snapshot snapshot = goodSnapshot();
  breakIt(snapshot);
  try {
    validate(snapshot);
  } catch (const InvalidInput& error) {
    return error.what();
  }
  return "";
}

TEST(ValidationTest, AcceptsAConsistentSnapshot) {
  EXPECT_EQ(problemAfter([](Snapshot&) {}), "");
}

TEST(ValidationTest, RejectsInconsistentSnapshotsWithAUsefulMessage) {
  EXPECT_EQ(problemAfter([](Snapshot& s) { s.jobs[1].id = "a"; }), "duplicate job id a");
  EXPECT_EQ(problemAfter([](Snapshot& s) { s.nodes[1].name = "n0"; }), "duplicate node name n0");
  EXPECT_EQ(problemAfter([](Snapshot& s) { s.nodes[0].gpus = -1; }), "node n0 has gpus < 0: -1");
  EXPECT_EQ(problemAfter([](Snapshot& s) { s.jobs[0].min_gpus = 0; }),
            "job a needs min_gpus >= 1, got 0");
  EXPECT_EQ(problemAfter([](Snapshot& s) { s.jobs[0].min_gpus = 5; }),
            "job a has min_gpus 5 > max_gpus 4");
  EXPECT_EQ(problemAfter([](Snapshot& s) { s.jobs[0].current = Allocation{"t4", {{"x", 1}}}; }),
            "job a runs on unknown node x");
  EXPECT_EQ(problemAfter([](Snapshot& s) { s.jobs[0].current = Allocation{"v100", {{"n0", 1}}}; }),
            "job a runs on node n0 of type t4, not v100");
  EXPECT_EQ(problemAfter([](Snapshot& s) { s.jobs[0].current = Allocation{"t4", {{"n0", 5}}}; }),
            "node n0 has 4 GPUs but its jobs (up to a) hold 5");
  EXPECT_EQ(problemAfter([](Snapshot& s) {
              s.jobs[0].current = Allocation{"t4", {{"n0", 3}}};
              s.jobs[1].current = Allocation{"t4", {{"n0", 2}}};
            }),
            "node n0 has 4 GPUs but its jobs (up to b) hold 5");
  // GPUs a move leaves are free in the round's view: beside other jobs' GPUs, never beyond
  // their node's.
  EXPECT_EQ(problemAfter([](Snapshot& s) {
              s.jobs[0].current = Allocation{"t4", {{"n0", 4}}};
              s.jobs[1].leaving = Allocation{"t4", {{"n0", 4}}};
            }),
            "");
  EXPECT_EQ(problemAfter([](Snapshot& s) {
              s.jobs[0].leaving = Allocation{"t4", {{"x", 1}}};
            }),
            "job a is leaving unknown node x");
  EXPECT_EQ(problemAfter([](Snapshot& s) {
              s.jobs[0].leaving = Allocation{"t4", {{"n1", 5}}};
            }),
            "job a is leaving 5 GPUs on n1, which has 4");
  EXPECT_EQ(problemAfter([](Snapshot& s) { s.jobs[0].models["t4"].gamma = 20; }),
            "job a model for t4: perf_params.gamma must be in [1, 10], got 20");
  EXPECT_EQ(problemAfter([](Snapshot& s) { s.jobs[0].models["t4"].alpha_c = NAN; }),
            "job a model for t4: perf_params.alpha_c must be finite and > 0, got nan");
  EXPECT_EQ(problemAfter([](Snapshot& s) { s.time = NAN; }), "snapshot time must be finite, got nan");
  EXPECT_EQ(problemAfter([](Snapshot& s) { s.params.time_limit_s = 0; }),
            "params.time_limit_s must be finite and > 0, got 0");
  EXPECT_EQ(problemAfter([](Snapshot& s) { s.jobs[0].grad.var = NAN; }),
            "job a: grad_params.var must be finite and >= 0, got nan");
}

TEST(ValidationTest, RejectsBadBudgets) {
  const auto inBudget = [](Snapshot& s) {
    s.budgets["qos:gpu2"] = 2;
    s.jobs[0].budgets = {BudgetUse{"qos:gpu2"}};
  };
  EXPECT_EQ(problemAfter(inBudget), "");
  EXPECT_EQ(problemAfter([&](Snapshot& s) {
              inBudget(s);
              s.jobs[1].budgets = {BudgetUse{"qos:gpu2"}, BudgetUse{"account:physics"}};
            }),
            "job b counts against budget account:physics, which the snapshot's budgets do not "
            "list");
  EXPECT_EQ(problemAfter([&](Snapshot& s) {
              inBudget(s);
              s.jobs[0].budgets.push_back(BudgetUse{"qos:gpu2"});
            }),
            "job a names budget qos:gpu2 twice");
  EXPECT_EQ(problemAfter([](Snapshot& s) { s.budgets["qos:gpu2"] = -1; }),
            "budget qos:gpu2 is below 0: -1");
  EXPECT_EQ(problemAfter([&](Snapshot& s) {
              inBudget(s);
              s.jobs[0].budgets[0].per_gpu = 0;
            }),
            "job a takes 0 of budget qos:gpu2 per GPU and 0 per node (each >= 0, not both 0)");
  EXPECT_EQ(problemAfter([](Snapshot& s) { s.budgets[""] = 1; }), "a budget has an empty name");
  // Running jobs beyond a budget (lowered under them) are no error.
  EXPECT_EQ(problemAfter([&](Snapshot& s) {
              inBudget(s);
              s.jobs[0].current = Allocation{"t4", {{"n0", 4}}};
            }),
            "");
}

}  // namespace
}  // namespace pollux::policy
