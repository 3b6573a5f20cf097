// SPDX-License-Identifier: GPL-2.0-or-later
#include "milp.hpp"

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <random>

#include <gtest/gtest.h>

namespace pollux::policy {
namespace {

bool withinCapacity(const MilpInput& input, const std::vector<int>& chosen) {
  std::vector<MilpTypeCapacity> used(input.types.size());
  for (std::size_t job = 0; job < chosen.size(); ++job) {
    if (chosen[job] < 0) continue;
    const MilpOption& option = input.jobs[job][chosen[job]];
    used[option.type].gpus += option.gpus;
    used[option.type].whole_nodes += option.whole_nodes;
  }
  for (std::size_t type = 0; type < used.size(); ++type) {
    if (used[type].gpus > input.types[type].gpus) return false;
    if (used[type].whole_nodes > input.types[type].whole_nodes) return false;
  }
  const auto budgets = leftoverBudgets(input, chosen);
  return std::all_of(budgets.begin(), budgets.end(),
                     [](std::int64_t left) { return left >= 0; });
}

// Best total weight over every assignment (each job: one option or none).
double bruteForce(const MilpInput& input, std::vector<int>& chosen, std::size_t job) {
  if (job == input.jobs.size()) {
    if (!withinCapacity(input, chosen)) return -INFINITY;
    double total = 0;
    for (std::size_t j = 0; j < chosen.size(); ++j) {
      if (chosen[j] >= 0) total += input.jobs[j][chosen[j]].weight;
    }
    return total;
  }
  double best = -INFINITY;
  for (int option = -1; option < static_cast<int>(input.jobs[job].size()); ++option) {
    chosen[job] = option;
    best = std::max(best, bruteForce(input, chosen, job + 1));
  }
  chosen[job] = -1;
  return best;
}

MilpInput randomInstance(std::mt19937& random) {
  std::uniform_int_distribution<int> jobs(3, 5), options(1, 4), type(0, 1), power(0, 3),
      capacity(2, 12), nodes(0, 2);
  std::uniform_real_distribution<double> weight(-0.5, 5.0);
  MilpInput input;
  input.types = {{capacity(random), nodes(random)}, {capacity(random), nodes(random)}};
  input.jobs.resize(jobs(random));
  for (auto& job : input.jobs) {
    for (int i = options(random); i > 0; --i) {
      const int gpus = 1 << power(random);
      job.push_back({type(random), gpus, gpus >= 4 ? gpus / 4 : 0, weight(random)});
    }
  }
  return input;
}

// A random instance with two budgets of 1 to 8 GPUs' worth, each job in none, one or both,
// taking 1 to 3 units of each per GPU.
MilpInput randomInstanceWithBudgets(std::mt19937& random) {
  MilpInput input = randomInstance(random);
  std::uniform_int_distribution<int> capacity(1, 8), budgets(0, 3), per_gpu(1, 3);
  input.budgets = {capacity(random), 2 * capacity(random)};
  for (std::size_t job = 0; job < input.jobs.size(); ++job) {
    const int in = budgets(random);  // bit b: in budget b
    std::vector<BudgetShare>& of_job = input.job_budgets.emplace_back();
    for (int budget = 0; budget < 2; ++budget) {
      if (in & (1 << budget)) of_job.push_back({budget, per_gpu(random)});
    }
  }
  return input;
}

// A job's options on one type: 1, 2, 4 and 8 GPUs, each worth `per_gpu` less per GPU.
std::vector<MilpOption> scalingOptions(double per_gpu) {
  return {{0, 1, 0, per_gpu}, {0, 2, 0, 1.9 * per_gpu}, {0, 4, 0, 3.6 * per_gpu},
          {0, 8, 0, 6.8 * per_gpu}};
}

int gpusOf(const MilpInput& input, const std::vector<int>& chosen, std::size_t job) {
  return chosen[job] < 0 ? 0 : input.jobs[job][chosen[job]].gpus;
}

// Jobs 0 and 1 share a budget of 4 GPUs on 8 free ones; job 2 is in none.
MilpInput twoJobsInABudgetOfFour() {
  MilpInput input;
  input.types = {{8, 0}};
  input.budgets = {4};
  input.jobs = {scalingOptions(2.0), scalingOptions(2.0), scalingOptions(1.0)};
  input.job_budgets = {{BudgetShare{0}}, {BudgetShare{0}}, {}};
  return input;
}

// Jobs with one option each on one type: a knapsack whose branch and bound explores 1,051
// subproblems (even GPU counts, an odd capacity, gains close to proportional to the GPUs).
MilpInput hardKnapsack() {
  MilpInput input;
  int total = 0;
  for (int job = 0; job < 20; ++job) {
    const int gpus = 2 * (500 + (job * 263 + 17) % 501);
    const double weight = gpus * (1.0 + 0.01 * ((job * 59 + 3) % 101) / 100.0);
    input.jobs.push_back({{0, gpus, 0, weight}});
    total += gpus;
  }
  input.types = {{(total / 2) | 1, 0}};
  input.time_limit_s = 60;  // generous: only the work limits may stop these solves
  return input;
}

TEST(MilpTest, MatchesBruteForceOnRandomInstances) {
  std::mt19937 random(7);
  for (int instance = 0; instance < 200; ++instance) {
    const MilpInput input = randomInstance(random);
    const MilpResult result = solveMilp(input);
    ASSERT_EQ(result.outcome.describe(), "optimal") << "instance " << instance;
    std::vector<int> chosen(input.jobs.size(), -1);
    const double expected = bruteForce(input, chosen, 0);
    EXPECT_NEAR(result.objective, expected, 1e-6 * std::max(1.0, std::abs(expected)))
        << "instance " << instance;
    EXPECT_TRUE(withinCapacity(input, result.chosen)) << "instance " << instance;
  }
}

TEST(MilpTest, MatchesBruteForceWithBudgets) {
  std::mt19937 random(11);
  for (int instance = 0; instance < 200; ++instance) {
    const MilpInput input = randomInstanceWithBudgets(random);
    const MilpResult result = solveMilp(input);
    ASSERT_EQ(result.outcome.describe(), "optimal") << "instance " << instance;
    std::vector<int> chosen(input.jobs.size(), -1);
    const double expected = bruteForce(input, chosen, 0);
    EXPECT_NEAR(result.objective, expected, 1e-6 * std::max(1.0, std::abs(expected)))
        << "instance " << instance;
    EXPECT_TRUE(withinCapacity(input, result.chosen)) << "instance " << instance;
  }
}

TEST(MilpTest, JobsInABudgetShareItAndOthersTakeTheRest) {
  const MilpInput input = twoJobsInABudgetOfFour();
  const MilpResult result = solveMilp(input);
  ASSERT_EQ(result.outcome.describe(), "optimal");
  EXPECT_EQ(gpusOf(input, result.chosen, 0) + gpusOf(input, result.chosen, 1), 4);
  EXPECT_EQ(gpusOf(input, result.chosen, 2), 4);
  MilpInput unlimited = input;
  unlimited.budgets = {8};
  const MilpResult more = solveMilp(unlimited);
  EXPECT_GT(gpusOf(input, more.chosen, 0) + gpusOf(input, more.chosen, 1), 4);
}

TEST(MilpTest, RoundingAndGreedyFillRespectBudgets) {
  std::mt19937 random(13);
  for (int instance = 0; instance < 200; ++instance) {
    const MilpInput input = randomInstanceWithBudgets(random);
    const MilpResult rounded = solveByRounding(input);
    ASSERT_EQ(rounded.outcome.describe(), "feasible") << "instance " << instance;
    EXPECT_TRUE(withinCapacity(input, rounded.chosen)) << "instance " << instance;
    MilpResult filled;
    filled.chosen.assign(input.jobs.size(), -1);
    filled.kept.assign(input.jobs.size(), false);
    fillGreedily(input, filled);
    EXPECT_TRUE(withinCapacity(input, filled.chosen)) << "instance " << instance;
  }
  const MilpInput shared = twoJobsInABudgetOfFour();
  MilpResult filled;
  filled.chosen.assign(shared.jobs.size(), -1);
  filled.kept.assign(shared.jobs.size(), false);
  fillGreedily(shared, filled);
  EXPECT_LE(gpusOf(shared, filled.chosen, 0) + gpusOf(shared, filled.chosen, 1), 4);
  EXPECT_EQ(gpusOf(shared, filled.chosen, 2), 8 - gpusOf(shared, filled.chosen, 0) -
                                                gpusOf(shared, filled.chosen, 1));
}

TEST(MilpTest, KeptJobsPushOthersOutOfTheirBudget) {
  MilpInput input = twoJobsInABudgetOfFour();
  input.current = {1, -1, -1};  // job 0 runs on 2 GPUs
  MilpResult result;
  result.chosen = {-1, 2, 0};  // job 1 was given 4 GPUs without knowing
  result.kept = {false, false, false};
  keepCurrent(input, {0}, result);
  EXPECT_EQ(result.chosen, (std::vector<int>{1, -1, 0}));
  EXPECT_TRUE(result.kept[0]);
  EXPECT_EQ(result.kept_jobs, 1);
  EXPECT_DOUBLE_EQ(result.objective, 3.8 + 1.0);
  fillGreedily(input, result);
  EXPECT_EQ(result.chosen[0], 1);  // kept
  EXPECT_EQ(gpusOf(input, result.chosen, 1), 2);  // what the budget leaves
  EXPECT_TRUE(withinCapacity(input, result.chosen));
}

TEST(MilpTest, KeptJobsOverABudgetAreReleasedLightestFirst) {
  MilpInput input = twoJobsInABudgetOfFour();
  input.types = {{16, 0}};
  input.budgets = {5};         // lowered under the two running jobs
  input.current = {2, 1, -1};  // 4 GPUs (weight 7.2) and 2 GPUs (2.85)
  input.jobs[1] = scalingOptions(1.5);
  MilpResult result;
  result.chosen = {-1, -1, 0};
  result.kept = {false, false, false};
  keepCurrent(input, {0, 1}, result);
  EXPECT_EQ(result.chosen, (std::vector<int>{2, -1, 0}));
  EXPECT_EQ(result.kept, (std::vector<bool>{true, false, false}));
  EXPECT_EQ(result.kept_jobs, 1);
  EXPECT_TRUE(withinCapacity(input, result.chosen));
  fillGreedily(input, result);
  EXPECT_EQ(result.chosen[0], 2);
  EXPECT_EQ(gpusOf(input, result.chosen, 1), 1);  // released: what the budget leaves
  EXPECT_TRUE(withinCapacity(input, result.chosen));
}

TEST(MilpTest, NoOptionsIsTriviallyOptimal) {
  MilpInput input;
  input.types = {{4, 0}};
  input.jobs = {{}, {}};
  const MilpResult result = solveMilp(input);
  EXPECT_EQ(result.outcome.describe(), "optimal");
  EXPECT_EQ(result.chosen, (std::vector<int>{-1, -1}));
  EXPECT_EQ(result.columns, 0);
}

TEST(MilpTest, DominatedOptionsAreNotOffered) {
  MilpInput input;
  input.types = {{8, 0}};
  input.jobs = {{{0, 2, 0, 3.0}, {0, 4, 0, 2.0}, {0, 8, 0, 4.0}}};
  const MilpResult result = solveMilp(input);
  EXPECT_EQ(result.columns, 2);
  EXPECT_EQ(result.chosen, std::vector<int>{2});
}

TEST(MilpTest, NodeLimitGivesTheSameFeasibleChoiceOnEveryRun) {
  MilpInput input = hardKnapsack();
  input.node_limit = 50;
  const MilpResult first = solveMilp(input);
  EXPECT_EQ(first.outcome.describe(), "feasible");
  EXPECT_EQ(first.work_limit_hits, 1);
  EXPECT_EQ(first.time_limit_hits, 0);
  EXPECT_EQ(first.nodes, 50);
  EXPECT_TRUE(withinCapacity(input, first.chosen));
  for (int run = 1; run < 3; ++run) {
    const MilpResult again = solveMilp(input);
    EXPECT_EQ(again.outcome.describe(), "feasible") << run;
    EXPECT_EQ(again.chosen, first.chosen) << run;
    EXPECT_EQ(again.objective, first.objective) << run;
    EXPECT_EQ(again.nodes, first.nodes) << run;
    EXPECT_EQ(again.simplex_iterations, first.simplex_iterations) << run;
  }
  input.node_limit = 0;  // no limit: proven optimal, at least as good
  const MilpResult optimal = solveMilp(input);
  EXPECT_EQ(optimal.outcome.describe(), "optimal");
  EXPECT_EQ(optimal.work_limit_hits, 0);
  EXPECT_EQ(optimal.time_limit_hits, 0);
  EXPECT_GT(optimal.nodes, 50);
  EXPECT_GE(optimal.objective, first.objective);
}

TEST(MilpTest, DefaultLimitsLeaveTheHardKnapsackToTheSearch) {
  const MilpResult result = solveMilp(hardKnapsack());
  EXPECT_EQ(result.outcome.describe(), "optimal");
  EXPECT_EQ(result.work_limit_hits, 0);
  EXPECT_LT(result.nodes, MilpInput::kDefaultNodeLimit);
  EXPECT_LT(result.simplex_iterations, MilpInput::kDefaultSimplexIterations);
}

TEST(MilpTest, WallClockLimitIsCountedOnlyWhenHit) {
  MilpInput input = hardKnapsack();
  input.node_limit = 0;
  input.time_limit_s = 1e-3;  // GLPK checks it before each subproblem: stops at the root
  const MilpResult timed_out = solveMilp(input);
  EXPECT_EQ(timed_out.outcome.describe(), "time_limit");
  EXPECT_EQ(timed_out.time_limit_hits, 1);
  EXPECT_EQ(timed_out.work_limit_hits, 0);
  EXPECT_TRUE(timed_out.chosen.empty());
  input.time_limit_s = 60;
  input.node_limit = 50;
  const MilpResult limited = solveMilp(input);
  EXPECT_EQ(limited.time_limit_hits, 0);
  EXPECT_EQ(limited.work_limit_hits, 1);
}

TEST(MilpTest, RoundingReportsItsLpStoppingAtTheIterationLimit) {
  std::mt19937 random(3);
  MilpInput input = randomInstance(random);
  input.simplex_iterations = 1;
  const MilpResult limited = solveByRounding(input);
  EXPECT_EQ(limited.outcome.describe(), "work_limit");
  EXPECT_EQ(limited.work_limit_hits, 1);
  EXPECT_EQ(limited.time_limit_hits, 0);
  EXPECT_TRUE(limited.chosen.empty());
  input.simplex_iterations = MilpInput::kDefaultSimplexIterations;
  const MilpResult rounded = solveByRounding(input);
  EXPECT_EQ(rounded.outcome.describe(), "feasible");
  EXPECT_EQ(rounded.work_limit_hits, 0);
  EXPECT_TRUE(withinCapacity(input, rounded.chosen));
}

}  // namespace
}  // namespace pollux::policy
