// POP-style decomposition of a large allocation MILP (Narayanan et al., "Solving Large-Scale
// Granular Resource Allocation Problems Efficiently with POP", SOSP 2021).
//
// One exact MILP over thousands of jobs spends seconds in GLPK's simplex and branch-and-bound,
// far beyond the 1 s budget of a round at 16,384 GPUs. Above `jobs_per_partition` jobs the
// jobs are dealt round-robin into K = ceil(jobs / jobs_per_partition) groups; each group gets
// 1/K of every type's free GPUs and whole nodes and is solved exactly on its own. A greedy pass
// then hands the GPUs the groups left over to the jobs that gain most from them.
#pragma once

#include "policy/milp.hpp"

namespace pollux::policy {

// Solves `input` exactly if it has at most `jobs_per_partition` jobs, else by partitions as
// above (the result is then at best "feasible": the decomposition proves no optimality).
// Fails as a whole, keeping no partial choice, if any partition fails.
MilpResult solvePartitioned(const MilpInput& input, int jobs_per_partition);

}  // namespace pollux::policy
