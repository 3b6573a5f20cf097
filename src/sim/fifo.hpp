// SPDX-License-Identifier: GPL-2.0-or-later
// First-come first-served rigid jobs with EASY backfill, as stock Slurm runs them.
#pragma once

#include "cluster.hpp"
#include "rigid.hpp"
#include "scheduler.hpp"

namespace pollux::sim {

// Non-preemptive: a started job keeps its GPUs until it completes. Pending jobs start in
// submit order; when the first one does not fit, it gets a reservation on the GPU type where
// it can start soonest (running jobs' run times are known exactly, as perfect time limits),
// and later jobs may start only if they do not delay it: on another type, ending before the
// reservation, or using GPUs the reservation leaves spare.
class FifoScheduler : public Scheduler {
 public:
  explicit FifoScheduler(const Cluster& cluster) : cluster_(cluster) {}
  std::map<std::string, Assignment> decide(double now,
                                           const std::vector<const SimJob*>& active) override;

 private:
  struct Running {
    double end_time;
    std::string gpu_type;
    int gpus;
  };
  struct Reservation {
    std::string gpu_type;
    double start_time;
    int spare_gpus;  // GPUs of that type still free at start_time once the head job starts
  };
  Reservation reserve(const SimJob& head, const FreeGpus& free,
                      const std::vector<Running>& running) const;
  Running runningOn(const SimJob& job, const Assignment& assignment, double now) const;
  bool delaysReservation(const Running& candidate, Reservation& reservation) const;

  const Cluster& cluster_;
};

}  // namespace pollux::sim
