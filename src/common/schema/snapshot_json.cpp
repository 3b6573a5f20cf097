#include "snapshot_json.hpp"

#include "common/invalid_input.hpp"
#include "json_reader.hpp"
#include "model_json.hpp"

namespace pollux::schema {

namespace {

constexpr long kMaxGpus = 1L << 20;
constexpr long kMaxCpus = 1L << 20;
constexpr long kMaxMemoryMb = 1L << 50;  // a petabyte: beyond any node

policy::Node parseNode(const JsonField& field) {
  field.requireOnlyKeys({"name", "gpu_type", "gpus", "cpus", "memory_mb"});
  policy::Node node{field["name"].string(), field["gpu_type"].string(),
                    static_cast<int>(field["gpus"].integer(0, kMaxGpus))};
  if (field.has("cpus")) node.cpus = static_cast<int>(field["cpus"].integer(0, kMaxCpus));
  if (field.has("memory_mb")) node.memory_mb = field["memory_mb"].integer(0, kMaxMemoryMb);
  return node;
}

policy::NodeDemand parseNodeDemand(const JsonField& field) {
  field.requireOnlyKeys({"cpus", "cpus_per_gpu", "memory_mb", "memory_mb_per_cpu",
                         "memory_mb_per_gpu", "whole_node_memory"});
  policy::NodeDemand demand;
  if (field.has("cpus")) demand.cpus = static_cast<int>(field["cpus"].integer(1, kMaxCpus));
  if (field.has("cpus_per_gpu")) {
    demand.cpus_per_gpu = static_cast<int>(field["cpus_per_gpu"].integer(0, kMaxCpus));
  }
  if (field.has("memory_mb")) demand.memory_mb = field["memory_mb"].integer(0, kMaxMemoryMb);
  if (field.has("memory_mb_per_cpu")) {
    demand.memory_mb_per_cpu = field["memory_mb_per_cpu"].integer(0, kMaxMemoryMb);
  }
  if (field.has("memory_mb_per_gpu")) {
    demand.memory_mb_per_gpu = field["memory_mb_per_gpu"].integer(0, kMaxMemoryMb);
  }
  if (field.has("whole_node_memory")) {
    demand.whole_node_memory = field["whole_node_memory"].boolean();
  }
  return demand;
}

policy::Job parseJob(const JsonField& field) {
  field.requireOnlyKeys({"id", "submit_time", "adaptive", "min_gpus", "max_gpus", "gpu_type",
                         "current", "last_change_time", "restarts", "restart_cost_s", "models",
                         "grad_params", "init_batch_size", "max_batch_size",
                         "local_bsz_bounds", "accumulation", "node_demand", "partition"});
  policy::Job job;
  job.id = field["id"].idString();
  job.submit_time = field["submit_time"].nonNegativeNumber();
  job.adaptive = field["adaptive"].boolean();
  job.min_gpus = static_cast<int>(field["min_gpus"].integer(1, kMaxGpus));
  job.max_gpus = static_cast<int>(field["max_gpus"].integer(1, kMaxGpus));
  if (job.min_gpus > job.max_gpus) {
    throw InvalidInput(field.path() + ": min_gpus (" + std::to_string(job.min_gpus) +
                       ") is above max_gpus (" + std::to_string(job.max_gpus) + ")");
  }
  if (field.has("gpu_type")) job.gpu_type = field["gpu_type"].string();
  if (field.has("partition")) job.partition = field["partition"].string();
  if (field.has("current")) job.current = parseAllocation(field["current"]);
  if (field.has("last_change_time")) {
    job.last_change_time = field["last_change_time"].nonNegativeNumber();
  }
  if (field.has("restarts")) {
    job.restarts = static_cast<int>(field["restarts"].integer(0, 1L << 30));
  }
  if (field.has("restart_cost_s")) {
    job.restart_cost_s = field["restart_cost_s"].nonNegativeNumber();
  }
  if (field.has("node_demand")) job.demand = parseNodeDemand(field["node_demand"]);
  if (!job.adaptive) return job;
  if (field.has("models")) {
    job.models = parsePerfParamsByType(field["models"]);
  }
  job.grad = parseGradParams(field["grad_params"]);
  job.limits = parseBatchLimits(field, false);
  return job;
}

// {"NAME": ["NODE", ...], ...}
std::map<std::string, policy::NodeSet> parsePartitions(const JsonField& field) {
  std::map<std::string, policy::NodeSet> partitions;
  for (const auto& name : field.memberNames()) {
    const JsonField nodes = field.member(name);
    policy::NodeSet& members = partitions[name];
    for (Json::ArrayIndex i = 0; i < nodes.arraySize(); ++i) members.insert(nodes.at(i).string());
  }
  return partitions;
}

policy::Params parseParams(const JsonField& field) {
  field.requireOnlyKeys({"fairness_p", "restart_threshold", "min_change_interval_s",
                         "time_limit_s", "relative_speeds"});
  policy::Params params;
  if (field.has("fairness_p")) params.fairness_p = field["fairness_p"].number();
  if (field.has("restart_threshold")) {
    params.restart_threshold = field["restart_threshold"].nonNegativeNumber();
  }
  if (field.has("min_change_interval_s")) {
    params.min_change_interval_s = field["min_change_interval_s"].nonNegativeNumber();
  }
  if (field.has("time_limit_s")) params.time_limit_s = field["time_limit_s"].positiveNumber();
  if (field.has("relative_speeds")) {
    const JsonField speeds = field["relative_speeds"];
    for (const auto& type : speeds.memberNames()) {
      params.relative_speeds[type] = speeds.member(type).positiveNumber();
    }
  }
  return params;
}

}  // namespace

policy::Allocation parseAllocation(const JsonField& field) {
  field.requireOnlyKeys({"gpu_type", "nodes", "gpus"});
  policy::Allocation allocation;
  allocation.gpu_type = field["gpu_type"].string();
  const JsonField nodes = field["nodes"];
  for (const auto& name : nodes.memberNames()) {
    allocation.nodes[name] = static_cast<int>(nodes.member(name).integer(1, kMaxGpus));
  }
  if (field.has("gpus") && field["gpus"].integer(0, kMaxGpus) != allocation.totalGpus())
    throw InvalidInput(field.path() + ".gpus: is not the sum of the GPUs on the nodes");
  return allocation;
}



policy::Snapshot parseSnapshot(const std::string& text) {
  const Json::Value document = JsonField::parseDocument(text);
  const JsonField root(document, "");
  root.requireOnlyKeys({"time", "nodes", "jobs", "params", "partitions"});
  policy::Snapshot snapshot;
  snapshot.time = root["time"].nonNegativeNumber();
  const JsonField nodes = root["nodes"];
  for (Json::ArrayIndex i = 0; i < nodes.arraySize(); ++i) {
    snapshot.nodes.push_back(parseNode(nodes.at(i)));
  }
  const JsonField jobs = root["jobs"];
  for (Json::ArrayIndex i = 0; i < jobs.arraySize(); ++i) {
    snapshot.jobs.push_back(parseJob(jobs.at(i)));
  }
  if (root.has("params")) snapshot.params = parseParams(root["params"]);
  if (root.has("partitions")) snapshot.partitions = parsePartitions(root["partitions"]);
  return snapshot;
}

Json::Value allocationToJson(const policy::Allocation& allocation) {
  Json::Value out;
  out["gpu_type"] = allocation.gpu_type;
  out["nodes"] = Json::Value(Json::objectValue);
  for (const auto& [node, gpus] : allocation.nodes) out["nodes"][node] = gpus;
  return out;
}

Json::Value decisionToJson(const policy::Decision& decision) {
  Json::Value out;
  out["allocations"] = Json::Value(Json::objectValue);
  for (const auto& [id, job] : decision.allocations) {
    Json::Value& entry = out["allocations"][id];
    entry = allocationToJson(job.allocation);
    entry["batch_size"] = Json::Int64(job.batch_size);
    entry["local_bsz"] = job.local_bsz;
    entry["accum_steps"] = job.accum_steps;
  }
  Json::Value& stats = out["stats"];
  stats["solve_ms"] = decision.stats.solve_ms;
  stats["solver_status"] = decision.stats.solver_status;
  stats["kept_current"] = decision.stats.kept_current;
  stats["candidate_configs"] = decision.stats.candidate_configs;
  return out;
}

}  // namespace pollux::schema
