#include "policy/glpk_problem.hpp"

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
