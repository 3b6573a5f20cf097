// SPDX-License-Identifier: GPL-2.0-or-later
#include "partition.hpp"

#include <cstddef>

namespace pollux::policy {

namespace {

// Part `k` of `total` split into `parts` near-equal integer shares that sum to `total`.
std::int64_t shareOf(std::int64_t total, int k, int parts) {
  return total * (k + 1) / parts - total * k / parts;
}

// Jobs k, k + parts, k + 2 * parts, ... with their share of every type's capacity and of
// every budget (indexed as in the input) and the input's limits (neither divided among the
// groups nor shortened by the time earlier groups took: each group's result depends on its
// own input only).
MilpInput partitionOf(const MilpInput& input, int k, int parts) {
  MilpInput part;
  for (const MilpTypeCapacity& capacity : input.types) {
    part.types.push_back(
        {int(shareOf(capacity.gpus, k, parts)), int(shareOf(capacity.whole_nodes, k, parts))});
  }
  for (std::int64_t capacity : input.budgets) part.budgets.push_back(shareOf(capacity, k, parts));
  for (std::size_t job = k; job < input.jobs.size(); job += parts) {
    part.jobs.push_back(input.jobs[job]);
    if (!input.current.empty()) part.current.push_back(input.current[job]);
    if (!input.job_budgets.empty()) part.job_budgets.push_back(input.job_budgets[job]);
  }
  part.node_limit = input.node_limit;
  part.simplex_iterations = input.simplex_iterations;
  part.time_limit_s = input.time_limit_s;
  return part;
}

}  // namespace

MilpResult solvePartitioned(const MilpInput& input, const SplitLimits& limits,
                            const GroupSolver& solve_group) {
  const int jobs = static_cast<int>(input.jobs.size());
  if (jobs <= limits.exact_jobs) return solveMilp(input);
  const int per_part = limits.partition_jobs > 0 ? limits.partition_jobs : jobs;
  const int parts = (jobs + per_part - 1) / per_part;
  if (parts == 1) return solve_group(input);
  MilpResult result;
  result.partitions = parts;
  result.chosen.assign(input.jobs.size(), -1);
  result.kept.assign(input.jobs.size(), false);
  std::vector<int> failed_jobs;
  SolveOutcome failure;
  for (int k = 0; k < parts; ++k) {
    const MilpResult part = solve_group(partitionOf(input, k, parts));
    result.columns += part.columns;
    result.fractional_jobs += part.fractional_jobs;
    result.work_limit_hits += part.work_limit_hits;
    result.time_limit_hits += part.time_limit_hits;
    result.nodes += part.nodes;
    result.simplex_iterations += part.simplex_iterations;
    for (std::size_t job = k, i = 0; job < input.jobs.size(); job += parts, ++i) {
      if (!part.outcome.hasSolution()) {
        failed_jobs.push_back(int(job));
        continue;
      }
      result.chosen[job] = part.chosen[i];
      if (part.kept[i]) failed_jobs.push_back(int(job));
    }
    if (!part.outcome.hasSolution()) {
      ++result.failed_partitions;
      failure = part.outcome;
    }
  }
  if (result.failed_partitions == parts) {
    result.outcome = failure;
    result.chosen.clear();
    result.kept.clear();
    return result;
  }
  result.outcome = {SolveStatus::kFeasible, ""};
  keepCurrent(input, failed_jobs, result);
  fillGreedily(input, result);
  return result;
}

}  // namespace pollux::policy
