// SPDX-License-Identifier: GPL-2.0-or-later
// The allocation MILP: each job picks at most one weighted option; GPUs and whole nodes of
// each GPU type stay within what is free, and the GPUs of the jobs sharing a budget within it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "glpk_problem.hpp"

namespace pollux::policy {

struct MilpOption {
  int type = 0;         // index into MilpInput::types
  int gpus = 0;         // GPUs of that type it uses
  int whole_nodes = 0;  // whole nodes of that type it uses (multi-node options)
  double weight = 0;    // objective gain over leaving the job unallocated
  int nodes = 1;        // nodes it spans
};

// A job's share of one budget: the budget's units (GPUs, CPUs, MB of memory, nodes) each GPU
// and each node of the job takes.
struct BudgetShare {
  int budget = 0;  // index into MilpInput::budgets
  std::int64_t per_gpu = 1;
  std::int64_t per_node = 0;
  std::int64_t unitsFor(int gpus, int nodes) const { return gpus * per_gpu + nodes * per_node; }
};

struct MilpTypeCapacity {
  int gpus = 0;
  int whole_nodes = 0;  // largest nodes entirely free
};

struct MilpInput {
  std::vector<MilpTypeCapacity> types;
  // Units of each budget the jobs sharing it may hold together (>= 0).
  std::vector<std::int64_t> budgets;
  std::vector<std::vector<MilpOption>> jobs;  // options per job
  std::vector<int> current;  // per job: index of the option it runs with now, -1 none (or empty)
  // Per job: its shares of distinct budgets (or empty: no job counts against any).
  std::vector<std::vector<BudgetShare>> job_budgets;
  // Limits, each per GLPK solve (solveMilp: one; solveByRounding: the LP relaxation, then the
  // MILP over its fractional jobs; solvePartitioned: those of every group), never divided or
  // shortened by the time other solves took.
  // The work limits bound the search by its own work, so the same input gets the same answer
  // however busy the host is. Stopped at node_limit, a MILP's best solution so far is used
  // ("feasible"); without one, or stopped at simplex_iterations, the solve ends "work_limit".
  // <= 0: no limit.
  int node_limit = kDefaultNodeLimit;  // branch-and-bound subproblems (root included)
  // Simplex iterations of an LP relaxation, and of a MILP's root LP (the re-optimisations at
  // the other subproblems are bounded through node_limit).
  int simplex_iterations = kDefaultSimplexIterations;
  // The wall-clock safety net: the work limits normally end a solve long before it. When hit,
  // the solve ends "time_limit" (any solution found is not used) and
  // MilpResult::time_limit_hits counts it: the result then depends on the host's speed.
  double time_limit_s = 10;

  // The defaults sit well above the work of ordinary rounds (the tests, pollux-sim workloads
  // and bench/policy-latency), so they stop only pathological instances, within a fraction of
  // a second of CPU, and a node-limited solve still has a near-optimal solution to use
  // (docs/design.md section 5.3). A single group much larger than partition_jobs
  // (partition_jobs = 0) needs more simplex iterations than the default allows.
  static constexpr int kDefaultNodeLimit = 2000;
  static constexpr int kDefaultSimplexIterations = 10000;
};

struct MilpResult {
  SolveOutcome outcome;
  std::vector<int> chosen;  // per job: index of its option, or -1 (only if outcome has a solution)
  std::vector<bool> kept;   // per job: its sub-problem failed, chosen is its current option
  double objective = 0;     // sum of the chosen weights
  int columns = 0;
  int partitions = 1;       // sub-problems solved (see partition.hpp)
  int failed_partitions = 0;  // sub-problems without a solution (failed, or stopped at a
                              // limit before finding one): their jobs are kept
  int kept_jobs = 0;          // jobs kept on their current option because their part failed
  int fractional_jobs = 0;    // jobs the LP relaxation left fractional (solveByRounding)
  // GLPK solves (over every step and group) that a work limit stopped (MilpInput::node_limit,
  // simplex_iterations), and that the wall-clock limit stopped: any time_limit_hits make the
  // result depend on the host's speed, and are worth logging.
  int work_limit_hits = 0;
  int time_limit_hits = 0;
  int nodes = 0;               // branch-and-bound subproblems explored, every solve together
  int simplex_iterations = 0;  // simplex iterations, every solve together
};

// Options that use more GPUs of a type than another option of the same job and type without
// a higher weight are dropped first (never needed at an optimum); then GLPK solves the rest:
// "optimal", "feasible" (the node limit stopped the search after a solution was found),
// "work_limit", "time_limit", "infeasible" or "failed: ...".
MilpResult solveMilp(const MilpInput& input);

// LP-guided rounding, for instances too big for solveMilp within a round: solves the LP
// relaxation once, fixes every job the LP assigns integrally, solves the few fractional jobs
// exactly in the capacity left, then fillGreedily(). "feasible" at best (no optimality proof);
// if the small MILP finds no solution (work or time limit, failure) the fractional jobs keep
// their current option. Fails only if the LP fails ("work_limit", "time_limit", ...).
MilpResult solveByRounding(const MilpInput& input);

// The budgets `job` counts against (none when input.job_budgets is empty).
const std::vector<BudgetShare>& budgetsOf(const MilpInput& input, std::size_t job);

// GPUs and whole nodes per type that the chosen options leave free (negative: over capacity).
std::vector<MilpTypeCapacity> leftoverCapacity(const MilpInput& input,
                                               const std::vector<int>& chosen);

// Units per budget that the chosen options leave (negative: over the budget).
std::vector<std::int64_t> leftoverBudgets(const MilpInput& input, const std::vector<int>& chosen);

// Marks `jobs` kept on their current option (input.current) and, where a type or a budget is
// then over capacity, drops the lightest choices of jobs not kept until it fits. Kept jobs
// whose current options alone overflow a budget (a budget lowered under running jobs) are
// released, lightest first: no longer kept, without a choice, for fillGreedily. Sets
// result.objective to the total weight of the choices then.
void keepCurrent(const MilpInput& input, const std::vector<int>& jobs, MilpResult& result);

// Repeatedly applies the single option change of a job not kept with the largest gain that
// fits in the free capacity and the job's budgets. Each change strictly raises the objective,
// so this ends.
void fillGreedily(const MilpInput& input, MilpResult& result);

}  // namespace pollux::policy
