// SPDX-License-Identifier: GPL-2.0-or-later
// The round-based simulation loop: arrivals, one scheduling decision per round, training.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cluster.hpp"
#include "scheduler.hpp"
#include "sim_job.hpp"

namespace pollux::sim {

struct JobResult {
  std::string name;
  std::string application;
  double submit_time;
  double completion_time;
  int restarts;
  double paused_s;  // stopped by its changes: restarts and live stalls (not its first start)
  int flip_backs;   // rounds that undid the allocation of the round before
  double gpu_seconds;
  double isolated_s;  // run time alone with the requested GPUs and batch (isolatedRunTime)
  double fair_share_s;  // run time alone with its 1/N share of the cluster (fairShareRunTime),
                        // N the mean number of active jobs over the time it was active
};

// One job's allocation during one round.
struct TimelineRow {
  double time;
  double seconds;  // until the next round
  std::string job;
  std::string gpu_type;
  int gpus;
  long batch_size;
};

struct SimulationResult {
  std::vector<JobResult> jobs;  // in submit order
  std::vector<double> round_ms;  // wall time of each scheduling decision
  std::vector<TimelineRow> timeline;
};

struct SimulationOptions {
  double round_s = 60;
  // Event rounds, as sched/pollux's pollux_event_delay (the plugin's own rules): a look for
  // new work every event_delay_s after a round, and a round when a job has arrived or ended
  // since (at most one per event_delay_s; a round of either kind starts round_s again).
  // 0: regular rounds only.
  double event_delay_s = 0;
  bool record_timeline = false;
  // Called after every round with the simulated time and the jobs completed so far.
  std::function<void(double now, size_t completed, size_t total)> on_round;
};

// Runs the jobs (sorted by submit time) to completion. Throws std::logic_error if the
// scheduler over-commits a node, std::runtime_error if jobs are still unfinished a year
// after the last arrival (a scheduler that never runs them).
SimulationResult simulate(const Cluster& cluster, std::vector<SimJob> jobs, Scheduler& scheduler,
                          const SimulationOptions& options);

}  // namespace pollux::sim
