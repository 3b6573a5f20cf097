// The allocation MILP: each job picks at most one weighted option; GPUs and whole nodes of
// each GPU type stay within what is free.
#pragma once

#include <vector>

#include "policy/glpk_problem.hpp"

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
  double time_limit_s = 10;
};

struct MilpResult {
  SolveOutcome outcome;
  std::vector<int> chosen;  // per job: index of its option, or -1 (only if outcome has a solution)
  double objective = 0;     // sum of the chosen weights
  int columns = 0;
  int partitions = 1;       // sub-problems solved (see partition.hpp)
};

// Options that use more GPUs of a type than another option of the same job and type without
// a higher weight are dropped first (never needed at an optimum); then GLPK solves the rest.
MilpResult solveMilp(const MilpInput& input);

}  // namespace pollux::policy
