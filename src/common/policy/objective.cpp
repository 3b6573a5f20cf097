// SPDX-License-Identifier: GPL-2.0-or-later
#include "objective.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

namespace pollux::policy {

namespace {

struct Scored {
  Config config;
  double speedup;
};

// A job's speedup at a configuration over its baseline; nullopt where unknown.
using SpeedupOf = std::function<std::optional<double>(const Config&)>;

double speedOf(const model::RelativeSpeeds& speeds, const std::string& gpu_type) {
  const auto found = speeds.find(gpu_type);
  return found == speeds.end() ? 1.0 : found->second;
}

// A job without a model runs on min_gpus (or where it runs now) of any type; its baseline is
// the fastest type, so a slower one is worth its relative speed (jobs go where the admin's
// speeds say they are fast).
SpeedupOf modelFreeSpeedup(const Job& job, const std::vector<Config>& candidates,
                           const model::RelativeSpeeds& speeds) {
  double fastest = 0;
  for (const auto& config : candidates) {
    fastest = std::max(fastest, speedOf(speeds, config.gpu_type));
  }
  const std::optional<Config> current =
      job.current ? std::optional<Config>(configOf(*job.current)) : std::nullopt;
  const int min_gpus = job.min_gpus;
  return [&speeds, fastest, current, min_gpus](const Config& config) -> std::optional<double> {
    if (fastest <= 0 || (config.gpus != min_gpus && config != current)) return std::nullopt;
    return speedOf(speeds, config.gpu_type) / fastest;
  };
}

SpeedupOf modelSpeedup(JobGoodput& goodput) {
  return [&goodput](const Config& config) { return goodput.speedup(config); };
}

std::vector<Scored> pendingOptions(const std::vector<Config>& candidates,
                                   const SpeedupOf& speedupOf) {
  std::vector<Scored> options;
  for (const auto& config : candidates) {
    if (const auto speedup = speedupOf(config)) options.push_back({config, *speedup});
  }
  return options;
}

// The lowest of 1 (the job's baseline) and its speedups at every candidate, offered or not:
// a running job is worth as much to keep as the same job pending is worth to start.
double lowestSpeedup(const std::vector<Config>& candidates, const SpeedupOf& speedupOf) {
  double lowest = 1.0;
  for (const auto& config : candidates) {
    if (const auto speedup = speedupOf(config)) lowest = std::min(lowest, *speedup);
  }
  return lowest;
}

// `shrinks_for_others`: whether fewer GPUs, to let others grow, are worth offering: only a
// model tells what GPUs above min_gpus give the job (without one they seem worth nothing).
std::vector<Scored> runningOptions(const Job& job, const std::vector<Config>& candidates,
                                   const SpeedupOf& speedupOf, bool shrinks_for_others,
                                   const Snapshot& snapshot,
                                   const WaitingRigidTypes& rigid_waiting) {
  const Config current = configOf(*job.current);
  // Its minimum was raised or its GPU type changed while it ran (its comment updated): it
  // keeps what it holds only where nothing within its bounds can be placed. What it holds is
  // then worth less than any option within them, whose restart leaves it at least
  // kMinRestartFactor of its speedup.
  const bool out_of_bounds =
      current.gpus < job.min_gpus || (job.gpu_type && *job.gpu_type != current.gpu_type);
  const double current_speedup = speedupOf(current).value_or(1.0);
  std::vector<Scored> options{{current, current_speedup}};
  if (out_of_bounds) {
    options[0].speedup = 0.5 * kMinRestartFactor *
                         std::min(current_speedup, lowestSpeedup(candidates, speedupOf));
  }
  const Params& params = snapshot.params;
  const bool may_change = snapshot.time - job.last_change_time >= params.min_change_interval_s;
  const bool rigid_wants_its_type =
      rigid_waiting.count("") > 0 || rigid_waiting.count(current.gpu_type) > 0;
  for (const auto& config : candidates) {
    if (config == current) continue;
    const auto speedup = speedupOf(config);
    if (!speedup) continue;
    const bool worth_it = out_of_bounds ||
                          *speedup > (1 + params.restart_threshold) * current_speedup ||
                          (shrinks_for_others && config.gpus < current.gpus);
    const bool yields_to_rigid = rigid_wants_its_type && config.gpus < current.gpus;
    const bool undoes = params.objective == Objective::kJct &&
                        undoesLastChange(job, config, params, snapshot.time);
    const bool waits = !out_of_bounds && restartsTooSoon(job, config, params, snapshot.time);
    if ((may_change && worth_it && !undoes && !waits) || yields_to_rigid) {
      options.push_back({config, *speedup * changeFactor(job, config, snapshot.time)});
    }
  }
  return options;
}

// Left without GPUs, a running job counts restart_threshold slower still than a pending one:
// preempting it must beat keeping it by that margin, as its own moves must.
double unallocatedSpeedup(double lowest, const Job& job, const Params& params) {
  const double preempted = job.current ? 1 + params.restart_threshold : 1.0;
  return kUnallocatedFraction * lowest / preempted;
}

std::vector<JobOption> weighted(const std::vector<Scored>& scored, double lowest_candidate,
                                const Job& job, const Params& params) {
  if (scored.empty()) return {};
  // Relative to the job's baseline (speedup 1 at min_gpus) and all its candidates, not only to
  // the options offered: a running job offered just its current configuration would otherwise
  // lose little weight when left without GPUs, and be preempted for any pending job (it
  // thrashed). The offered speedups, restart factors applied, count too: any allocation beats
  // none.
  double lowest = lowest_candidate;
  for (const auto& option : scored) lowest = std::min(lowest, option.speedup);
  const double unallocated = utility(unallocatedSpeedup(lowest, job, params), params.fairness_p);
  std::vector<JobOption> options;
  for (const auto& option : scored) {
    options.push_back({option.config, option.speedup,
                       utility(option.speedup, params.fairness_p) - unallocated});
  }
  return options;
}

double heaviest(const std::vector<JobOption>& options) {
  double weight = 0;
  for (const auto& option : options) weight = std::max(weight, option.weight);
  return weight;
}

}  // namespace

double utility(double speedup, double fairness_p) {
  if (fairness_p < 0) return -std::pow(speedup, fairness_p);
  if (fairness_p > 0) return std::pow(speedup, fairness_p);
  return std::log(speedup);
}

namespace {

// A live change that its parts make: one added, one dropped (or some of its nodes), or a
// shrink to some nodes.
bool changesInItsParts(const Job& job, const Config& config) {
  const bool shrinks_live = job.grows_live || job.live_resize_cost_s;
  const bool has_parts = !job.parts.empty();
  const auto makes = [&](const Allocation& shrunk) { return config == configOf(shrunk); };
  const auto drops = [&](const Allocation& part) {
    const auto shrinks = partShrinks(*job.current, part, job.batch_hosts);
    return makes(withoutPart(*job.current, part)) ||
           std::any_of(shrinks.begin(), shrinks.end(), makes);
  };
  if (shrinks_live && std::any_of(job.parts.begin(), job.parts.end(), drops)) return true;
  const int nodes = static_cast<int>(job.current->nodes.size());
  const int per_node = uniformPerNode(*job.current);
  if (per_node <= 0) return false;
  const bool deepens = config.nodes == nodes && config.gpus == 2 * nodes * per_node;
  if (job.grows_live && deepens) return job.room_to_double;
  if (config.gpus != config.nodes * per_node) return false;
  return (job.grows_live && config.nodes > nodes) ||
         (shrinks_live && !has_parts && config.nodes < nodes);
}

}  // namespace

bool changesLive(const Job& job, const Config& config) {
  if (!job.current) return false;
  if (job.moves_live) return true;
  return config.gpu_type == job.current->gpu_type && changesInItsParts(job, config);
}

double changeCost(const Job& job, const Config& config) {
  if (!job.current) return job.restart_cost_s;
  const Config now = configOf(*job.current);
  if (now == config) return 0.0;
  if (!changesLive(job, config)) return job.restart_cost_s;
  const double stall = job.live_resize_cost_s.value_or(kUnmeasuredLiveStallS);
  if (!changesInItsParts(job, config)) {
    // A move: the target's part joins (a stall) once its joiners have started; that long the
    // job also holds its old GPUs, which a job placed there waits for, so the move counts the
    // whole start-up; then its old parts leave (another stall).
    return 2 * stall + job.join_startup_s;
  }
  if (config.gpus < now.gpus) return stall;
  const double idle_share = double(config.gpus - now.gpus) / config.gpus;
  return stall + job.join_startup_s * idle_share;
}

bool undoesLastChange(const Job& job, const Config& config, const Params& params, double time) {
  return job.current && job.previous && configOf(*job.previous) == config &&
         time - job.last_change_time < 2 * params.min_change_interval_s;
}

bool restartsTooSoon(const Job& job, const Config& config, const Params& params, double time) {
  const bool can_change_live = job.grows_live || job.moves_live;
  return params.objective == Objective::kJct && job.current && can_change_live &&
         !changesLive(job, config) && time - job.last_change_time < secondsLost(job);
}

double secondsLost(const Job& job) {
  return job.lost_s.value_or(job.restarts * job.restart_cost_s);
}

double changeFactor(const Job& job, const Config& config, double time) {
  const double cost = changeCost(job, config);
  if (cost <= 0) return 1.0;
  const double age = std::max(0.0, time - job.submit_time);
  return std::clamp((age - secondsLost(job)) / (age + cost), kMinRestartFactor, 1.0);
}

std::vector<JobOption> adaptiveOptions(const Job& job, const std::vector<Config>& candidates,
                                       JobGoodput& goodput, const Snapshot& snapshot,
                                       const WaitingRigidTypes& rigid_waiting) {
  const bool has_model = goodput.hasModel();
  const SpeedupOf speedupOf =
      has_model ? modelSpeedup(goodput)
                : modelFreeSpeedup(job, candidates, snapshot.params.relative_speeds);
  const std::vector<Scored> scored =
      job.current
          ? runningOptions(job, candidates, speedupOf, has_model, snapshot, rigid_waiting)
          : pendingOptions(candidates, speedupOf);
  return weighted(scored, lowestSpeedup(candidates, speedupOf), job, snapshot.params);
}

PriorityScale::PriorityScale(const Snapshot& snapshot) : weight_(snapshot.params.priority_weight) {
  bool first = true;
  for (const auto& job : snapshot.jobs) {
    if (!job.adaptive || job.current) continue;
    lowest_ = first ? job.priority : std::min(lowest_, job.priority);
    highest_ = first ? job.priority : std::max(highest_, job.priority);
    first = false;
  }
}

double PriorityScale::factor(const Job& job) const {
  return waitingFactor(job.current ? highest_ : job.priority);
}

// Measured against the highest priority rather than the spread, so that priorities that
// differ by a hair (age and fairshare move them every PriorityCalcPeriod) weigh a hair.
double PriorityScale::waitingFactor(double priority) const {
  if (weight_ <= 0 || highest_ <= lowest_) return 1.0;
  return 1.0 + weight_ * (priority - lowest_) / highest_;
}

void prioritise(std::vector<std::vector<JobOption>>& adaptive,
                std::vector<std::vector<JobOption>>& rigid_waiting) {
  if (rigid_waiting.empty()) return;
  double rigid_weight = 1;
  for (const auto& options : adaptive) rigid_weight += heaviest(options);
  const double adaptive_bonus = 1 + rigid_weight * rigid_waiting.size();
  for (auto& options : rigid_waiting) {
    for (auto& option : options) option.weight = rigid_weight;
  }
  for (auto& options : adaptive) {
    for (auto& option : options) option.weight += adaptive_bonus;
  }
}

}  // namespace pollux::policy
