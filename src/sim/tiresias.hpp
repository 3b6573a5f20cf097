// SPDX-License-Identifier: GPL-2.0-or-later
// Tiresias' discretized two-dimensional least-attained-service policy (Gu et al., NSDI'19).
#pragma once

#include <vector>

#include "cluster.hpp"
#include "rigid.hpp"
#include "scheduler.hpp"

namespace pollux::sim {

// Rigid jobs (the user's GPU count and batch size), preemptive. A job's queue is the number
// of thresholds its attained service (GPU-seconds) has passed; lower queues go first, FIFO by
// submit time inside a queue. Each round, jobs are admitted in that order while GPUs remain
// (a job that does not fit is skipped, so smaller ones behind it may run); running jobs that
// are not admitted are preempted. Admitted running jobs keep their GPUs.
class TiresiasScheduler : public Scheduler {
 public:
  // Default: two queues split at 16 GPU-hours, the setting of the Pollux artifact's Tiresias.
  explicit TiresiasScheduler(const Cluster& cluster,
                             std::vector<double> thresholds_gpu_s = {16 * 3600.0})
      : cluster_(cluster), thresholds_(std::move(thresholds_gpu_s)) {}
  std::map<std::string, Assignment> decide(double now,
                                           const std::vector<const SimJob*>& active) override;

 private:
  int queueOf(const SimJob& job) const;
  std::vector<const SimJob*> priorityOrder(const std::vector<const SimJob*>& active) const;

  const Cluster& cluster_;
  std::vector<double> thresholds_;
};

}  // namespace pollux::sim
