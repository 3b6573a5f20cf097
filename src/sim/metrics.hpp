// SPDX-License-Identifier: GPL-2.0-or-later
// Summary statistics of a simulation run.
#pragma once

#include <vector>

#include "simulation.hpp"

namespace pollux::sim {

struct Summary {
  size_t jobs = 0;
  double avg_jct_s = 0;
  double median_jct_s = 0;
  double p99_jct_s = 0;
  double makespan_s = 0;  // first submission to last completion
  double restarts_per_job = 0;
  int max_restarts = 0;
  // Restart and stall time over JCT: the largest of a job's, and the mean over jobs.
  double max_paused_share = 0;
  double avg_paused_share = 0;
  int flip_backs = 0;  // allocations changed and changed back at the next round, all jobs
  double gpu_hours_per_job = 0;
  // Finish-time fairness rho = JCT / isolated run time (requested GPUs and batch size, alone
  // on the cluster); rho > 1 means the job finished later than it would have alone.
  double avg_ftf = 0;
  double max_ftf = 0;
  // Themis' finish-time fairness: JCT / run time alone with a 1/N share of the cluster.
  double themis_ftf_p99 = 0;
  double themis_ftf_max = 0;
  size_t rounds = 0;
  double round_ms_median = 0;
  double round_ms_p95 = 0;
  double round_ms_max = 0;
};

// Linearly interpolated quantile (q in [0, 1]) of `values`; 0 if empty.
double quantile(std::vector<double> values, double q);

Summary summarize(const SimulationResult& result);

}  // namespace pollux::sim
