// A small RAII wrapper around one GLPK integer program with binary columns and <= rows.
// GLPK internal errors never abort the process: they are trapped and reported as a status.
#pragma once

#include <string>
#include <utility>
#include <vector>

struct glp_prob;

namespace pollux::policy {

enum class SolveStatus { kOptimal, kFeasible, kTimeLimit, kInfeasible, kFailed };

struct SolveOutcome {
  SolveStatus status = SolveStatus::kFailed;
  std::string detail;  // why it failed, for kFailed
  // "optimal", "feasible", "time_limit", "infeasible" or "failed: <detail>".
  std::string describe() const;
  // Whether an integer solution is available.
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

  // Solves with glp_intopt (presolver on) within `time_limit_s` seconds of wall time.
  // Call it once per problem (either solve() or solveRelaxation()).
  SolveOutcome solve(double time_limit_s);
  // Solves only the LP relaxation (columns in [0, 1]) with glp_simplex; kOptimal on success.
  SolveOutcome solveRelaxation(double time_limit_s);

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
  // scaled by GLPK) and runs glp_intopt, or glp_simplex if `relaxation`; returns its code.
  // May longjmp out on error.
  int loadAndRun(int time_limit_ms, bool relaxation);
  SolveOutcome run(double time_limit_s, bool relaxation);
  SolveOutcome translate(int intopt_code) const;
  SolveOutcome translateRelaxation(int simplex_code) const;
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
