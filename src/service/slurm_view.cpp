// SPDX-License-Identifier: GPL-2.0-or-later
#include "slurm_view.hpp"

#include <algorithm>
#include <map>

#include "common/invalid_input.hpp"

namespace pollux::service {

const char* toString(JobState state) {
  switch (state) {
    case JobState::kPending: return "pending";
    case JobState::kRunning: return "running";
    case JobState::kOther: return "other";
  }
  return "other";
}

std::string gpuTypeOf(const GpuGres& gpus) { return gpus.type.empty() ? kUntypedGpu : gpus.type; }

GpuGres requestedGpus(const GpuRequest& request) {
  GpuGres total;
  const auto consider = [&total](const std::string& form, int times) {
    const auto gpus = parseGpuGres(form);
    if (gpus && gpus->count * std::max(times, 1) > total.count) {
      total = GpuGres{gpus->type, gpus->count * std::max(times, 1)};
    }
  };
  consider(request.per_node, request.nodes);
  consider(request.per_job, 1);
  consider(request.per_task, request.tasks);
  consider(request.per_socket, request.sockets_per_node * request.nodes);
  return total;
}

policy::NodeDemand nodeDemandOf(const ResourceRequest& request) {
  policy::NodeDemand demand;
  demand.cpus = std::max(1, request.min_cpus_per_node);
  const bool default_cpus = request.cpus_per_tres.empty() && request.cpus_per_task <= 1;
  const int cpus_per_gpu = default_cpus
                               ? request.default_cpus_per_gpu
                               : parseGpuGres(request.cpus_per_tres).value_or(GpuGres{}).count;
  demand.cpus_per_gpu = std::max(cpus_per_gpu, request.ntasks_per_gpu * request.cpus_per_task);
  const std::int64_t memory_per_gpu =
      request.mem_per_tres.empty()
          ? request.default_memory_mb_per_gpu
          : parseGpuGres(request.mem_per_tres).value_or(GpuGres{}).count;
  if (memory_per_gpu > 0 && !request.memory_set) {
    demand.memory_mb_per_gpu = memory_per_gpu;
  } else if (request.memory_mb_per_cpu > 0) {
    demand.memory_mb_per_cpu = request.memory_mb_per_cpu;
  } else if (request.memory_mb_per_node > 0) {
    demand.memory_mb = request.memory_mb_per_node;
  } else {
    demand.whole_node_memory = true;
  }
  return demand;
}

void readRequests(SlurmJob& job) {
  job.adaptive.reset();
  job.comment_error.clear();
  try {
    job.adaptive = schema::parseAdaptiveComment(job.comment);
  } catch (const InvalidInput& error) {
    job.comment_error = error.what();  // treated as rigid; job_submit rejects these at sbatch
  }
  job.gpus_per_node = parseGpuGres(job.gpu_request.per_node);
  job.requested_gpus = requestedGpus(job.gpu_request);
  job.demand = nodeDemandOf(job.resources);
}

void resolveGpuTypes(std::vector<SlurmJob>& jobs, const std::vector<SlurmNode>& nodes) {
  std::map<std::string, std::string> node_types;
  for (const auto& node : nodes) node_types[node.name] = gpuTypeOf(node.gpus);
  for (auto& job : jobs) {
    if (!job.gpus_per_node || !job.gpus_per_node->type.empty() || job.nodes.empty()) continue;
    const auto type = node_types.find(job.nodes.front());
    if (type != node_types.end()) job.gpus_per_node->type = type->second;
  }
}

}  // namespace pollux::service
