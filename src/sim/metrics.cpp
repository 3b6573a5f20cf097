// SPDX-License-Identifier: GPL-2.0-or-later
#include "metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace pollux::sim {

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double position = q * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(position));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (position - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

Summary summarize(const SimulationResult& result) {
  Summary summary;
  summary.jobs = result.jobs.size();
  summary.rounds = result.round_ms.size();
  summary.round_ms_median = quantile(result.round_ms, 0.5);
  summary.round_ms_p95 = quantile(result.round_ms, 0.95);
  summary.round_ms_max = quantile(result.round_ms, 1.0);
  if (result.jobs.empty()) return summary;
  std::vector<double> jcts;
  std::vector<double> themis;
  double first_submit = std::numeric_limits<double>::infinity(), last_completion = 0;
  double restarts = 0, gpu_seconds = 0, ftf_sum = 0;
  for (const auto& job : result.jobs) {
    const double jct = job.completion_time - job.submit_time;
    jcts.push_back(jct);
    first_submit = std::min(first_submit, job.submit_time);
    last_completion = std::max(last_completion, job.completion_time);
    restarts += job.restarts;
    summary.max_restarts = std::max(summary.max_restarts, job.restarts);
    summary.max_paused_share = std::max(summary.max_paused_share, job.paused_s / jct);
    summary.avg_paused_share += job.paused_s / jct;
    summary.flip_backs += job.flip_backs;
    themis.push_back(jct / job.fair_share_s);
    gpu_seconds += job.gpu_seconds;
    const double ftf = jct / job.isolated_s;
    ftf_sum += ftf;
    summary.max_ftf = std::max(summary.max_ftf, ftf);
  }
  const double count = static_cast<double>(result.jobs.size());
  summary.avg_jct_s = std::accumulate(jcts.begin(), jcts.end(), 0.0) / count;
  summary.median_jct_s = quantile(jcts, 0.5);
  summary.p99_jct_s = quantile(jcts, 0.99);
  summary.makespan_s = last_completion - first_submit;
  summary.restarts_per_job = restarts / count;
  summary.avg_paused_share /= count;
  summary.gpu_hours_per_job = gpu_seconds / 3600 / count;
  summary.avg_ftf = ftf_sum / count;
  summary.themis_ftf_p99 = quantile(themis, 0.99);
  summary.themis_ftf_max = quantile(themis, 1.0);
  return summary;
}

}  // namespace pollux::sim
