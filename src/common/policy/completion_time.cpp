// SPDX-License-Identifier: GPL-2.0-or-later
#include "completion_time.hpp"

#include <algorithm>
#include <cmath>

namespace pollux::policy {

bool declaresLength(const Job& job) {
  return job.adaptive && job.length && job.length->target > 0;
}

std::optional<double> remainingSeconds(const Job& job, JobGoodput& goodput, const Config& config) {
  if (!declaresLength(job)) return std::nullopt;
  const auto batch = goodput.best(config);
  if (!batch || !(batch->goodput > 0)) return std::nullopt;
  return job.length->remaining() / batch->goodput + changeCost(job, config);
}

CompletionOptions completionOptions(const Job& job, const std::vector<JobOption>& options,
                                    JobGoodput& goodput, int fair_choice, const Params& params,
                                    double time) {
  CompletionOptions result;
  const auto baseline = goodput.baselineGoodput();
  if (!declaresLength(job) || !baseline || !(*baseline > 0)) return result;
  result.baseline_s = job.length->remaining() / *baseline;
  result.guarded = fair_choice >= 0;
  // Speedups before change costs, which depend on what the job holds now.
  const auto raw = [&goodput](const Config& config) { return goodput.speedup(config).value_or(0); };
  const double floor = result.guarded ? raw(options[fair_choice].config) / params.jct_guard : 0.0;
  const std::optional<Config> current =
      job.current ? std::optional<Config>(configOf(*job.current)) : std::nullopt;
  std::optional<double> current_remaining;
  if (current) current_remaining = remainingSeconds(job, goodput, *current);
  for (int i = 0; i < static_cast<int>(options.size()); ++i) {
    const JobOption& option = options[i];
    const bool is_current = option.config == current;
    if (!is_current && undoesLastChange(job, option.config, params, time)) continue;
    if (!is_current && raw(option.config) < floor && i != fair_choice) continue;
    const auto remaining = remainingSeconds(job, goodput, option.config);
    if (!remaining || !(*remaining > 0)) continue;
    // A change must pay for its cost within the time the job has left, the more so the more
    // seconds it lost to changes so far, or free GPUs.
    const bool pays = !current || is_current || !current_remaining ||
                      *remaining + secondsLost(job) < *current_remaining ||
                      option.config.gpus < current->gpus;
    if (!pays && i != fair_choice) continue;
    const double before_cost = raw(option.config);
    const double restart_factor =
        before_cost > 0 ? std::min(1.0, option.speedup / before_cost) : 1.0;
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
