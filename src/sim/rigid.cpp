// SPDX-License-Identifier: GPL-2.0-or-later
#include "rigid.hpp"

#include <algorithm>
#include <limits>
#include <vector>

namespace pollux::sim {

FreeGpus allFree(const Cluster& cluster) {
  FreeGpus free;
  for (const auto& node : cluster.nodes()) free[node.name] = node.gpus;
  return free;
}

void release(FreeGpus& free, const Assignment& assignment) {
  for (const auto& [node, gpus] : assignment.gpus_by_node) free[node] += gpus;
}

void take(FreeGpus& free, const Assignment& assignment) {
  for (const auto& [node, gpus] : assignment.gpus_by_node) free[node] -= gpus;
}

int freeOfType(const FreeGpus& free, const Cluster& cluster, const std::string& gpu_type) {
  int total = 0;
  for (const auto& [node, gpus] : free) {
    if (cluster.node(node).gpu_type == gpu_type) total += gpus;
  }
  return total;
}

int requestedGpus(const SimJob& job, const Cluster& cluster) {
  int largest_type = 0;
  for (const auto& type : cluster.gpuTypes()) {
    largest_type = std::max(largest_type, cluster.gpusOfType(type));
  }
  return std::min(job.spec().num_replicas, largest_type);
}

Assignment splitBatch(long total_batch, int gpus, int max_local_bsz) {
  const long batch = std::max(total_batch, static_cast<long>(gpus));
  const long per_gpu = (batch + gpus - 1) / gpus;
  const long micro_batches = (per_gpu + max_local_bsz - 1) / max_local_bsz;
  Assignment assignment;
  assignment.local_bsz = static_cast<int>((per_gpu + micro_batches - 1) / micro_batches);
  assignment.accum_steps = static_cast<int>(micro_batches - 1);
  return assignment;
}

Assignment rigidBatch(const SimJob& job, const std::string& gpu_type, int gpus) {
  return splitBatch(job.spec().batch_size, gpus, job.app().on(gpu_type).maxLocalBsz());
}

std::optional<Assignment> packRigid(const SimJob& job, const Cluster& cluster,
                                    const FreeGpus& free, const std::string& gpu_type, int gpus) {
  if (freeOfType(free, cluster, gpu_type) < gpus) return std::nullopt;
  std::vector<std::pair<int, std::string>> candidates;  // (free GPUs, node)
  for (const auto& [node, count] : free) {
    if (count > 0 && cluster.node(node).gpu_type == gpu_type) candidates.emplace_back(count, node);
  }
  // A node that fits the whole remainder alone is preferred (the tightest such node);
  // otherwise the node with the most free GPUs is filled first.
  Assignment assignment = rigidBatch(job, gpu_type, gpus);
  for (int left = gpus; left > 0;) {
    auto chosen = std::min_element(candidates.begin(), candidates.end(), [left](auto& a, auto& b) {
      const bool a_fits = a.first >= left, b_fits = b.first >= left;
      if (a_fits != b_fits) return a_fits;
      return a_fits ? a.first < b.first : a.first > b.first;
    });
    const int used = std::min(left, chosen->first);
    assignment.gpus_by_node[chosen->second] = used;
    left -= used;
    candidates.erase(chosen);
  }
  return assignment;
}

std::optional<Assignment> packOnAnyType(const SimJob& job, const Cluster& cluster,
                                        const FreeGpus& free) {
  const int gpus = requestedGpus(job, cluster);
  for (const auto& type : cluster.gpuTypes()) {
    if (cluster.gpusOfType(type) < gpus) continue;
    if (auto assignment = packRigid(job, cluster, free, type, gpus)) return assignment;
  }
  return std::nullopt;
}

double isolatedRunTime(const SimJob& job, const Cluster& cluster) {
  const int gpus = requestedGpus(job, cluster);
  double best = std::numeric_limits<double>::infinity();
  for (const auto& type : cluster.gpuTypes()) {
    const auto assignment = packRigid(job, cluster, allFree(cluster), type, gpus);
    if (!assignment) continue;
    SimJob alone(job.spec(), job.app(), job.restartCost());
    alone.assign(assignment, cluster, 0);
    best = std::min(best, alone.remainingTime());
  }
  return best;
}

double fairShareRunTime(const SimJob& job, const Cluster& cluster, double share_gpus) {
  double best = std::numeric_limits<double>::infinity();
  for (const auto& type : cluster.gpuTypes()) {
    const int gpus = std::clamp(static_cast<int>(share_gpus), 1, cluster.gpusOfType(type));
    const auto assignment = packRigid(job, cluster, allFree(cluster), type, gpus);
    if (!assignment) continue;
    SimJob alone(job.spec(), job.app(), job.restartCost());
    alone.assign(assignment, cluster, 0);
    best = std::min(best, alone.remainingTime());
  }
  return share_gpus < 1 ? best / share_gpus : best;
}

}  // namespace pollux::sim
