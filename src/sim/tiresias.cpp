// SPDX-License-Identifier: GPL-2.0-or-later
#include "tiresias.hpp"

#include <algorithm>

namespace pollux::sim {

int TiresiasScheduler::queueOf(const SimJob& job) const {
  return static_cast<int>(std::count_if(thresholds_.begin(), thresholds_.end(),
                                        [&job](double t) { return job.gpuSeconds() >= t; }));
}

std::vector<const SimJob*> TiresiasScheduler::priorityOrder(
    const std::vector<const SimJob*>& active) const {
  std::vector<const SimJob*> order = active;
  std::stable_sort(order.begin(), order.end(), [this](const SimJob* a, const SimJob* b) {
    return queueOf(*a) < queueOf(*b);  // stable: submit order inside a queue
  });
  return order;
}

std::map<std::string, Assignment> TiresiasScheduler::decide(
    double, const std::vector<const SimJob*>& active) {
  // Admission by GPU count per type; running jobs count on the type they hold.
  std::map<std::string, int> unclaimed;
  for (const auto& type : cluster_.gpuTypes()) unclaimed[type] = cluster_.gpusOfType(type);
  std::vector<std::pair<const SimJob*, std::string>> admitted;
  for (const SimJob* job : priorityOrder(active)) {
    const int gpus = requestedGpus(*job, cluster_);
    std::vector<std::string> types = cluster_.gpuTypes();
    if (job->assignment()) types = {job->gpuType()};
    for (const auto& type : types) {
      if (unclaimed[type] >= gpus) {
        unclaimed[type] -= gpus;
        admitted.emplace_back(job, type);
        break;
      }
    }
  }
  std::map<std::string, Assignment> decision;
  FreeGpus free = allFree(cluster_);
  for (const auto& [job, type] : admitted) {
    if (!job->assignment()) continue;
    decision[job->name()] = *job->assignment();
    take(free, *job->assignment());
  }
  for (const auto& [job, type] : admitted) {
    if (job->assignment()) continue;
    // Admission counted free GPUs of the type, so a (possibly multi-node) placement exists.
    const Assignment assignment =
        *packRigid(*job, cluster_, free, type, requestedGpus(*job, cluster_));
    decision[job->name()] = assignment;
    take(free, assignment);
  }
  return decision;
}

}  // namespace pollux::sim
