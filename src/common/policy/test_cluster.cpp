// SPDX-License-Identifier: GPL-2.0-or-later
#include "test_cluster.hpp"

namespace pollux::policy::testing {

std::vector<Node> nodesOf(const std::string& type, int count, int gpus,
                          const std::string& prefix) {
  std::vector<Node> nodes;
  for (int i = 0; i < count; ++i) nodes.push_back({prefix + std::to_string(i), type, gpus});
  return nodes;
}

Job adaptiveJob(const std::string& id, int min_gpus, int max_gpus, const std::string& type) {
  Job job;
  job.id = id;
  job.min_gpus = min_gpus;
  job.max_gpus = max_gpus;
  job.models[type] = {0.05, 0.002, 0.3, 0.02, 0.05, 0.005, 1.2};
  job.grad = {0.5, 20.0};
  job.limits = {64, 4096, 16, 256, true};
  return job;
}

Job rigidJob(const std::string& id, int gpus) {
  Job job;
  job.id = id;
  job.adaptive = false;
  job.min_gpus = gpus;
  job.max_gpus = gpus;
  return job;
}

}  // namespace pollux::policy::testing

namespace pollux::policy {

void PrintTo(const Allocation& allocation, std::ostream* out) {
  *out << allocation.gpu_type << " {";
  for (const auto& [name, gpus] : allocation.nodes) *out << " " << name << ":" << gpus;
  *out << " }";
}

}  // namespace pollux::policy
