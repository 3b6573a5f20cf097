// SPDX-License-Identifier: GPL-2.0-or-later
// A small RAII wrapper around one GLPK integer program with binary columns and <= rows.
// GLPK internal errors never abort the process: they are trapped and reported as a status.
//
// Same input, same answer: a solve is bounded by its own work (simplex iterations and
// branch-and-bound subproblems, SolveLimits), which GLPK spends the same way on every run, so
// the outcome does not depend on how busy the host is. The wall-clock limit is only a safety
// net; hitting it makes the outcome time-dependent, which SolveOutcome::time_limit_hit tells.
#pragma once

#include <string>
#include <utility>
#include <vector>

struct glp_prob;

namespace pollux::policy {

struct BranchAndBoundSearch;  // glp_intopt's callback state (glpk_problem.cpp)

// kFeasible: a solution without optimality proof (the node limit stopped the search after it
// had found one). kWorkLimit: a work limit stopped the solve before any solution was found.
// kTimeLimit: the wall-clock safety net stopped it (any solution found is not used).
enum class SolveStatus { kOptimal, kFeasible, kWorkLimit, kTimeLimit, kInfeasible, kFailed };

// What bounds one solve. A limit <= 0 means none.
struct SolveLimits {
  double time_limit_s = 10;    // wall clock, the safety net (at least 1 ms is given)
  int node_limit = 0;          // branch-and-bound subproblems solve() may explore, root included
  int simplex_iterations = 0;  // simplex iterations of solveRelaxation()'s LP and of solve()'s
                               // root LP (the re-optimisations at the other nodes are bounded
                               // through node_limit)
};

struct SolveOutcome {
  SolveStatus status = SolveStatus::kFailed;
  std::string detail;  // why it failed, for kFailed
  bool work_limit_hit = false;  // node_limit or simplex_iterations stopped the solve
  bool time_limit_hit = false;  // the wall-clock limit stopped it (status kTimeLimit)
  int nodes = 0;                // branch-and-bound subproblems explored (solve())
  int simplex_iterations = 0;   // simplex iterations, all LPs of the solve together
  // "optimal", "feasible", "work_limit", "time_limit", "infeasible" or "failed: <detail>".
  std::string describe() const;
  // Whether a solution is available (kOptimal or kFeasible).
  bool hasSolution() const;
};

// One maximisation problem over binary columns. Columns and rows are buffered and handed to
// GLPK inside solve(), where every GLPK call runs under GLPK's error hook.
// A trapped GLPK error frees the whole GLPK environment of the calling thread, so at most one
// GlpkProblem per thread should be alive at a time.
class GlpkProblem {
 public:
  GlpkProblem();
  ~GlpkProblem();
  GlpkProblem(const GlpkProblem&) = delete;
  GlpkProblem& operator=(const GlpkProblem&) = delete;

  // Adds a binary column with this objective coefficient; returns its 0-based index.
  int addBinaryColumn(double objective);
  // Adds the row sum(coefficient * column) <= bound. A column must appear at most once per
  // row (GLPK rejects duplicates, which solve() reports as a failure).
  void addRowAtMost(const std::vector<std::pair<int, double>>& terms, double bound);

  int columns() const { return static_cast<int>(objective_.size()); }

  // Solves the LP relaxation with glp_simplex (at most limits.simplex_iterations), then
  // branches and bounds with glp_intopt from its optimal basis, exploring at most
  // limits.node_limit subproblems: stopped there, the best solution found so far is kFeasible
  // (kWorkLimit without one). Call it once per problem (either solve() or solveRelaxation()).
  SolveOutcome solve(const SolveLimits& limits);
  // Solves only the LP relaxation (columns in [0, 1]) with glp_simplex (presolver on, at most
  // limits.simplex_iterations); kOptimal on success.
  SolveOutcome solveRelaxation(const SolveLimits& limits);

  // Valid after a solve() whose outcome hasSolution().
  bool chosen(int column) const { return values_.at(column) > 0.5; }
  // Valid after a solve() or solveRelaxation() with a solution: the column's value.
  double value(int column) const { return values_.at(column); }
  double objectiveValue() const { return objective_value_; }

 private:
  struct Row {
    std::vector<std::pair<int, double>> terms;
    double bound;
  };

  void flattenMatrix();
  // Loads the model (objective scaled by 1 / its largest |coefficient|, rows and columns
  // scaled by GLPK).
  void load(bool relaxation);
  // Loads and solves; returns the outcome (status, detail and the limit flags set).
  // May longjmp out on error.
  SolveOutcome loadAndRun(const SolveLimits& limits, bool relaxation,
                          BranchAndBoundSearch& search);
  SolveOutcome run(const SolveLimits& limits, bool relaxation);
  SolveOutcome translateIntopt(int intopt_code, bool stopped_by_node_limit) const;
  SolveOutcome translateSimplex(int simplex_code) const;
  void readSolution(bool relaxation);

  glp_prob* problem_;
  std::vector<double> objective_;
  std::vector<Row> rows_;
  std::vector<int> row_index_;  // the constraint matrix in GLPK's triplet form
  std::vector<int> column_index_;
  std::vector<double> coefficient_;
  std::vector<double> values_;
  double objective_value_ = 0;
};

}  // namespace pollux::policy
