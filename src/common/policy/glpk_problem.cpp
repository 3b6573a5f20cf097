// SPDX-License-Identifier: GPL-2.0-or-later
#include "glpk_problem.hpp"

#include <glpk.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <csetjmp>

namespace pollux::policy {

// How far glp_intopt's branch and bound may go. Counted at GLP_ISELECT, which GLPK raises once
// before each subproblem it explores (the root included).
struct BranchAndBoundSearch {
  int node_limit;  // 0: none
  int nodes;       // subproblems explored so far
  bool stopped;    // the callback stopped the search at node_limit
};

namespace {

// Where GLPK's error hook jumps back to; GLPK's own frames are C and hold no destructors.
struct ErrorTrap {
  std::jmp_buf resume;
};

extern "C" void onGlpkError(void* info) {
  std::longjmp(static_cast<ErrorTrap*>(info)->resume, 1);
}

// GLPK keeps one environment per thread and frees it only in glp_free_env(). This frees it
// when a thread that solved exits (valgrind found the plugin's scheduler thread losing it).
struct ThreadGlpkEnvironment {
  ~ThreadGlpkEnvironment() { glp_free_env(); }
};

glp_prob* createProblem() {
  thread_local ThreadGlpkEnvironment environment;
  return glp_create_prob();
}

extern "C" void onSearchEvent(glp_tree* tree, void* info) {
  if (glp_ios_reason(tree) != GLP_ISELECT) return;
  auto& search = *static_cast<BranchAndBoundSearch*>(info);
  if (search.node_limit > 0 && search.nodes >= search.node_limit) {
    search.stopped = true;
    glp_ios_terminate(tree);  // glp_intopt returns GLP_ESTOP, keeping its best solution
    return;
  }
  ++search.nodes;
}

int toMilliseconds(double seconds) {
  if (!(seconds > 0)) return 1;
  return static_cast<int>(std::clamp(std::ceil(seconds * 1000.0), 1.0, double(INT_MAX)));
}

}  // namespace

std::string SolveOutcome::describe() const {
  switch (status) {
    case SolveStatus::kOptimal: return "optimal";
    case SolveStatus::kFeasible: return "feasible";
    case SolveStatus::kWorkLimit: return "work_limit";
    case SolveStatus::kTimeLimit: return "time_limit";
    case SolveStatus::kInfeasible: return "infeasible";
    case SolveStatus::kFailed: break;
  }
  return "failed: " + detail;
}

bool SolveOutcome::hasSolution() const {
  return status == SolveStatus::kOptimal || status == SolveStatus::kFeasible;
}

GlpkProblem::GlpkProblem() : problem_(createProblem()) {}

GlpkProblem::~GlpkProblem() {
  if (problem_ != nullptr) glp_delete_prob(problem_);
}

int GlpkProblem::addBinaryColumn(double objective) {
  objective_.push_back(objective);
  return columns() - 1;
}

void GlpkProblem::addRowAtMost(const std::vector<std::pair<int, double>>& terms, double bound) {
  rows_.push_back({terms, bound});
}

void GlpkProblem::flattenMatrix() {
  // GLPK arrays are 1-based: element 0 is unused.
  row_index_.assign(1, 0);
  column_index_.assign(1, 0);
  coefficient_.assign(1, 0.0);
  for (std::size_t row = 0; row < rows_.size(); ++row) {
    for (const auto& [column, coefficient] : rows_[row].terms) {
      row_index_.push_back(int(row) + 1);
      column_index_.push_back(column + 1);
      coefficient_.push_back(coefficient);
    }
  }
}

void GlpkProblem::load(bool relaxation) {
  glp_term_out(GLP_OFF);
  glp_set_obj_dir(problem_, GLP_MAX);
  if (columns() > 0) glp_add_cols(problem_, columns());
  // Priority weights reach 1e7 (objective.hpp): dividing by the largest keeps GLPK's
  // tolerances meaningful without changing the optimum.
  double largest = 0;
  for (double objective : objective_) largest = std::max(largest, std::fabs(objective));
  const double scale = largest > 0 ? 1.0 / largest : 1.0;
  for (int column = 0; column < columns(); ++column) {
    if (relaxation) {
      glp_set_col_bnds(problem_, column + 1, GLP_DB, 0.0, 1.0);
    } else {
      glp_set_col_kind(problem_, column + 1, GLP_BV);
    }
    glp_set_obj_coef(problem_, column + 1, objective_[column] * scale);
  }
  const int rows = static_cast<int>(rows_.size());
  if (rows > 0) glp_add_rows(problem_, rows);
  for (int row = 0; row < rows; ++row) {
    glp_set_row_bnds(problem_, row + 1, GLP_UP, 0.0, rows_[row].bound);
  }
  glp_load_matrix(problem_, static_cast<int>(coefficient_.size()) - 1, row_index_.data(),
                  column_index_.data(), coefficient_.data());
  glp_scale_prob(problem_, GLP_SF_AUTO);
}

// Only GLPK calls and trivially destructible locals here: GLPK's error hook may longjmp out.
// GLPK spends its work the same way for the same problem and parameters; only the time limits
// (tm_lim) depend on the host.
SolveOutcome GlpkProblem::loadAndRun(const SolveLimits& limits, bool relaxation,
                                     BranchAndBoundSearch& search) {
  const auto start = std::chrono::steady_clock::now();
  load(relaxation);
  glp_smcp simplex;
  glp_init_smcp(&simplex);
  simplex.msg_lev = GLP_MSG_OFF;
  // The MILP's root LP runs without the LP presolver: glp_intopt goes on from its basis.
  simplex.presolve = relaxation ? GLP_ON : GLP_OFF;
  if (limits.simplex_iterations > 0) simplex.it_lim = limits.simplex_iterations;
  simplex.tm_lim = toMilliseconds(limits.time_limit_s);
  const int simplex_code = glp_simplex(problem_, &simplex);
  SolveOutcome outcome = translateSimplex(simplex_code);
  if (relaxation || outcome.status != SolveStatus::kOptimal) {
    outcome.simplex_iterations = glp_get_it_cnt(problem_);
    return outcome;
  }
  glp_iocp parameters;
  glp_init_iocp(&parameters);
  parameters.msg_lev = GLP_MSG_OFF;
  parameters.presolve = GLP_OFF;
  const double spent_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  parameters.tm_lim = toMilliseconds(limits.time_limit_s - spent_s);
  parameters.cb_func = onSearchEvent;
  parameters.cb_info = &search;
  const int intopt_code = glp_intopt(problem_, &parameters);
  outcome = translateIntopt(intopt_code, search.stopped);
  outcome.nodes = search.nodes;
  outcome.simplex_iterations = glp_get_it_cnt(problem_);
  return outcome;
}

SolveOutcome GlpkProblem::translateIntopt(int intopt_code, bool stopped_by_node_limit) const {
  switch (intopt_code) {
    case 0:
    case GLP_EMIPGAP:
      switch (glp_mip_status(problem_)) {
        case GLP_OPT: return {SolveStatus::kOptimal, ""};
        case GLP_FEAS: return {SolveStatus::kFeasible, ""};
        case GLP_NOFEAS: return {SolveStatus::kInfeasible, ""};
        default: return {SolveStatus::kFailed, "no integer solution found"};
      }
    case GLP_ESTOP:
      if (!stopped_by_node_limit) return {SolveStatus::kFailed, "search stopped"};
      if (glp_mip_status(problem_) == GLP_FEAS) return {SolveStatus::kFeasible, "", true};
      return {SolveStatus::kWorkLimit, "", true};
    case GLP_ETMLIM: return {SolveStatus::kTimeLimit, "", false, true};
    case GLP_ENOPFS: return {SolveStatus::kInfeasible, ""};
    case GLP_ENODFS: return {SolveStatus::kFailed, "LP relaxation is unbounded"};
    case GLP_EBOUND: return {SolveStatus::kFailed, "invalid bounds"};
    case GLP_EROOT: return {SolveStatus::kFailed, "no optimal basis for the LP relaxation"};
    case GLP_EFAIL: return {SolveStatus::kFailed, "solver failure"};
    default: return {SolveStatus::kFailed, "glp_intopt returned " + std::to_string(intopt_code)};
  }
}

SolveOutcome GlpkProblem::translateSimplex(int simplex_code) const {
  switch (simplex_code) {
    case 0:
      switch (glp_get_status(problem_)) {
        case GLP_OPT: return {SolveStatus::kOptimal, ""};
        case GLP_NOFEAS: return {SolveStatus::kInfeasible, ""};
        case GLP_UNBND: return {SolveStatus::kFailed, "LP relaxation is unbounded"};
        default: return {SolveStatus::kFailed, "LP relaxation not solved to optimality"};
      }
    case GLP_EITLIM: return {SolveStatus::kWorkLimit, "", true};
    case GLP_ETMLIM: return {SolveStatus::kTimeLimit, "", false, true};
    case GLP_ENOPFS: return {SolveStatus::kInfeasible, ""};
    case GLP_ENODFS: return {SolveStatus::kFailed, "LP relaxation is unbounded"};
    case GLP_EBOUND: return {SolveStatus::kFailed, "invalid bounds"};
    default: return {SolveStatus::kFailed, "glp_simplex returned " + std::to_string(simplex_code)};
  }
}

void GlpkProblem::readSolution(bool relaxation) {
  values_.assign(objective_.size(), 0.0);
  objective_value_ = 0;
  for (int column = 0; column < columns(); ++column) {
    values_[column] = relaxation ? glp_get_col_prim(problem_, column + 1)
                                 : glp_mip_col_val(problem_, column + 1);
    objective_value_ += values_[column] * objective_[column];
  }
}

SolveOutcome GlpkProblem::solve(const SolveLimits& limits) { return run(limits, false); }

SolveOutcome GlpkProblem::solveRelaxation(const SolveLimits& limits) { return run(limits, true); }

SolveOutcome GlpkProblem::run(const SolveLimits& limits, bool relaxation) {
  if (problem_ == nullptr) return {SolveStatus::kFailed, "GLPK environment was lost earlier"};
  flattenMatrix();
  BranchAndBoundSearch search{limits.node_limit > 0 ? limits.node_limit : 0, 0, false};
  ErrorTrap trap;
  glp_error_hook(onGlpkError, &trap);
  if (setjmp(trap.resume) != 0) {
    // GLPK's state is undefined after an error: drop the whole environment, problem included.
    problem_ = nullptr;
    glp_free_env();
    return {SolveStatus::kFailed, "GLPK internal error"};
  }
  const SolveOutcome outcome = loadAndRun(limits, relaxation, search);
  if (outcome.hasSolution()) readSolution(relaxation);
  glp_error_hook(nullptr, nullptr);
  return outcome;
}

}  // namespace pollux::policy
