#include "policy/milp.hpp"

#include <utility>

namespace pollux::policy {

namespace {

// Is `option` beaten by `other`: no more GPUs or nodes of the same type, at least the weight?
bool dominatedBy(const MilpOption& option, const MilpOption& other) {
  return option.type == other.type && other.gpus <= option.gpus &&
         other.whole_nodes <= option.whole_nodes && other.weight >= option.weight;
}

// Indices of a job's options worth offering: positive weight and not dominated (ties keep
// the first).
std::vector<int> usefulOptions(const std::vector<MilpOption>& options) {
  std::vector<int> useful;
  for (int i = 0; i < static_cast<int>(options.size()); ++i) {
    if (options[i].weight <= 0) continue;
    bool dominated = false;
    for (int j = 0; j < static_cast<int>(options.size()) && !dominated; ++j) {
      if (j == i) continue;
      const bool strictly_better = dominatedBy(options[i], options[j]) &&
                                   !dominatedBy(options[j], options[i]);
      dominated = strictly_better || (j < i && dominatedBy(options[i], options[j]));
    }
    if (!dominated) useful.push_back(i);
  }
  return useful;
}

struct Rows {
  std::vector<std::vector<std::pair<int, double>>> type_gpus;
  std::vector<std::vector<std::pair<int, double>>> type_nodes;
};

}  // namespace

MilpResult solveMilp(const MilpInput& input) {
  GlpkProblem problem;
  Rows rows{std::vector<std::vector<std::pair<int, double>>>(input.types.size()),
            std::vector<std::vector<std::pair<int, double>>>(input.types.size())};
  // column_of[job] = (column, option index) pairs
  std::vector<std::vector<std::pair<int, int>>> column_of(input.jobs.size());
  for (std::size_t job = 0; job < input.jobs.size(); ++job) {
    std::vector<std::pair<int, double>> one_option;
    for (int option_index : usefulOptions(input.jobs[job])) {
      const MilpOption& option = input.jobs[job][option_index];
      const int column = problem.addBinaryColumn(option.weight);
      column_of[job].push_back({column, option_index});
      one_option.push_back({column, 1.0});
      rows.type_gpus[option.type].push_back({column, double(option.gpus)});
      if (option.whole_nodes > 0) {
        rows.type_nodes[option.type].push_back({column, double(option.whole_nodes)});
      }
    }
    if (one_option.size() > 1) problem.addRowAtMost(one_option, 1.0);
  }
  for (std::size_t type = 0; type < input.types.size(); ++type) {
    if (!rows.type_gpus[type].empty()) {
      problem.addRowAtMost(rows.type_gpus[type], input.types[type].gpus);
    }
    if (!rows.type_nodes[type].empty()) {
      problem.addRowAtMost(rows.type_nodes[type], input.types[type].whole_nodes);
    }
  }

  MilpResult result;
  result.columns = problem.columns();
  result.outcome = result.columns > 0 ? problem.solve(input.time_limit_s)
                                      : SolveOutcome{SolveStatus::kOptimal, ""};
  if (!result.outcome.hasSolution()) return result;
  result.chosen.assign(input.jobs.size(), -1);
  for (std::size_t job = 0; job < input.jobs.size(); ++job) {
    for (const auto& [column, option_index] : column_of[job]) {
      if (!problem.chosen(column)) continue;
      result.chosen[job] = option_index;
      result.objective += input.jobs[job][option_index].weight;
    }
  }
  return result;
}

}  // namespace pollux::policy
