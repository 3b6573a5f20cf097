// SPDX-License-Identifier: GPL-2.0-or-later
#include "fifo.hpp"

#include <algorithm>
#include <limits>

namespace pollux::sim {

FifoScheduler::Running FifoScheduler::runningOn(const SimJob& job, const Assignment& assignment,
                                                double now) const {
  SimJob trial = job;
  if (!job.assignment()) trial.assign(assignment, cluster_, now);
  return {now + trial.remainingTime(), cluster_.node(assignment.gpus_by_node.begin()->first).gpu_type,
          assignment.totalGpus()};
}

FifoScheduler::Reservation FifoScheduler::reserve(const SimJob& head, const FreeGpus& free,
                                                  const std::vector<Running>& running) const {
  const int wanted = requestedGpus(head, cluster_);
  Reservation best{"", std::numeric_limits<double>::infinity(), 0};
  for (const auto& type : cluster_.gpuTypes()) {
    if (cluster_.gpusOfType(type) < wanted) continue;
    std::vector<Running> ending;
    for (const auto& job : running) {
      if (job.gpu_type == type) ending.push_back(job);
    }
    std::sort(ending.begin(), ending.end(),
              [](const Running& a, const Running& b) { return a.end_time < b.end_time; });
    int available = freeOfType(free, cluster_, type);
    for (const auto& job : ending) {
      if (available >= wanted) break;
      available += job.gpus;
      if (available >= wanted && job.end_time < best.start_time) {
        best = {type, job.end_time, available - wanted};
      }
    }
  }
  return best;
}

bool FifoScheduler::delaysReservation(const Running& candidate, Reservation& reservation) const {
  if (candidate.gpu_type != reservation.gpu_type || candidate.end_time <= reservation.start_time) {
    return false;
  }
  if (candidate.gpus > reservation.spare_gpus) return true;
  reservation.spare_gpus -= candidate.gpus;
  return false;
}

std::map<std::string, Assignment> FifoScheduler::decide(double now,
                                                        const std::vector<const SimJob*>& active) {
  std::map<std::string, Assignment> decision;
  FreeGpus free = allFree(cluster_);
  std::vector<Running> running;
  for (const SimJob* job : active) {
    if (!job->assignment()) continue;
    decision[job->name()] = *job->assignment();
    take(free, *job->assignment());
    running.push_back(runningOn(*job, *job->assignment(), now));
  }
  std::optional<Reservation> reservation;
  for (const SimJob* job : active) {  // active jobs come in submit order
    if (job->assignment()) continue;
    const auto assignment = packOnAnyType(*job, cluster_, free);
    if (!assignment) {
      if (!reservation) reservation = reserve(*job, free, running);
      continue;
    }
    const Running started = runningOn(*job, *assignment, now);
    if (reservation && delaysReservation(started, *reservation)) continue;
    decision[job->name()] = *assignment;
    take(free, *assignment);
    running.push_back(started);
  }
  return decision;
}

}  // namespace pollux::sim
