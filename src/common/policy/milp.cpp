// SPDX-License-Identifier: GPL-2.0-or-later
#include "milp.hpp"

#include <algorithm>
#include <functional>
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

using Row = std::vector<std::pair<int, double>>;  // (column, coefficient) pairs

struct Rows {
  std::vector<Row> type_gpus;
  std::vector<Row> type_nodes;
  std::vector<Row> budget_use;
};

void addCapacityRows(const MilpInput& input, const Rows& rows, GlpkProblem& problem) {
  for (std::size_t type = 0; type < input.types.size(); ++type) {
    if (!rows.type_gpus[type].empty()) {
      problem.addRowAtMost(rows.type_gpus[type], input.types[type].gpus);
    }
    if (!rows.type_nodes[type].empty()) {
      problem.addRowAtMost(rows.type_nodes[type], input.types[type].whole_nodes);
    }
  }
  for (std::size_t budget = 0; budget < input.budgets.size(); ++budget) {
    if (!rows.budget_use[budget].empty()) {
      problem.addRowAtMost(rows.budget_use[budget], double(input.budgets[budget]));
    }
  }
}

// The MILP of `input` loaded into `problem`; returns per job its (column, option index) pairs.
std::vector<std::vector<std::pair<int, int>>> build(const MilpInput& input,
                                                     GlpkProblem& problem) {
  Rows rows{std::vector<Row>(input.types.size()), std::vector<Row>(input.types.size()),
            std::vector<Row>(input.budgets.size())};
  // column_of[job] = (column, option index) pairs
  std::vector<std::vector<std::pair<int, int>>> column_of(input.jobs.size());
  for (std::size_t job = 0; job < input.jobs.size(); ++job) {
    Row one_option;
    for (int option_index : usefulOptions(input.jobs[job])) {
      const MilpOption& option = input.jobs[job][option_index];
      const int column = problem.addBinaryColumn(option.weight);
      column_of[job].push_back({column, option_index});
      one_option.push_back({column, 1.0});
      rows.type_gpus[option.type].push_back({column, double(option.gpus)});
      if (option.whole_nodes > 0) {
        rows.type_nodes[option.type].push_back({column, double(option.whole_nodes)});
      }
      for (const BudgetShare& share : budgetsOf(input, job)) {
        rows.budget_use[share.budget].push_back(
            {column, double(share.unitsFor(option.gpus, option.nodes))});
      }
    }
    if (one_option.size() > 1) problem.addRowAtMost(one_option, 1.0);
  }
  addCapacityRows(input, rows, problem);
  return column_of;
}

SolveLimits limitsOf(const MilpInput& input) {
  return {input.time_limit_s, input.node_limit, input.simplex_iterations};
}

// Counts one GLPK solve's work and limits into `result`.
void account(const SolveOutcome& outcome, MilpResult& result) {
  result.work_limit_hits += outcome.work_limit_hit;
  result.time_limit_hits += outcome.time_limit_hit;
  result.nodes += outcome.nodes;
  result.simplex_iterations += outcome.simplex_iterations;
}

}  // namespace

MilpResult solveMilp(const MilpInput& input) {
  GlpkProblem problem;
  const auto column_of = build(input, problem);
  MilpResult result;
  result.columns = problem.columns();
  result.outcome = result.columns > 0 ? problem.solve(limitsOf(input))
                                      : SolveOutcome{SolveStatus::kOptimal, ""};
  account(result.outcome, result);
  if (!result.outcome.hasSolution()) return result;
  result.chosen.assign(input.jobs.size(), -1);
  result.kept.assign(input.jobs.size(), false);
  for (std::size_t job = 0; job < input.jobs.size(); ++job) {
    for (const auto& [column, option_index] : column_of[job]) {
      if (!problem.chosen(column)) continue;
      result.chosen[job] = option_index;
      result.objective += input.jobs[job][option_index].weight;
    }
  }
  return result;
}

namespace {

// A job's LP value above this counts as integral.
constexpr double kIntegral = 1e-6;

// What the chosen options leave free: per type, and per budget.
struct Room {
  std::vector<MilpTypeCapacity> types;
  std::vector<std::int64_t> budgets;
};

Room roomLeft(const MilpInput& input, const std::vector<int>& chosen) {
  return {leftoverCapacity(input, chosen), leftoverBudgets(input, chosen)};
}

// Takes `job`'s `option` out of the room (count 1) or gives it back (count -1).
void use(const MilpInput& input, std::size_t job, const MilpOption& option, int count,
         Room& room) {
  room.types[option.type].gpus -= count * option.gpus;
  room.types[option.type].whole_nodes -= count * option.whole_nodes;
  for (const BudgetShare& share : budgetsOf(input, job)) {
    room.budgets[share.budget] -= count * share.unitsFor(option.gpus, option.nodes);
  }
}

// Whether `job` can trade `from` (nullptr: nothing) for `to` within the room.
bool fits(const MilpInput& input, std::size_t job, const MilpOption* from, const MilpOption& to,
          const Room& room) {
  const bool same_type = from != nullptr && from->type == to.type;
  const int gpus = to.gpus - (same_type ? from->gpus : 0);
  const int nodes = to.whole_nodes - (same_type ? from->whole_nodes : 0);
  if (gpus > room.types[to.type].gpus || nodes > room.types[to.type].whole_nodes) return false;
  const auto& shares = budgetsOf(input, job);
  return std::all_of(shares.begin(), shares.end(), [&](const BudgetShare& share) {
    const std::int64_t more = share.unitsFor(to.gpus, to.nodes) -
                              (from != nullptr ? share.unitsFor(from->gpus, from->nodes) : 0);
    return more <= room.budgets[share.budget];
  });
}

struct Move {
  std::size_t job = 0;
  int option = -1;
  double gain = 0;
};

Move bestMove(const MilpInput& input, const MilpResult& result, const Room& room) {
  Move best;
  for (std::size_t job = 0; job < input.jobs.size(); ++job) {
    if (result.kept[job]) continue;
    const auto& options = input.jobs[job];
    const MilpOption* current = result.chosen[job] < 0 ? nullptr : &options[result.chosen[job]];
    const double current_weight = current == nullptr ? 0.0 : current->weight;
    for (int option = 0; option < static_cast<int>(options.size()); ++option) {
      const double gain = options[option].weight - current_weight;
      if (gain > best.gain && fits(input, job, current, options[option], room)) {
        best = {job, option, gain};
      }
    }
  }
  return best;
}

bool overCapacity(const MilpTypeCapacity& free) { return free.gpus < 0 || free.whole_nodes < 0; }

bool countsAgainst(const MilpInput& input, std::size_t job, int budget) {
  const auto& shares = budgetsOf(input, job);
  return std::any_of(shares.begin(), shares.end(),
                     [&](const BudgetShare& share) { return share.budget == budget; });
}

// The job with the lightest choice among those `selected` (job, its chosen option); -1: none.
int lightestChoice(const MilpInput& input, const MilpResult& result,
                   const std::function<bool(std::size_t, const MilpOption&)>& selected) {
  int lightest = -1;
  for (std::size_t job = 0; job < input.jobs.size(); ++job) {
    if (result.chosen[job] < 0) continue;
    const MilpOption& option = input.jobs[job][result.chosen[job]];
    if (!selected(job, option)) continue;
    if (lightest < 0 || option.weight < input.jobs[lightest][result.chosen[lightest]].weight) {
      lightest = int(job);
    }
  }
  return lightest;
}

void dropChoice(const MilpInput& input, int job, Room& room, MilpResult& result) {
  use(input, job, input.jobs[job][result.chosen[job]], -1, room);
  result.chosen[job] = -1;
}

void dropWhereTypesOverflow(const MilpInput& input, Room& room, MilpResult& result) {
  for (std::size_t type = 0; type < room.types.size(); ++type) {
    while (overCapacity(room.types[type])) {
      const int lightest =
          lightestChoice(input, result, [&](std::size_t job, const MilpOption& option) {
            return !result.kept[job] && option.type == int(type);
          });
      if (lightest < 0) break;  // only kept jobs left: their current allocations fit together
      dropChoice(input, lightest, room, result);
    }
  }
}

// Jobs not kept first; then kept ones, released (a budget may be below what they hold).
void dropWhereBudgetsOverflow(const MilpInput& input, Room& room, MilpResult& result) {
  for (std::size_t budget = 0; budget < room.budgets.size(); ++budget) {
    const auto in_budget = [&](std::size_t job, const MilpOption&) {
      return countsAgainst(input, job, int(budget));
    };
    while (room.budgets[budget] < 0) {
      int lightest = lightestChoice(input, result, [&](std::size_t job, const MilpOption& option) {
        return !result.kept[job] && in_budget(job, option);
      });
      if (lightest < 0) lightest = lightestChoice(input, result, in_budget);
      if (lightest < 0) break;  // a negative budget without choices: nothing to drop
      if (result.kept[lightest]) {
        result.kept[lightest] = false;
        --result.kept_jobs;
      }
      dropChoice(input, lightest, room, result);
    }
  }
}

double weightOf(const MilpInput& input, const std::vector<int>& chosen) {
  double total = 0;
  for (std::size_t job = 0; job < input.jobs.size(); ++job) {
    if (chosen[job] >= 0) total += input.jobs[job][chosen[job]].weight;
  }
  return total;
}

}  // namespace

const std::vector<BudgetShare>& budgetsOf(const MilpInput& input, std::size_t job) {
  static const std::vector<BudgetShare> kNone;
  return input.job_budgets.empty() ? kNone : input.job_budgets[job];
}

std::vector<MilpTypeCapacity> leftoverCapacity(const MilpInput& input,
                                               const std::vector<int>& chosen) {
  std::vector<MilpTypeCapacity> free = input.types;
  for (std::size_t job = 0; job < input.jobs.size(); ++job) {
    if (chosen[job] < 0) continue;
    const MilpOption& option = input.jobs[job][chosen[job]];
    free[option.type].gpus -= option.gpus;
    free[option.type].whole_nodes -= option.whole_nodes;
  }
  return free;
}

std::vector<std::int64_t> leftoverBudgets(const MilpInput& input,
                                          const std::vector<int>& chosen) {
  std::vector<std::int64_t> free = input.budgets;
  for (std::size_t job = 0; job < input.jobs.size(); ++job) {
    if (chosen[job] < 0) continue;
    for (const BudgetShare& share : budgetsOf(input, job)) {
      const MilpOption& option = input.jobs[job][chosen[job]];
      free[share.budget] -= share.unitsFor(option.gpus, option.nodes);
    }
  }
  return free;
}

void keepCurrent(const MilpInput& input, const std::vector<int>& jobs, MilpResult& result) {
  for (int job : jobs) {
    result.chosen[job] = input.current.empty() ? -1 : input.current[job];
    result.kept[job] = true;
    ++result.kept_jobs;
  }
  // Other jobs' choices were made without knowing: drop the lightest where capacity overflows.
  Room room = roomLeft(input, result.chosen);
  dropWhereTypesOverflow(input, room, result);
  dropWhereBudgetsOverflow(input, room, result);
  result.objective = weightOf(input, result.chosen);
}

void fillGreedily(const MilpInput& input, MilpResult& result) {
  Room room = roomLeft(input, result.chosen);
  for (Move move = bestMove(input, result, room); move.option >= 0;
       move = bestMove(input, result, room)) {
    const int before = result.chosen[move.job];
    if (before >= 0) use(input, move.job, input.jobs[move.job][before], -1, room);
    use(input, move.job, input.jobs[move.job][move.option], 1, room);
    result.chosen[move.job] = move.option;
    result.objective += move.gain;
  }
}

MilpResult solveByRounding(const MilpInput& input) {
  MilpResult result;
  std::vector<int> fractional;  // jobs the LP splits between options
  {
    GlpkProblem relaxation;
    const auto column_of = build(input, relaxation);
    result.columns = relaxation.columns();
    if (result.columns == 0) {
      result.outcome = {SolveStatus::kOptimal, ""};
      result.chosen.assign(input.jobs.size(), -1);
      result.kept.assign(input.jobs.size(), false);
      return result;
    }
    result.outcome = relaxation.solveRelaxation(limitsOf(input));
    account(result.outcome, result);
    if (!result.outcome.hasSolution()) return result;
    result.chosen.assign(input.jobs.size(), -1);
    result.kept.assign(input.jobs.size(), false);
    for (std::size_t job = 0; job < input.jobs.size(); ++job) {
      double total = 0;
      for (const auto& [column, option_index] : column_of[job]) {
        const double value = relaxation.value(column);
        total += value;
        if (value > 1 - kIntegral) result.chosen[job] = option_index;
      }
      if (result.chosen[job] < 0 && total > kIntegral) fractional.push_back(int(job));
    }
  }
  result.fractional_jobs = static_cast<int>(fractional.size());
  // The fractional jobs, exactly, in what the integral ones leave, with the same limits (the
  // wall-clock one too: what the LP took does not shorten it, so the result does not depend
  // on the host's speed unless the safety net itself is hit).
  MilpInput rest;
  rest.types = leftoverCapacity(input, result.chosen);
  rest.budgets = leftoverBudgets(input, result.chosen);
  for (int job : fractional) {
    rest.jobs.push_back(input.jobs[job]);
    if (!input.job_budgets.empty()) rest.job_budgets.push_back(input.job_budgets[job]);
  }
  rest.node_limit = input.node_limit;
  rest.simplex_iterations = input.simplex_iterations;
  rest.time_limit_s = input.time_limit_s;
  const MilpResult exact = solveMilp(rest);
  result.columns += exact.columns;
  result.work_limit_hits += exact.work_limit_hits;
  result.time_limit_hits += exact.time_limit_hits;
  result.nodes += exact.nodes;
  result.simplex_iterations += exact.simplex_iterations;
  result.outcome = {SolveStatus::kFeasible, ""};
  if (exact.outcome.hasSolution()) {
    for (std::size_t i = 0; i < fractional.size(); ++i) {
      result.chosen[fractional[i]] = exact.chosen[i];
    }
  } else {
    keepCurrent(input, fractional, result);
  }
  result.objective = weightOf(input, result.chosen);
  fillGreedily(input, result);
  return result;
}

}  // namespace pollux::policy
