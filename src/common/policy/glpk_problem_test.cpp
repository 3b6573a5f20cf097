#include "glpk_problem.hpp"

#include <gtest/gtest.h>

namespace pollux::policy {
namespace {

TEST(GlpkProblemTest, SolvesASmallKnapsack) {
  GlpkProblem problem;
  const int a = problem.addBinaryColumn(3.0);
  const int b = problem.addBinaryColumn(2.0);
  const int c = problem.addBinaryColumn(2.5);
  problem.addRowAtMost({{a, 4.0}, {b, 2.0}, {c, 3.0}}, 5.0);
  const SolveOutcome outcome = problem.solve(1.0);
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
  EXPECT_EQ(problem.solveRelaxation(1.0).describe(), "optimal");
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
    const SolveOutcome outcome = problem.solve(1.0);
    EXPECT_EQ(outcome.status, SolveStatus::kFailed);
    EXPECT_EQ(outcome.describe(), "failed: GLPK internal error");
    EXPECT_FALSE(outcome.hasSolution());
  }
  GlpkProblem next;  // GLPK works again afterwards
  next.addBinaryColumn(1.0);
  EXPECT_EQ(next.solve(1.0).describe(), "optimal");
}

TEST(GlpkProblemTest, DescribesEveryStatus) {
  EXPECT_EQ((SolveOutcome{SolveStatus::kFeasible, ""}).describe(), "feasible");
  EXPECT_EQ((SolveOutcome{SolveStatus::kTimeLimit, ""}).describe(), "time_limit");
  EXPECT_EQ((SolveOutcome{SolveStatus::kInfeasible, ""}).describe(), "infeasible");
  EXPECT_EQ((SolveOutcome{SolveStatus::kFailed, "x"}).describe(), "failed: x");
}

}  // namespace
}  // namespace pollux::policy
