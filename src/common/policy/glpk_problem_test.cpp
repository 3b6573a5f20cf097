// SPDX-License-Identifier: GPL-2.0-or-later
#include "glpk_problem.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace pollux::policy {
namespace {

// A knapsack whose branch and bound explores 1,051 subproblems: 20 items of even size, an odd
// capacity, gains close to proportional to the sizes (so LP bounds prune little).
void loadHardKnapsack(GlpkProblem& problem) {
  std::vector<std::pair<int, double>> sizes;
  double total = 0;
  for (int item = 0; item < 20; ++item) {
    const int size = 2 * (500 + (item * 263 + 17) % 501);
    const double gain = size * (1.0 + 0.01 * ((item * 59 + 3) % 101) / 100.0);
    sizes.push_back({problem.addBinaryColumn(gain), double(size)});
    total += size;
  }
  problem.addRowAtMost(sizes, double(int(total / 2) | 1));
}

std::vector<bool> chosenColumns(const GlpkProblem& problem) {
  std::vector<bool> chosen;
  for (int column = 0; column < problem.columns(); ++column) {
    chosen.push_back(problem.chosen(column));
  }
  return chosen;
}

// No integer solution (ten binaries, twice their sum equal to 9), but every LP relaxation
// until deep in the tree is feasible.
void loadParityProblem(GlpkProblem& problem) {
  std::vector<std::pair<int, double>> twice, minus_twice;
  for (int column = 0; column < 10; ++column) {
    const int added = problem.addBinaryColumn(1.0 + column);
    twice.push_back({added, 2.0});
    minus_twice.push_back({added, -2.0});
  }
  problem.addRowAtMost(twice, 9.0);
  problem.addRowAtMost(minus_twice, -9.0);
}

TEST(GlpkProblemTest, SolvesASmallKnapsack) {
  GlpkProblem problem;
  const int a = problem.addBinaryColumn(3.0);
  const int b = problem.addBinaryColumn(2.0);
  const int c = problem.addBinaryColumn(2.5);
  problem.addRowAtMost({{a, 4.0}, {b, 2.0}, {c, 3.0}}, 5.0);
  const SolveOutcome outcome = problem.solve({1.0});
  EXPECT_EQ(outcome.describe(), "optimal");
  EXPECT_DOUBLE_EQ(problem.objectiveValue(), 4.5);
  EXPECT_FALSE(problem.chosen(a));
  EXPECT_TRUE(problem.chosen(b));
  EXPECT_TRUE(problem.chosen(c));
}

TEST(GlpkProblemTest, SolvesTheLpRelaxationWithLargeWeights) {
  GlpkProblem problem;  // weights as large as objective.hpp's priorities
  const int a = problem.addBinaryColumn(3e7);
  const int b = problem.addBinaryColumn(2e7);
  const int c = problem.addBinaryColumn(2.5e7);
  problem.addRowAtMost({{a, 4.0}, {b, 2.0}, {c, 3.0}}, 6.0);
  EXPECT_EQ(problem.solveRelaxation({1.0}).describe(), "optimal");
  EXPECT_NEAR(problem.value(a), 0.25, 1e-9);
  EXPECT_NEAR(problem.value(b), 1.0, 1e-9);
  EXPECT_NEAR(problem.value(c), 1.0, 1e-9);
  EXPECT_NEAR(problem.objectiveValue(), 5.25e7, 1e-3);
}

TEST(GlpkProblemTest, GlpkInternalErrorIsReportedNotFatal) {
  {
    GlpkProblem problem;
    const int a = problem.addBinaryColumn(1.0);
    problem.addRowAtMost({{a, 1.0}, {a, 1.0}}, 1.0);  // GLPK rejects duplicate elements
    const SolveOutcome outcome = problem.solve({1.0});
    EXPECT_EQ(outcome.status, SolveStatus::kFailed);
    EXPECT_EQ(outcome.describe(), "failed: GLPK internal error");
    EXPECT_FALSE(outcome.hasSolution());
  }
  GlpkProblem next;  // GLPK works again afterwards
  next.addBinaryColumn(1.0);
  EXPECT_EQ(next.solve({1.0}).describe(), "optimal");
}

TEST(GlpkProblemTest, NodeLimitKeepsTheBestSolutionFoundTheSameOnEveryRun) {
  std::vector<bool> first;
  double first_objective = 0;
  for (int run = 0; run < 3; ++run) {
    GlpkProblem problem;
    loadHardKnapsack(problem);
    const SolveOutcome outcome = problem.solve({60.0, 50, 0});
    ASSERT_EQ(outcome.describe(), "feasible") << run;
    EXPECT_TRUE(outcome.work_limit_hit);
    EXPECT_FALSE(outcome.time_limit_hit);
    EXPECT_EQ(outcome.nodes, 50);
    if (run == 0) {
      first = chosenColumns(problem);
      first_objective = problem.objectiveValue();
    } else {
      EXPECT_EQ(chosenColumns(problem), first) << run;
      EXPECT_EQ(problem.objectiveValue(), first_objective) << run;
    }
  }
  GlpkProblem unlimited;
  loadHardKnapsack(unlimited);
  const SolveOutcome outcome = unlimited.solve({60.0});
  EXPECT_EQ(outcome.describe(), "optimal");
  EXPECT_FALSE(outcome.work_limit_hit);
  EXPECT_FALSE(outcome.time_limit_hit);
  EXPECT_GT(outcome.nodes, 50);
  EXPECT_GE(unlimited.objectiveValue(), first_objective);
}

TEST(GlpkProblemTest, NodeLimitWithoutASolutionIsAWorkLimit) {
  GlpkProblem limited;
  loadParityProblem(limited);
  const SolveOutcome outcome = limited.solve({60.0, 1, 0});
  EXPECT_EQ(outcome.describe(), "work_limit");
  EXPECT_EQ(outcome.status, SolveStatus::kWorkLimit);
  EXPECT_FALSE(outcome.hasSolution());
  EXPECT_TRUE(outcome.work_limit_hit);
  EXPECT_EQ(outcome.nodes, 1);
  GlpkProblem unlimited;
  loadParityProblem(unlimited);
  const SolveOutcome proven = unlimited.solve({60.0});
  EXPECT_EQ(proven.describe(), "infeasible");
  EXPECT_FALSE(proven.work_limit_hit);
  EXPECT_GT(proven.nodes, 1);
}

TEST(GlpkProblemTest, SimplexIterationLimitIsAWorkLimit) {
  for (const bool relaxation : {false, true}) {
    GlpkProblem limited;
    loadHardKnapsack(limited);
    const SolveLimits one_iteration{60.0, 0, 1};
    const SolveOutcome outcome =
        relaxation ? limited.solveRelaxation(one_iteration) : limited.solve(one_iteration);
    EXPECT_EQ(outcome.describe(), "work_limit") << relaxation;
    EXPECT_TRUE(outcome.work_limit_hit) << relaxation;
    EXPECT_FALSE(outcome.time_limit_hit) << relaxation;
    EXPECT_EQ(outcome.simplex_iterations, 1) << relaxation;
    GlpkProblem enough;
    loadHardKnapsack(enough);
    const SolveLimits thousand{60.0, 0, 1000};
    const SolveOutcome solved =
        relaxation ? enough.solveRelaxation(thousand) : enough.solve(thousand);
    EXPECT_EQ(solved.describe(), "optimal") << relaxation;
    EXPECT_FALSE(solved.work_limit_hit) << relaxation;
    EXPECT_GT(solved.simplex_iterations, 1) << relaxation;
  }
}

TEST(GlpkProblemTest, WallClockLimitIsReported) {
  // GLPK checks the time before each subproblem: with 1 ms, the search stops at the root.
  GlpkProblem problem;
  loadHardKnapsack(problem);
  const SolveOutcome outcome = problem.solve({1e-3});
  EXPECT_EQ(outcome.describe(), "time_limit");
  EXPECT_TRUE(outcome.time_limit_hit);
  EXPECT_FALSE(outcome.work_limit_hit);
  EXPECT_FALSE(outcome.hasSolution());
}

TEST(GlpkProblemTest, DescribesEveryStatus) {
  EXPECT_EQ((SolveOutcome{SolveStatus::kOptimal, ""}).describe(), "optimal");
  EXPECT_EQ((SolveOutcome{SolveStatus::kFeasible, ""}).describe(), "feasible");
  EXPECT_EQ((SolveOutcome{SolveStatus::kWorkLimit, ""}).describe(), "work_limit");
  EXPECT_EQ((SolveOutcome{SolveStatus::kTimeLimit, ""}).describe(), "time_limit");
  EXPECT_EQ((SolveOutcome{SolveStatus::kInfeasible, ""}).describe(), "infeasible");
  EXPECT_EQ((SolveOutcome{SolveStatus::kFailed, "x"}).describe(), "failed: x");
}

}  // namespace
}  // namespace pollux::policy
