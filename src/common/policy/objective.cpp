#include "objective.hpp"

#include <algorithm>
#include <cmath>

namespace pollux::policy {

namespace {

struct Scored {
  Config config;
  double speedup;
};

double speedOf(const model::RelativeSpeeds& speeds, const std::string& gpu_type) {
  const auto found = speeds.find(gpu_type);
  return found == speeds.end() ? 1.0 : found->second;
}

// A job without a model starts on min_gpus of any type; its baseline is the fastest type, so a
// slower one is worth its relative speed (new jobs go where the admin's speeds say it is fast).
std::vector<Scored> modelFreeOptions(const Job& job, const std::vector<Config>& candidates,
                                     const model::RelativeSpeeds& speeds) {
  if (job.current) return {{configOf(*job.current), 1.0}};
  double fastest = 0;
  for (const auto& config : candidates) {
    fastest = std::max(fastest, speedOf(speeds, config.gpu_type));
  }
  std::vector<Scored> options;
  for (const auto& config : candidates) {
    if (config.gpus == job.min_gpus) {
      options.push_back({config, speedOf(speeds, config.gpu_type) / fastest});
    }
  }
  return options;
}

std::vector<Scored> pendingOptions(const std::vector<Config>& candidates, JobGoodput& goodput) {
  std::vector<Scored> options;
  for (const auto& config : candidates) {
    if (const auto speedup = goodput.speedup(config)) options.push_back({config, *speedup});
  }
  return options;
}

std::vector<Scored> runningOptions(const Job& job, const std::vector<Config>& candidates,
                                   JobGoodput& goodput, const Snapshot& snapshot,
                                   const WaitingRigidTypes& rigid_waiting) {
  const Config current = configOf(*job.current);
  const double current_speedup = goodput.speedup(current).value_or(1.0);
  std::vector<Scored> options{{current, current_speedup}};
  const Params& params = snapshot.params;
  const bool may_change = snapshot.time - job.last_change_time >= params.min_change_interval_s;
  const double restart = restartFactor(job, snapshot.time);
  const bool rigid_wants_its_type =
      rigid_waiting.count("") > 0 || rigid_waiting.count(current.gpu_type) > 0;
  for (const auto& config : candidates) {
    if (config == current) continue;
    const auto speedup = goodput.speedup(config);
    if (!speedup) continue;
    const bool worth_it = *speedup > (1 + params.restart_threshold) * current_speedup ||
                          config.gpus < current.gpus;
    const bool yields_to_rigid = rigid_wants_its_type && config.gpus < current.gpus;
    if ((may_change && worth_it) || yields_to_rigid) {
      options.push_back({config, *speedup * restart});
    }
  }
  return options;
}

std::vector<JobOption> weighted(const std::vector<Scored>& scored, double fairness_p) {
  if (scored.empty()) return {};
  // Relative to the job's baseline (speedup 1 at min_gpus), not only to the options offered: a
  // running job offered just its current, large configuration would otherwise lose little
  // weight when left without GPUs, and be preempted for any pending job (it thrashed).
  double lowest = 1.0;
  for (const auto& option : scored) lowest = std::min(lowest, option.speedup);
  const double unallocated = utility(kUnallocatedFraction * lowest, fairness_p);
  std::vector<JobOption> options;
  for (const auto& option : scored) {
    options.push_back({option.config, option.speedup,
                       utility(option.speedup, fairness_p) - unallocated});
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

double restartFactor(const Job& job, double time) {
  const double age = std::max(0.0, time - job.submit_time);
  const double cost = job.restart_cost_s;
  if (cost <= 0) return 1.0;
  const double factor = (age - job.restarts * cost) / (age + cost);
  return std::clamp(factor, kMinRestartFactor, 1.0);
}

std::vector<JobOption> adaptiveOptions(const Job& job, const std::vector<Config>& candidates,
                                       JobGoodput& goodput, const Snapshot& snapshot,
                                       const WaitingRigidTypes& rigid_waiting) {
  std::vector<Scored> scored;
  if (!goodput.hasModel()) {
    scored = modelFreeOptions(job, candidates, snapshot.params.relative_speeds);
  } else if (job.current) {
    scored = runningOptions(job, candidates, goodput, snapshot, rigid_waiting);
  } else {
    scored = pendingOptions(candidates, goodput);
  }
  return weighted(scored, snapshot.params.fairness_p);
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
