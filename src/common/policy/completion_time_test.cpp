// SPDX-License-Identifier: GPL-2.0-or-later
#include "completion_time.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "common/invalid_input.hpp"
#include "test_cluster.hpp"

namespace pollux::policy {
namespace {

using testing::adaptiveJob;
using testing::nodesOf;

Job declaredJob(const std::string& id, double progress, double target) {
  Job job = adaptiveJob(id, 1, 8, "t4");
  job.length = DeclaredLength{progress, target};
  return job;
}

Params withGuard(double guard) {
  Params params;
  params.jct_guard = guard;
  return params;
}

// Whether the job's options in `snapshot`'s round include `config`.
bool offered(const Job& job, const ClusterShape& cluster, const Snapshot& snapshot,
             const Config& config) {
  JobGoodput goodput(job, {}, cluster);
  const auto options = adaptiveOptions(job, candidateConfigs(job, cluster), goodput, snapshot, {});
  return std::any_of(options.begin(), options.end(),
                     [&](const JobOption& option) { return option.config == config; });
}

int gpusOf(const Decision& decision, const std::string& id) {
  const auto found = decision.allocations.find(id);
  return found == decision.allocations.end() ? 0 : found->second.allocation.totalGpus();
}

TEST(CompletionTimeTest, OnlyAdaptiveJobsDeclare) {
  EXPECT_FALSE(declaresLength(adaptiveJob("a", 1, 8, "t4")));
  EXPECT_TRUE(declaresLength(declaredJob("a", 0, 100)));
  EXPECT_TRUE(declaresLength(declaredJob("a", 150, 100)));  // beyond: its length doubled
  Job rigid = testing::rigidJob("r", 2);
  rigid.length = DeclaredLength{0, 100};
  EXPECT_FALSE(declaresLength(rigid));
}

TEST(CompletionTimeTest, PastItsDeclaredLengthAJobIsGuessedToRunAsLongAgain) {
  EXPECT_DOUBLE_EQ((DeclaredLength{25, 100}.remaining()), 75);
  EXPECT_DOUBLE_EQ((DeclaredLength{100, 100}.remaining()), 100);  // reached: 200 now
  EXPECT_DOUBLE_EQ((DeclaredLength{150, 100}.remaining()), 50);
  EXPECT_DOUBLE_EQ((DeclaredLength{450, 100}.remaining()), 350);  // 800 now
}

TEST(CompletionTimeTest, RemainingSecondsIsWorkOverGoodputPlusAnyRestart) {
  const auto nodes = nodesOf("t4", 1, 8, "n");
  const ClusterShape cluster = shapeOf(nodes);
  Job job = declaredJob("a", 2.5e5, 1e6);
  job.restart_cost_s = 30;
  job.current = Allocation{"t4", {{"n0", 2}}};
  JobGoodput goodput(job, {}, cluster);
  const model::GoodputModel model(job.models.at("t4"), job.grad, job.limits);
  const double at4 = model.bestBatch({1, 4})->goodput;
  const double at2 = model.bestBatch({1, 2})->goodput;
  // 750,000 examples left: at its current 2 GPUs no restart, at 4 GPUs one restart.
  EXPECT_NEAR(*remainingSeconds(job, goodput, {"t4", 2, 1}), 7.5e5 / at2, 1e-6);
  EXPECT_NEAR(*remainingSeconds(job, goodput, {"t4", 4, 1}), 7.5e5 / at4 + 30, 1e-6);
  EXPECT_FALSE(remainingSeconds(adaptiveJob("b", 1, 8, "t4"), goodput, {"t4", 4, 1}));
}

TEST(CompletionTimeTest, ALiveShrinkCostsItsMeasuredStallAGrowthItsRestart) {
  Job job = declaredJob("a", 2.5e5, 1e6);
  job.restart_cost_s = 30;
  job.current = Allocation{"t4", {{"n0", 2}, {"n1", 2}}};
  EXPECT_EQ(changeCost(job, {"t4", 4, 2}), 0.0);
  EXPECT_EQ(changeCost(job, {"t4", 2, 1}), 30.0);  // no live change measured yet
  job.live_resize_cost_s = 0.4;
  EXPECT_EQ(changeCost(job, {"t4", 2, 1}), 0.4);  // in place: one of its nodes
  EXPECT_EQ(changeCost(job, {"t4", 1, 1}), 30.0);  // fewer GPUs on a node: a requeue
  EXPECT_EQ(changeCost(job, {"t4", 8, 2}), 30.0);  // growth: a requeue
  EXPECT_EQ(changeCost(job, {"v100", 2, 1}), 30.0);  // another GPU type: a requeue
  job.current.reset();
  EXPECT_EQ(changeCost(job, {"t4", 2, 1}), 30.0);
}

TEST(CompletionTimeTest, ALiveMoveCostsTwoStallsAndTheJoinersStartUp) {
  Job job = declaredJob("a", 2.5e5, 1e6);
  job.restart_cost_s = 30;
  job.current = Allocation{"t4", {{"n0", 2}, {"n1", 2}}};
  job.parts = {Allocation{"t4", {{"n0", 2}, {"n1", 2}}}};
  job.grows_live = true;
  job.join_startup_s = 40;
  job.live_resize_cost_s = 0.5;
  EXPECT_EQ(changeCost(job, {"t4", 4, 1}), 30.0);  // a restart: its GPUs not all in parts
  job.moves_live = true;
  // 4 GPUs on one node: its part there joins (0.5 s) once the joiners have started (40 s,
  // while its old GPUs are kept from other jobs), its old part leaves (0.5 s).
  EXPECT_DOUBLE_EQ(changeCost(job, {"t4", 4, 1}), 0.5 + 40.0 + 0.5);
  EXPECT_DOUBLE_EQ(changeCost(job, {"t4", 8, 2}), 0.5 + 20.0);  // a growth stays a growth
  // Another GPU type: a move too, onto a node of that type.
  EXPECT_DOUBLE_EQ(changeCost(job, {"v100", 4, 1}), 0.5 + 40.0 + 0.5);
  job.moves_live = false;
  EXPECT_EQ(changeCost(job, {"v100", 4, 1}), 30.0);  // without all its GPUs in parts: a restart
}

TEST(CompletionTimeTest, AShrinkToSomeOfAPartsNodesCostsItsStall) {
  Job job = declaredJob("a", 2.5e5, 1e6);
  job.restart_cost_s = 30;
  job.current = Allocation{"t4", {{"n0", 4}, {"n1", 4}, {"n2", 4}, {"n3", 4}}};
  job.parts = {*job.current};
  job.grows_live = true;
  job.join_startup_s = 40;
  job.live_resize_cost_s = 0.5;
  EXPECT_DOUBLE_EQ(changeCost(job, {"t4", 8, 2}), 0.5);
  EXPECT_DOUBLE_EQ(changeCost(job, {"t4", 4, 1}), 0.5);
  EXPECT_EQ(changeCost(job, {"t4", 8, 1}), 30.0);  // 8 GPUs on one node: a restart
}

TEST(CompletionTimeTest, ALiveGrowthCostsItsStallAndTheJoinersIdleGpuTime) {
  Job job = declaredJob("a", 2.5e5, 1e6);
  job.restart_cost_s = 30;
  job.current = Allocation{"t4", {{"n0", 4}}};
  job.grows_live = true;
  job.join_startup_s = 40;
  // A part on a new node with as many GPUs, not measured yet: the default stall 3 s; 4 of 8
  // GPUs idle for 40 s: 20 s of the job.
  EXPECT_DOUBLE_EQ(changeCost(job, {"t4", 8, 2}), 3.0 + 20.0);
  EXPECT_DOUBLE_EQ(changeCost(job, {"t4", 8, 1}), 3.0 + 20.0);  // a part on its node
  EXPECT_EQ(changeCost(job, {"t4", 6, 1}), 30.0);  // 2 more GPUs on its node: a requeue
  EXPECT_EQ(changeCost(job, {"t4", 2, 1}), 30.0);  // fewer GPUs on its node: a requeue
  job.room_to_double = false;
  EXPECT_EQ(changeCost(job, {"t4", 8, 1}), 30.0);  // its node cannot double it: a move
  EXPECT_DOUBLE_EQ(changeCost(job, {"t4", 8, 2}), 3.0 + 20.0);
  job.room_to_double = true;
  job.live_resize_cost_s = 0.5;
  EXPECT_DOUBLE_EQ(changeCost(job, {"t4", 8, 2}), 0.5 + 20.0);
  EXPECT_DOUBLE_EQ(changeCost(job, {"t4", 16, 4}), 0.5 + 40.0 * 12 / 16);
  EXPECT_EQ(changeCost(job, {"v100", 8, 2}), 30.0);  // another GPU type: a restart
  job.current = Allocation{"t4", {{"n0", 2}, {"n1", 2}}};
  EXPECT_EQ(changeCost(job, {"t4", 8, 1}), 30.0);  // onto fewer nodes, more GPUs: a restart
  EXPECT_DOUBLE_EQ(changeCost(job, {"t4", 2, 1}), 0.5);  // a shrink in place
  // With a part on n1 (its last live growth): dropping it, a second part on a new node, or
  // one doubling it on its nodes where they have the room.
  job.parts = {Allocation{"t4", {{"n1", 2}}}};
  EXPECT_DOUBLE_EQ(changeCost(job, {"t4", 2, 1}), 0.5);
  EXPECT_DOUBLE_EQ(changeCost(job, {"t4", 6, 3}), 0.5 + 40.0 / 3);
  EXPECT_DOUBLE_EQ(changeCost(job, {"t4", 8, 2}), 0.5 + 20.0);
  job.room_to_double = false;
  EXPECT_EQ(changeCost(job, {"t4", 8, 2}), 30.0);
  job.room_to_double = true;
  // With a second part on n2: dropping the newest only.
  job.current = Allocation{"t4", {{"n0", 2}, {"n1", 2}, {"n2", 2}}};
  job.parts.push_back(Allocation{"t4", {{"n2", 2}}});
  EXPECT_DOUBLE_EQ(changeCost(job, {"t4", 4, 2}), 0.5);
  EXPECT_EQ(changeCost(job, {"t4", 2, 1}), 30.0);  // both parts at once: a requeue
}

TEST(CompletionTimeTest, TheChangeFactorChargesSecondsLost) {
  Job job = declaredJob("a", 0, 1e6);
  job.submit_time = 0;
  job.restart_cost_s = 30;
  job.restarts = 2;
  job.current = Allocation{"t4", {{"n0", 4}}};
  EXPECT_DOUBLE_EQ(secondsLost(job), 60.0);
  EXPECT_DOUBLE_EQ(changeFactor(job, {"t4", 8, 1}, 1000), (1000.0 - 60) / (1000 + 30));
  EXPECT_DOUBLE_EQ(changeFactor(job, {"t4", 4, 1}, 1000), 1.0);
  job.lost_s = 5;
  job.live_resize_cost_s = 0.5;
  job.current = Allocation{"t4", {{"n0", 2}, {"n1", 2}}};
  EXPECT_DOUBLE_EQ(changeFactor(job, {"t4", 2, 1}, 1000), (1000.0 - 5) / (1000 + 0.5));
}

TEST(CompletionTimeTest, NoChangeIsUndoneInTheRoundAfterIt) {
  const auto nodes = nodesOf("t4", 1, 8, "n");
  const ClusterShape cluster = shapeOf(nodes);
  Job job = declaredJob("a", 0, 1e6);
  job.current = Allocation{"t4", {{"n0", 8}}};
  job.previous = Allocation{"t4", {{"n0", 4}}};
  job.last_change_time = 100;
  Params params = withGuard(2);
  params.min_change_interval_s = 60;
  EXPECT_TRUE(undoesLastChange(job, {"t4", 4, 1}, params, 160));
  EXPECT_FALSE(undoesLastChange(job, {"t4", 4, 1}, params, 220));  // two intervals later
  EXPECT_FALSE(undoesLastChange(job, {"t4", 2, 1}, params, 160));
  JobGoodput goodput(job, {}, cluster);
  const std::vector<JobOption> options = {
      {{"t4", 8, 1}, 1.0, 0}, {{"t4", 4, 1}, 0.6, 0}, {{"t4", 2, 1}, 0.4, 0}};
  // Even as the goodput round's choice, 4 GPUs are not offered; the current 8 always are.
  const auto offered = completionOptions(job, options, goodput, 1, params, 160).options;
  ASSERT_EQ(offered.size(), 2u);
  EXPECT_EQ(offered[0].option, 0);
  EXPECT_EQ(offered[1].option, 2);
  EXPECT_EQ(completionOptions(job, options, goodput, 1, params, 220).options.size(), 3u);
}

TEST(CompletionTimeTest, UnderJctTheGoodputPassDoesNotOfferTheAllocationJustLeftEither) {
  const auto nodes = nodesOf("t4", 1, 8, "n");
  const ClusterShape cluster = shapeOf(nodes);
  Job job = adaptiveJob("a", 1, 8, "t4");
  job.current = Allocation{"t4", {{"n0", 8}}};
  job.previous = Allocation{"t4", {{"n0", 4}}};
  job.last_change_time = 100;
  Snapshot snapshot;
  snapshot.time = 160;
  snapshot.nodes = nodes;
  snapshot.params.min_change_interval_s = 60;
  const auto offers = [&](const Config& config) { return offered(job, cluster, snapshot, config); };
  snapshot.params.objective = Objective::kJct;
  EXPECT_FALSE(offers({"t4", 4, 1}));
  EXPECT_TRUE(offers({"t4", 2, 1}));
  EXPECT_TRUE(offers({"t4", 8, 1}));
  snapshot.params.objective = Objective::kGoodput;  // Pollux's own objective: as Pollux does
  EXPECT_TRUE(offers({"t4", 4, 1}));
}

TEST(CompletionTimeTest, AJobRestartsOnlyOnceItRanAsLongAsItLostSinceItsLastChange) {
  const auto nodes = nodesOf("t4", 4, 4, "n");
  const ClusterShape cluster = shapeOf(nodes);
  Job job = adaptiveJob("a", 1, 16, "t4");
  job.current = Allocation{"t4", {{"n0", 4}}};
  job.parts = {*job.current};
  job.grows_live = true;
  job.live_resize_cost_s = 0.5;
  job.last_change_time = 1000;
  job.lost_s = 300;
  Snapshot snapshot;
  snapshot.nodes = nodes;
  snapshot.params.min_change_interval_s = 60;
  const auto offers = [&](const Config& config) { return offered(job, cluster, snapshot, config); };
  const Config restart{"t4", 2, 1};  // fewer GPUs on its node: a restart
  const Config live{"t4", 16, 4};    // 4 more on each of three other nodes: a part joins
  snapshot.time = 1200;              // 200 s since its last change, 300 s lost
  snapshot.params.objective = Objective::kJct;
  EXPECT_TRUE(restartsTooSoon(job, restart, snapshot.params, snapshot.time));
  EXPECT_FALSE(restartsTooSoon(job, live, snapshot.params, snapshot.time));
  EXPECT_FALSE(offers(restart));
  EXPECT_TRUE(offers(live));
  snapshot.params.objective = Objective::kGoodput;  // Pollux's own objective: as Pollux does
  EXPECT_TRUE(offers(restart));
  snapshot.params.objective = Objective::kJct;
  snapshot.time = 1300;  // it has run as long as it lost
  EXPECT_FALSE(restartsTooSoon(job, restart, snapshot.params, snapshot.time));
  EXPECT_TRUE(offers(restart));
  snapshot.time = 1200;
  job.grows_live = false;  // every change a restart: Pollux's change penalty alone spaces them
  job.parts.clear();
  EXPECT_FALSE(restartsTooSoon(job, restart, snapshot.params, snapshot.time));
  EXPECT_TRUE(offers(restart));
  job.grows_live = true;
  job.current = Allocation{"t4", {{"n0", 2}}};
  job.parts = {*job.current};
  job.room_to_double = false;
  job.min_gpus = 4;                  // its minimum raised: out of its bounds, it restarts at once
  const Config doubled{"t4", 4, 1};  // twice its GPUs on its node, without the room: a restart
  EXPECT_TRUE(restartsTooSoon(job, doubled, snapshot.params, snapshot.time));
  EXPECT_TRUE(offers(doubled));
}

TEST(CompletionTimeTest, GrowthMustPayForItsRestartAndEarlierOnes) {
  const auto nodes = nodesOf("t4", 1, 8, "n");
  const ClusterShape cluster = shapeOf(nodes);
  Job job = declaredJob("a", 0, 1e6);
  job.current = Allocation{"t4", {{"n0", 4}}};
  JobGoodput goodput(job, {}, cluster);
  const std::vector<JobOption> options = {
      {{"t4", 4, 1}, 1.0, 0}, {{"t4", 8, 1}, 1.5, 0}, {{"t4", 2, 1}, 0.6, 0}};
  const double saving = *remainingSeconds(job, goodput, {"t4", 4, 1}) -
                        *remainingSeconds(job, goodput, {"t4", 8, 1});
  ASSERT_GT(saving, 0);
  job.restart_cost_s = 0.4 * saving;  // one restart: growth pays
  EXPECT_EQ(completionOptions(job, options, goodput, -1, withGuard(2), 0).options.size(), 3u);
  job.restarts = 2;  // the restart and the two before it cost more than the growth saves
  const auto options_left = completionOptions(job, options, goodput, -1, withGuard(2), 0).options;
  ASSERT_EQ(options_left.size(), 2u);
  EXPECT_EQ(options_left[0].option, 0);
  EXPECT_EQ(options_left[1].option, 2);  // shrinking (to let others grow) stays possible
}

TEST(CompletionTimeTest, GuardDropsOptionsBelowTheFloor) {
  const auto nodes = nodesOf("t4", 1, 8, "n");
  const ClusterShape cluster = shapeOf(nodes);
  Job job = declaredJob("a", 0, 1e6);
  JobGoodput goodput(job, {}, cluster);
  const std::vector<JobOption> options = {
      {{"t4", 1, 1}, 1.0, 0}, {{"t4", 2, 1}, 1.9, 0}, {{"t4", 4, 1}, 3.5, 0}};
  const auto guarded = completionOptions(job, options, goodput, 2, withGuard(2), 0);
  EXPECT_TRUE(guarded.guarded);
  ASSERT_EQ(guarded.options.size(), 2u);  // 1 GPU is below 3.5 / 2
  EXPECT_EQ(guarded.options[0].option, 1);
  const auto free = completionOptions(job, options, goodput, -1, withGuard(2), 0);
  EXPECT_FALSE(free.guarded);
  EXPECT_EQ(free.options.size(), 3u);
}

// One short and two long jobs on one 8-GPU node.
Snapshot shortAndLong(double guard) {
  Snapshot snapshot;
  snapshot.nodes = nodesOf("t4", 1, 8, "n");
  snapshot.jobs = {declaredJob("long1", 0, 2e7), declaredJob("short", 0, 2e5),
                   declaredJob("long2", 0, 2e7)};
  snapshot.params.jct_guard = guard;
  return snapshot;
}

// Options at the baseline speedup 1: under fairness p = -1 each weight is the job's priority
// times (utility(1) - utility(0.5)) = -1 + 2 = 1.
CompletionOptions atBaseline(double baseline_s) {
  CompletionOptions job;
  job.baseline_s = baseline_s;
  job.options.push_back({0, baseline_s, 1.0});
  return job;
}

TEST(CompletionTimeTest, WeightsGoByRankOfRemainingTimeNotBySize) {
  const auto weights =
      completionWeights({atBaseline(10), atBaseline(20), atBaseline(1e6), atBaseline(20)}, -1);
  ASSERT_EQ(weights.size(), 4u);
  // Jobs with at least as long a baseline: 4, 3, 1, 3 of 4.
  EXPECT_NEAR(weights[0][0], 1.0, 1e-12);
  EXPECT_NEAR(weights[1][0], std::pow(0.75, kRankExponent), 1e-12);
  EXPECT_NEAR(weights[2][0], std::pow(0.25, kRankExponent), 1e-12);
  EXPECT_NEAR(weights[3][0], weights[1][0], 1e-12);
  // A job 100 times longer than the next weighs as one just longer would: rank, not size.
  const auto just_longer =
      completionWeights({atBaseline(10), atBaseline(20), atBaseline(21), atBaseline(20)}, -1);
  EXPECT_NEAR(just_longer[2][0], weights[2][0], 1e-12);
}

TEST(CompletionTimeTest, ShorterJobGetsMoreGpusAndTheLongOnesKeepTheirFloor) {
  Snapshot fair = shortAndLong(2);
  fair.params.objective = Objective::kGoodput;
  const Decision by_goodput = schedule(fair);  // 4, 2, 2 GPUs in some order
  ASSERT_EQ(gpusOf(by_goodput, "long1") + gpusOf(by_goodput, "long2"), 6);
  ASSERT_EQ(gpusOf(by_goodput, "short"), 2);
  const Decision by_jct = schedule(shortAndLong(2));
  EXPECT_EQ(gpusOf(by_jct, "short"), 4);
  EXPECT_EQ(gpusOf(by_jct, "long1"), 2);  // guarded: half its goodput share at worst
  EXPECT_EQ(gpusOf(by_jct, "long2"), 2);
  // At guard 1 no job may fall below its goodput share: the goodput decision stands.
  const Decision tight = schedule(shortAndLong(1));
  for (const char* id : {"long1", "short", "long2"}) {
    EXPECT_EQ(gpusOf(tight, id), gpusOf(by_goodput, id)) << id;
  }
}

TEST(CompletionTimeTest, DecisionCarriesRemainingTimeOfDeclaredJobsOnly) {
  Snapshot snapshot = shortAndLong(2);
  snapshot.jobs.push_back(adaptiveJob("quiet", 1, 8, "t4"));
  const Decision decision = schedule(snapshot);
  ASSERT_TRUE(decision.allocations.at("short").remaining_s.has_value());
  EXPECT_GT(*decision.allocations.at("short").remaining_s, 0);
  if (decision.allocations.count("quiet")) {
    EXPECT_FALSE(decision.allocations.at("quiet").remaining_s.has_value());
  }
}

TEST(CompletionTimeTest, WithoutDeclarationsBothObjectivesDecideAlike) {
  Snapshot snapshot;
  snapshot.nodes = nodesOf("t4", 2, 8, "n");
  for (const char* id : {"a", "b", "c"}) snapshot.jobs.push_back(adaptiveJob(id, 1, 16, "t4"));
  const Decision by_jct = schedule(snapshot);
  snapshot.params.objective = Objective::kGoodput;
  const Decision by_goodput = schedule(snapshot);
  for (const char* id : {"a", "b", "c"}) {
    EXPECT_EQ(gpusOf(by_jct, id), gpusOf(by_goodput, id)) << id;
  }
}

TEST(CompletionTimeTest, AbsurdDeclarationsAreRefused) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const DeclaredLength& length : {DeclaredLength{-1, 10}, DeclaredLength{nan, 10},
                                       DeclaredLength{0, 0}, DeclaredLength{0, -5},
                                       DeclaredLength{0, std::numeric_limits<double>::infinity()}}) {
    Snapshot snapshot = shortAndLong(2);
    snapshot.jobs[0].length = length;
    EXPECT_THROW(schedule(snapshot), InvalidInput);
  }
  Snapshot snapshot = shortAndLong(0.5);
  EXPECT_THROW(schedule(snapshot), InvalidInput);
}

}  // namespace
}  // namespace pollux::policy
