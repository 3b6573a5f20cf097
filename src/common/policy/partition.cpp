#include "policy/partition.hpp"

#include <cstddef>

namespace pollux::policy {

namespace {

// Part `k` of `total` split into `parts` near-equal integer shares that sum to `total`.
int shareOf(int total, int k, int parts) {
  const long long whole = total;
  return static_cast<int>(whole * (k + 1) / parts - whole * k / parts);
}

// Jobs k, k + parts, k + 2 * parts, ... with their share of every type's capacity.
MilpInput partitionOf(const MilpInput& input, int k, int parts) {
  MilpInput part;
  for (const MilpTypeCapacity& capacity : input.types) {
    part.types.push_back(
        {shareOf(capacity.gpus, k, parts), shareOf(capacity.whole_nodes, k, parts)});
  }
  for (std::size_t job = k; job < input.jobs.size(); job += parts) {
    part.jobs.push_back(input.jobs[job]);
  }
  part.time_limit_s = input.time_limit_s / parts;
  return part;
}

// GPUs and whole nodes per type that the chosen options leave free.
std::vector<MilpTypeCapacity> leftover(const MilpInput& input, const std::vector<int>& chosen) {
  std::vector<MilpTypeCapacity> free = input.types;
  for (std::size_t job = 0; job < input.jobs.size(); ++job) {
    if (chosen[job] < 0) continue;
    const MilpOption& option = input.jobs[job][chosen[job]];
    free[option.type].gpus -= option.gpus;
    free[option.type].whole_nodes -= option.whole_nodes;
  }
  return free;
}

// Whether a job can trade `from` (nullptr: nothing) for `to` within the free capacity.
bool fits(const MilpOption* from, const MilpOption& to,
          const std::vector<MilpTypeCapacity>& free) {
  const bool same_type = from != nullptr && from->type == to.type;
  const int gpus = to.gpus - (same_type ? from->gpus : 0);
  const int nodes = to.whole_nodes - (same_type ? from->whole_nodes : 0);
  return gpus <= free[to.type].gpus && nodes <= free[to.type].whole_nodes;
}

struct Move {
  std::size_t job = 0;
  int option = -1;
  double gain = 0;
};

Move bestMove(const MilpInput& input, const std::vector<int>& chosen,
              const std::vector<MilpTypeCapacity>& free) {
  Move best;
  for (std::size_t job = 0; job < input.jobs.size(); ++job) {
    const auto& options = input.jobs[job];
    const MilpOption* current = chosen[job] < 0 ? nullptr : &options[chosen[job]];
    const double current_weight = current == nullptr ? 0.0 : current->weight;
    for (int option = 0; option < static_cast<int>(options.size()); ++option) {
      const double gain = options[option].weight - current_weight;
      if (gain > best.gain && fits(current, options[option], free)) best = {job, option, gain};
    }
  }
  return best;
}

// Repeatedly applies the single option change with the largest gain that fits in the free
// capacity. Each change strictly raises the objective, so this ends.
void handOutLeftovers(const MilpInput& input, MilpResult& result) {
  std::vector<MilpTypeCapacity> free = leftover(input, result.chosen);
  for (Move move = bestMove(input, result.chosen, free); move.option >= 0;
       move = bestMove(input, result.chosen, free)) {
    const int before = result.chosen[move.job];
    if (before >= 0) {
      const MilpOption& released = input.jobs[move.job][before];
      free[released.type].gpus += released.gpus;
      free[released.type].whole_nodes += released.whole_nodes;
    }
    const MilpOption& taken = input.jobs[move.job][move.option];
    free[taken.type].gpus -= taken.gpus;
    free[taken.type].whole_nodes -= taken.whole_nodes;
    result.chosen[move.job] = move.option;
    result.objective += move.gain;
  }
}

}  // namespace

MilpResult solvePartitioned(const MilpInput& input, int jobs_per_partition) {
  const int jobs = static_cast<int>(input.jobs.size());
  if (jobs_per_partition <= 0 || jobs <= jobs_per_partition) return solveMilp(input);
  const int parts = (jobs + jobs_per_partition - 1) / jobs_per_partition;
  MilpResult result;
  result.partitions = parts;
  result.outcome = {SolveStatus::kFeasible, ""};
  result.chosen.assign(input.jobs.size(), -1);
  for (int k = 0; k < parts; ++k) {
    const MilpResult part = solveMilp(partitionOf(input, k, parts));
    result.columns += part.columns;
    if (!part.outcome.hasSolution()) {
      result.outcome = part.outcome;
      result.chosen.clear();
      return result;
    }
    for (std::size_t i = 0; i < part.chosen.size(); ++i) result.chosen[k + i * parts] = part.chosen[i];
    result.objective += part.objective;
  }
  handOutLeftovers(input, result);
  return result;
}

}  // namespace pollux::policy
