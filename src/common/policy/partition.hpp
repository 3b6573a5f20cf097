// SPDX-License-Identifier: GPL-2.0-or-later
// Solving allocation MILPs too big to solve exactly within a round.
//
// Small instances (at most `exact_jobs` jobs) are solved exactly by solveMilp. Larger ones by
// LP-guided rounding (solveByRounding, milp.hpp): GLPK's branch-and-bound costs seconds at
// thousands of GPUs while the LP relaxation leaves only a handful of jobs fractional.
// Above `partition_jobs` jobs, the jobs are also dealt round-robin into
// K = ceil(jobs / partition_jobs) groups (POP, Narayanan et al., SOSP 2021), each with 1/K of
// every type's free GPUs and whole nodes and of every budget, since the simplex grows faster
// than linearly with the jobs; a greedy pass then hands out what the groups left.
// Every group gets the input's limits whole (MilpInput::node_limit, simplex_iterations and
// the wall-clock safety net time_limit_s, per GLPK solve), so the result is the same on every
// run unless a solve hits the safety net.
// A group whose solve fails or stops at a limit without a solution does not fail the others:
// its jobs keep their current option (MilpInput::current). MilpResult sums the groups'
// work_limit_hits, time_limit_hits, nodes and simplex_iterations.
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
