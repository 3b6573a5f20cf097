// The allocation MILP: each job picks at most one weighted option; GPUs and whole nodes of
// each GPU type stay within what is free.
#pragma once

#include <vector>

#include "glpk_problem.hpp"

namespace pollux::policy {

struct MilpOption {
  int type = 0;         // index into MilpInput::types
  int gpus = 0;         // GPUs of that type it uses
  int whole_nodes = 0;  // whole nodes of that type it uses (multi-node options)
  double weight = 0;    // objective gain over leaving the job unallocated
};

struct MilpTypeCapacity {
  int gpus = 0;
  int whole_nodes = 0;  // largest nodes entirely free
};

struct MilpInput {
  std::vector<MilpTypeCapacity> types;
  std::vector<std::vector<MilpOption>> jobs;  // options per job
  std::vector<int> current;  // per job: index of the option it runs with now, -1 none (or empty)
  double time_limit_s = 10;
};

struct MilpResult {
  SolveOutcome outcome;
  std::vector<int> chosen;  // per job: index of its option, or -1 (only if outcome has a solution)
  std::vector<bool> kept;   // per job: its sub-problem failed, chosen is its current option
  double objective = 0;     // sum of the chosen weights
  int columns = 0;
  int partitions = 1;       // sub-problems solved (see partition.hpp)
  int failed_partitions = 0;  // sub-problems that failed or timed out (their jobs are kept)
  int kept_jobs = 0;          // jobs kept on their current option because their part failed
  int fractional_jobs = 0;    // jobs the LP relaxation left fractional (solveByRounding)
};

// Options that use more GPUs of a type than another option of the same job and type without
// a higher weight are dropped first (never needed at an optimum); then GLPK solves the rest.
MilpResult solveMilp(const MilpInput& input);

// LP-guided rounding, for instances too big for solveMilp within a round: solves the LP
// relaxation once, fixes every job the LP assigns integrally, solves the few fractional jobs
// exactly in the capacity left, then fillGreedily(). "feasible" at best (no optimality proof);
// if the small MILP fails the fractional jobs keep their current option. Fails only if the
// LP fails.
MilpResult solveByRounding(const MilpInput& input);

// GPUs and whole nodes per type that the chosen options leave free (negative: over capacity).
std::vector<MilpTypeCapacity> leftoverCapacity(const MilpInput& input,
                                               const std::vector<int>& chosen);

// Marks `jobs` kept on their current option (input.current) and, where a type is then over
// capacity, drops the lightest choices of jobs not kept until it fits.
void keepCurrent(const MilpInput& input, const std::vector<int>& jobs, MilpResult& result);

// Repeatedly applies the single option change of a job not kept with the largest gain that
// fits in the free capacity. Each change strictly raises the objective, so this ends.
void fillGreedily(const MilpInput& input, MilpResult& result);

}  // namespace pollux::policy
