// SPDX-License-Identifier: GPL-2.0-or-later
#include "validation.hpp"

#include <cmath>
#include <map>
#include <set>

#include "common/invalid_input.hpp"

namespace pollux::policy {

namespace {

void requireFinite(double value, const std::string& what) {
  if (!std::isfinite(value)) throw InvalidInput(what + " must be finite, got " + std::to_string(value));
}

std::map<std::string, const Node*> validateNodes(const std::vector<Node>& nodes) {
  std::map<std::string, const Node*> by_name;
  for (const auto& node : nodes) {
    if (node.name.empty()) throw InvalidInput("a node has an empty name");
    if (node.gpu_type.empty()) throw InvalidInput("node " + node.name + " has an empty gpu_type");
    if (node.gpus < 0) {
      throw InvalidInput("node " + node.name + " has gpus < 0: " + std::to_string(node.gpus));
    }
    if (node.cpus && *node.cpus < 0) throw InvalidInput("node " + node.name + " has cpus < 0");
    if (node.memory_mb && *node.memory_mb < 0) {
      throw InvalidInput("node " + node.name + " has memory_mb < 0");
    }
    if (!by_name.emplace(node.name, &node).second) {
      throw InvalidInput("duplicate node name " + node.name);
    }
  }
  return by_name;
}

void validateParams(const Params& params) {
  requireFinite(params.fairness_p, "params.fairness_p");
  if (!(params.jct_guard >= 1) || !std::isfinite(params.jct_guard)) {
    throw InvalidInput("params.jct_guard must be a finite number >= 1");
  }
  requireNonNegative(params.restart_threshold, "params.restart_threshold");
  requireNonNegative(params.priority_weight, "params.priority_weight");
  requireNonNegative(params.min_change_interval_s, "params.min_change_interval_s");
  requirePositive(params.time_limit_s, "params.time_limit_s");
  requireNonNegative(params.exact_jobs, "params.exact_jobs");
  requireNonNegative(params.partition_jobs, "params.partition_jobs");
  for (const auto& [type, speed] : params.relative_speeds) {
    requirePositive(speed, ("params.relative_speeds." + type).c_str());
  }
}

void validateModels(const Job& job) {
  for (const auto& [type, params] : job.models) {
    try {
      model::validate(params);
    } catch (const InvalidInput& error) {
      throw InvalidInput("job " + job.id + " model for " + type + ": " + error.what());
    }
  }
  try {
    model::validate(job.grad);
    model::validate(job.limits);
  } catch (const InvalidInput& error) {
    throw InvalidInput("job " + job.id + ": " + error.what());
  }
}

void validateDemand(const NodeDemand& demand, const std::string& job_name) {
  const std::string name = job_name + " node_demand";
  if (demand.cpus < 1) throw InvalidInput(name + " needs cpus >= 1");
  if (demand.cpus_per_gpu < 0) throw InvalidInput(name + " has cpus_per_gpu < 0");
  if (demand.memory_mb < 0 || demand.memory_mb_per_cpu < 0 || demand.memory_mb_per_gpu < 0) {
    throw InvalidInput(name + " has a memory request < 0");
  }
}

void validateJobFields(const Job& job) {
  const std::string name = "job " + job.id;
  if (job.id.empty()) throw InvalidInput("a job has an empty id");
  requireFinite(job.submit_time, name + " submit_time");
  requireFinite(job.last_change_time, name + " last_change_time");
  requireNonNegative(job.restart_cost_s, (name + " restart_cost_s").c_str());
  if (job.live_resize_cost_s) {
    requireNonNegative(*job.live_resize_cost_s, (name + " live_resize_cost_s").c_str());
  }
  if (job.restarts < 0) throw InvalidInput(name + " has restarts < 0");
  if (job.min_gpus < 1) {
    throw InvalidInput(name + " needs min_gpus >= 1, got " + std::to_string(job.min_gpus));
  }
  if (job.min_gpus > job.max_gpus) {
    throw InvalidInput(name + " has min_gpus " + std::to_string(job.min_gpus) + " > max_gpus " +
                       std::to_string(job.max_gpus));
  }
  if (!job.adaptive && job.min_gpus != job.max_gpus) {
    throw InvalidInput(name + " is rigid but min_gpus != max_gpus");
  }
  if (job.gpu_type && job.gpu_type->empty()) throw InvalidInput(name + " has an empty gpu_type");
  validateDemand(job.demand, name);
  validateModels(job);
  if (job.length) {
    requireFinite(job.length->progress, name + " progress");
    requireFinite(job.length->target, name + " target_progress");
    requireNonNegative(job.length->progress, (name + " progress").c_str());
    requirePositive(job.length->target, (name + " target_progress").c_str());
  }
}

// Adds the job's current GPUs to `used`, checking them against the nodes.
void validateCurrent(const Job& job, const std::map<std::string, const Node*>& nodes,
                     std::map<std::string, int>& used) {
  if (!job.current) return;
  const std::string name = "job " + job.id;
  if (job.current->nodes.empty()) throw InvalidInput(name + " has a current allocation with no nodes");
  for (const auto& [node_name, gpus] : job.current->nodes) {
    const auto node = nodes.find(node_name);
    if (node == nodes.end()) throw InvalidInput(name + " runs on unknown node " + node_name);
    if (node->second->gpu_type != job.current->gpu_type) {
      throw InvalidInput(name + " runs on node " + node_name + " of type " +
                         node->second->gpu_type + ", not " + job.current->gpu_type);
    }
    if (gpus < 1) throw InvalidInput(name + " holds " + std::to_string(gpus) + " GPUs on " + node_name);
    used[node_name] += gpus;
    if (used[node_name] > node->second->gpus) {
      throw InvalidInput("node " + node_name + " has " + std::to_string(node->second->gpus) +
                         " GPUs but its jobs (up to " + job.id + ") hold " +
                         std::to_string(used[node_name]));
    }
  }
}

// GPUs a live move still holds beside the job's current allocation: free in the round's
// view, so they count against no node's GPUs; each on a known node, within its GPUs.
void validateLeaving(const Job& job, const std::map<std::string, const Node*>& nodes) {
  if (!job.leaving) return;
  const std::string name = "job " + job.id;
  for (const auto& [node_name, gpus] : job.leaving->nodes) {
    const auto node = nodes.find(node_name);
    if (node == nodes.end()) throw InvalidInput(name + " is leaving unknown node " + node_name);
    if (gpus < 1 || gpus > node->second->gpus) {
      throw InvalidInput(name + " is leaving " + std::to_string(gpus) + " GPUs on " + node_name +
                         ", which has " + std::to_string(node->second->gpus));
    }
  }
}

void validatePartitions(const Snapshot& snapshot) {
  for (const auto& [name, nodes] : snapshot.partitions) {
    if (name.empty()) throw InvalidInput("a partition has an empty name");
    if (nodes.count("")) throw InvalidInput("partition " + name + " has an empty node name");
  }
  for (const auto& job : snapshot.jobs) {
    if (job.partition && snapshot.partitions.count(*job.partition) == 0) {
      throw InvalidInput("job " + job.id + " is in partition " + *job.partition +
                         ", which the snapshot's partitions do not list");
    }
  }
}

void validateBudgets(const Snapshot& snapshot) {
  for (const auto& [name, units] : snapshot.budgets) {
    if (name.empty()) throw InvalidInput("a budget has an empty name");
    if (units < 0) {
      throw InvalidInput("budget " + name + " is below 0: " + std::to_string(units));
    }
  }
  for (const auto& job : snapshot.jobs) {
    std::set<std::string> named;
    for (const auto& [name, per_gpu, per_node] : job.budgets) {
      if (per_gpu < 0 || per_node < 0 || per_gpu + per_node < 1) {
        throw InvalidInput("job " + job.id + " takes " + std::to_string(per_gpu) +
                           " of budget " + name + " per GPU and " + std::to_string(per_node) +
                           " per node (each >= 0, not both 0)");
      }
      if (snapshot.budgets.count(name) == 0) {
        throw InvalidInput("job " + job.id + " counts against budget " + name +
                           ", which the snapshot's budgets do not list");
      }
      if (!named.insert(name).second) {
        throw InvalidInput("job " + job.id + " names budget " + name + " twice");
      }
    }
  }
}

}  // namespace

void validate(const Snapshot& snapshot) {
  requireFinite(snapshot.time, "snapshot time");
  validateParams(snapshot.params);
  const auto nodes = validateNodes(snapshot.nodes);
  validatePartitions(snapshot);
  validateBudgets(snapshot);
  std::set<std::string> ids;
  std::map<std::string, int> used;
  for (const auto& job : snapshot.jobs) {
    validateJobFields(job);
    if (!ids.insert(job.id).second) throw InvalidInput("duplicate job id " + job.id);
    validateCurrent(job, nodes, used);
    validateLeaving(job, nodes);
  }
}

}  // namespace pollux::policy
