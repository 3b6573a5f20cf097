// Solving allocation MILPs too big to solve exactly within a round.
//
// Small instances (at most `exact_jobs` jobs) are solved exactly by solveMilp. Larger ones by
// LP-guided rounding (solveByRounding, milp.hpp): GLPK's branch-and-bound costs seconds at
// thousands of GPUs while the LP relaxation leaves only a handful of jobs fractional.
// Above `partition_jobs` jobs, the jobs are also dealt round-robin into
// K = ceil(jobs / partition_jobs) groups (POP, Narayanan et al., SOSP 2021), each with 1/K of
// every type's free GPUs and whole nodes and 1/K of the time limit, since the simplex grows
// faster than linearly with the jobs; a greedy pass then hands out what the groups left.
// A group whose solve fails or times out does not fail the others: its jobs keep their
// current option (MilpInput::current).
#pragma once

#include <functional>

#include "milp.hpp"

namespace pollux::policy {

// How each group above exact_jobs is solved (solveByRounding; tests inject failures).
using GroupSolver = std::function<MilpResult(const MilpInput&)>;

struct SplitLimits {
  int exact_jobs = 50;        // up to this many jobs: exact MILP
  int partition_jobs = 250;  // jobs per rounding sub-problem; 0: one sub-problem
};

// The result is "optimal" only from the exact path. Fails as a whole (no choice) only when
// the exact MILP fails, or every group fails.
MilpResult solvePartitioned(const MilpInput& input, const SplitLimits& limits,
                            const GroupSolver& solve_group = solveByRounding);

}  // namespace pollux::policy
