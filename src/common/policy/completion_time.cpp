// SPDX-License-Identifier: GPL-2.0-or-later
#include "completion_time.hpp"

#include <algorithm>
#include <cmath>

namespace pollux::policy {

double changeCost(const Job& job, const Config& config) {
  if (!job.current) return job.restart_cost_s;
  const Config now = configOf(*job.current);
  if (now == config) return 0.0;
  if (job.live_resize_cost_s && config.gpu_type == now.gpu_type && config.gpus < now.gpus) {
    return *job.live_resize_cost_s;  // a live shrink: its measured stall, no restart
  }
  return job.restart_cost_s;
}

bool declaresLength(const Job& job) {
  return job.adaptive && job.length && job.length->remaining() > 0;
}

std::optional<double> remainingSeconds(const Job& job, JobGoodput& goodput, const Config& config) {
  if (!declaresLength(job)) return std::nullopt;
  const auto batch = goodput.best(config);
  if (!batch || !(batch->goodput > 0)) return std::nullopt;
  return job.length->remaining() / batch->goodput + changeCost(job, config);
}

CompletionOptions completionOptions(const Job& job, const std::vector<JobOption>& options,
                                    JobGoodput& goodput, int fair_choice, double guard) {
  CompletionOptions result;
  const auto baseline = goodput.baselineGoodput();
  if (!declaresLength(job) || !baseline || !(*baseline > 0)) return result;
  result.baseline_s = job.length->remaining() / *baseline;
  result.guarded = fair_choice >= 0;
  const double floor = result.guarded ? options[fair_choice].speedup / guard : 0.0;
  const std::optional<Config> current =
      job.current ? std::optional<Config>(configOf(*job.current)) : std::nullopt;
  std::optional<double> current_remaining;
  if (current) current_remaining = remainingSeconds(job, goodput, *current);
  for (int i = 0; i < static_cast<int>(options.size()); ++i) {
    const JobOption& option = options[i];
    if (option.speedup < floor && i != fair_choice) continue;
    const auto remaining = remainingSeconds(job, goodput, option.config);
    if (!remaining || !(*remaining > 0)) continue;
    // A change must pay for its restart within the time the job has left, the more so the
    // more often it restarted (each restart so far adds its cost again), or free GPUs.
    const double owed = job.restart_cost_s * job.restarts;
    const bool pays = !current || option.config == *current || !current_remaining ||
                      *remaining + owed < *current_remaining || option.config.gpus < current->gpus;
    if (!pays && i != fair_choice) continue;
    const auto raw = goodput.speedup(option.config);
    const double restart_factor = raw && *raw > 0 ? std::min(1.0, option.speedup / *raw) : 1.0;
    result.options.push_back({i, *remaining, restart_factor});
  }
  return result;
}

std::vector<std::vector<double>> completionWeights(const std::vector<CompletionOptions>& jobs,
                                                   double fairness_p) {
  std::vector<std::vector<double>> weights;
  for (const auto& job : jobs) {
    const auto behind =
        std::count_if(jobs.begin(), jobs.end(), [&](const CompletionOptions& other) {
          return other.baseline_s >= job.baseline_s;
        });
    const double priority =
        std::pow(static_cast<double>(behind) / static_cast<double>(jobs.size()), kRankExponent);
    double lowest = 1.0;
    for (const auto& option : job.options) {
      lowest = std::min(lowest, option.restart_factor * job.baseline_s / option.remaining_s);
    }
    const double unallocated = utility(kUnallocatedFraction * lowest, fairness_p);
    std::vector<double> job_weights;
    for (const auto& option : job.options) {
      const double speedup = option.restart_factor * job.baseline_s / option.remaining_s;
      job_weights.push_back(priority * (utility(speedup, fairness_p) - unallocated));
    }
    weights.push_back(std::move(job_weights));
  }
  return weights;
}

}  // namespace pollux::policy
