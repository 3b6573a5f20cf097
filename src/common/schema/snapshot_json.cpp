// SPDX-License-Identifier: GPL-2.0-or-later
#include "snapshot_json.hpp"

#include <algorithm>
#include <set>

#include "common/invalid_input.hpp"
#include "json_reader.hpp"
#include "model_json.hpp"

namespace pollux::schema {

namespace {

constexpr long kMaxGpus = 1L << 20;
constexpr long kMaxCpus = 1L << 20;
constexpr long kMaxMemoryMb = 1L << 50;  // a petabyte: beyond any node
constexpr long kMaxBudgetUnits = 1L << 50;  // MB of memory of any cluster

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

// "NAME" (1 unit per GPU) or {"name": NAME, "per_gpu": UNITS, "per_node": UNITS} (each
// absent: 0; not both 0).
policy::BudgetUse parseBudgetUse(const JsonField& field) {
  if (field.isString()) return {field.string(), 1, 0};
  field.requireOnlyKeys({"name", "per_gpu", "per_node"});
  const auto units = [&](const char* key) {
    return field.has(key) ? field[key].integer(0, kMaxBudgetUnits) : 0;
  };
  policy::BudgetUse use{field["name"].string(), units("per_gpu"), units("per_node")};
  if (use.per_gpu + use.per_node == 0) {
    throw InvalidInput(field.path() + ": takes nothing of budget '" + use.name +
                       "' (per_gpu and per_node both 0)");
  }
  return use;
}

// The budgets a job counts against, each once.
std::vector<policy::BudgetUse> parseBudgetUses(const JsonField& field) {
  std::vector<policy::BudgetUse> uses;
  std::set<std::string> names;
  for (Json::ArrayIndex i = 0; i < field.arraySize(); ++i) {
    uses.push_back(parseBudgetUse(field.at(i)));
    if (!names.insert(uses.back().name).second) {
      throw InvalidInput(field.at(i).path() + ": budget '" + uses.back().name +
                         "' is named twice");
    }
  }
  return uses;
}

// A job's running parts, oldest first: each within its current allocation.
std::vector<policy::Allocation> parseParts(const JsonField& field,
                                           const std::optional<policy::Allocation>& current) {
  std::vector<policy::Allocation> parts;
  for (Json::ArrayIndex i = 0; i < field.arraySize(); ++i) {
    parts.push_back(parseAllocation(field.at(i)));
    const policy::Allocation& part = parts.back();
    const bool within = current && current->gpu_type == part.gpu_type &&
                        std::all_of(part.nodes.begin(), part.nodes.end(), [&](const auto& node) {
                          const auto held = current->nodes.find(node.first);
                          return held != current->nodes.end() && held->second >= node.second;
                        });
    if (!within) throw InvalidInput(field.at(i).path() + ": a part lies within current");
  }
  return parts;
}

policy::Job parseJob(const JsonField& field) {
  field.requireOnlyKeys({"id",
                         "submit_time",
                         "adaptive",
                         "min_gpus",
                         "max_gpus",
                         "gpu_type",
                         "current",
                         "last_change_time",
                         "restarts",
                         "restart_cost_s",
                         "models",
                         "grad_params",
                         "init_batch_size",
                         "max_batch_size",
                         "local_bsz_bounds",
                         "accumulation",
                         "node_demand",
                         "partition",
                         "progress",
                         "target_progress",
                         "budgets",
                         "priority",
                         "live_resize_cost_s",
                         "grows_live",
                         "join_startup_s",
                         "lost_s",
                         "previous",
                         "parts",
                         "leaving",
                         "batch_hosts",
                         "moves_live"});
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
  if (field.has("live_resize_cost_s")) {
    job.live_resize_cost_s = field["live_resize_cost_s"].nonNegativeNumber();
  }
  if (field.has("grows_live")) job.grows_live = field["grows_live"].boolean();
  if (field.has("moves_live")) job.moves_live = field["moves_live"].boolean();
  if (field.has("join_startup_s")) {
    job.join_startup_s = field["join_startup_s"].nonNegativeNumber();
  }
  if (field.has("lost_s")) job.lost_s = field["lost_s"].nonNegativeNumber();
  if (field.has("previous")) job.previous = parseAllocation(field["previous"]);
  if (field.has("parts")) job.parts = parseParts(field["parts"], job.current);
  if (field.has("leaving")) job.leaving = parseAllocation(field["leaving"]);
  if (field.has("batch_hosts")) {
    const JsonField hosts = field["batch_hosts"];
    for (Json::ArrayIndex i = 0; i < hosts.arraySize(); ++i) {
      job.batch_hosts.insert(hosts.at(i).string());
    }
  }
  if (field.has("node_demand")) job.demand = parseNodeDemand(field["node_demand"]);
  if (field.has("budgets")) job.budgets = parseBudgetUses(field["budgets"]);
  if (field.has("priority")) job.priority = field["priority"].nonNegativeNumber();
  if (field.has("progress") != field.has("target_progress")) {
    throw InvalidInput(field.path() + ": progress and target_progress come together");
  }
  if (field.has("progress")) {
    job.length = policy::DeclaredLength{field["progress"].nonNegativeNumber(),
                                        field["target_progress"].positiveNumber()};
  }
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

// {"NAME": UNITS, ...}
std::map<std::string, std::int64_t> parseBudgets(const JsonField& field) {
  std::map<std::string, std::int64_t> budgets;
  for (const auto& name : field.memberNames()) {
    if (name.empty()) throw InvalidInput(field.path() + ": a budget has an empty name");
    budgets[name] = field.member(name).integer(0, kMaxBudgetUnits);
  }
  return budgets;
}

// Every budget a job names is one of the snapshot's.
void checkBudgetNames(const JsonField& jobs, const policy::Snapshot& snapshot) {
  for (std::size_t i = 0; i < snapshot.jobs.size(); ++i) {
    const auto& uses = snapshot.jobs[i].budgets;
    for (std::size_t k = 0; k < uses.size(); ++k) {
      if (snapshot.budgets.count(uses[k].name)) continue;
      const JsonField use = jobs.at(Json::ArrayIndex(i))["budgets"].at(Json::ArrayIndex(k));
      throw InvalidInput(use.path() + ": unknown budget '" + uses[k].name +
                         "' (not in the snapshot's budgets)");
    }
  }
}

policy::Objective parseObjective(const JsonField& field) {
  const std::string name = field.string();
  if (name == "goodput") return policy::Objective::kGoodput;
  if (name == "jct") return policy::Objective::kJct;
  throw InvalidInput(field.path() + ": must be \"goodput\" or \"jct\", got \"" + name + "\"");
}

const char* objectiveName(policy::Objective objective) {
  return objective == policy::Objective::kGoodput ? "goodput" : "jct";
}

policy::Params parseParams(const JsonField& field) {
  field.requireOnlyKeys({"fairness_p", "restart_threshold", "min_change_interval_s",
                         "time_limit_s", "relative_speeds", "objective", "jct_guard",
                         "priority_weight"});
  policy::Params params;
  if (field.has("objective")) params.objective = parseObjective(field["objective"]);
  if (field.has("jct_guard")) {
    const JsonField guard = field["jct_guard"];
    params.jct_guard = guard.number();
    if (params.jct_guard < 1) {
      throw InvalidInput(guard.path() + ": must be >= 1, got " + std::to_string(params.jct_guard));
    }
  }
  if (field.has("fairness_p")) params.fairness_p = field["fairness_p"].number();
  if (field.has("restart_threshold")) {
    params.restart_threshold = field["restart_threshold"].nonNegativeNumber();
  }
  if (field.has("min_change_interval_s")) {
    params.min_change_interval_s = field["min_change_interval_s"].nonNegativeNumber();
  }
  if (field.has("priority_weight")) {
    params.priority_weight = field["priority_weight"].nonNegativeNumber();
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
  root.requireOnlyKeys({"time", "nodes", "jobs", "params", "partitions", "budgets"});
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
  if (root.has("budgets")) snapshot.budgets = parseBudgets(root["budgets"]);
  checkBudgetNames(jobs, snapshot);
  return snapshot;
}

Json::Value allocationToJson(const policy::Allocation& allocation) {
  Json::Value out;
  out["gpu_type"] = allocation.gpu_type;
  out["nodes"] = Json::Value(Json::objectValue);
  for (const auto& [node, gpus] : allocation.nodes) out["nodes"][node] = gpus;
  return out;
}

namespace {

Json::Value nodeToJson(const policy::Node& node) {
  Json::Value out;
  out["name"] = node.name;
  out["gpu_type"] = node.gpu_type;
  out["gpus"] = node.gpus;
  if (node.cpus) out["cpus"] = *node.cpus;
  if (node.memory_mb) out["memory_mb"] = Json::Int64(*node.memory_mb);
  return out;
}

Json::Value demandToJson(const policy::NodeDemand& demand) {
  Json::Value out;
  out["cpus"] = demand.cpus;
  out["cpus_per_gpu"] = demand.cpus_per_gpu;
  out["memory_mb"] = Json::Int64(demand.memory_mb);
  out["memory_mb_per_cpu"] = Json::Int64(demand.memory_mb_per_cpu);
  out["memory_mb_per_gpu"] = Json::Int64(demand.memory_mb_per_gpu);
  out["whole_node_memory"] = demand.whole_node_memory;
  return out;
}

Json::Value jobToJson(const policy::Job& job) {
  Json::Value out;
  out["id"] = job.id;
  out["submit_time"] = job.submit_time;
  out["adaptive"] = job.adaptive;
  out["min_gpus"] = job.min_gpus;
  out["max_gpus"] = job.max_gpus;
  if (job.gpu_type) out["gpu_type"] = *job.gpu_type;
  if (job.partition) out["partition"] = *job.partition;
  if (job.current) out["current"] = allocationToJson(*job.current);
  out["last_change_time"] = job.last_change_time;
  out["restarts"] = job.restarts;
  if (job.priority > 0) out["priority"] = job.priority;
  out["restart_cost_s"] = job.restart_cost_s;
  if (job.live_resize_cost_s) out["live_resize_cost_s"] = *job.live_resize_cost_s;
  if (job.grows_live) out["grows_live"] = true;
  if (job.moves_live) out["moves_live"] = true;
  if (job.join_startup_s > 0) out["join_startup_s"] = job.join_startup_s;
  if (job.lost_s) out["lost_s"] = *job.lost_s;
  if (job.previous) out["previous"] = allocationToJson(*job.previous);
  if (!job.parts.empty()) {
    Json::Value& parts = out["parts"] = Json::Value(Json::arrayValue);
    for (const auto& part : job.parts) parts.append(allocationToJson(part));
  }
  if (job.leaving) out["leaving"] = allocationToJson(*job.leaving);
  if (!job.batch_hosts.empty()) {
    Json::Value& hosts = out["batch_hosts"] = Json::Value(Json::arrayValue);
    for (const auto& host : job.batch_hosts) hosts.append(host);
  }
  out["node_demand"] = demandToJson(job.demand);
  if (!job.budgets.empty()) {
    Json::Value& budgets = out["budgets"] = Json::Value(Json::arrayValue);
    for (const auto& use : job.budgets) {
      if (use.per_gpu == 1 && use.per_node == 0) {
        budgets.append(use.name);
        continue;
      }
      Json::Value& entry = budgets.append(Json::objectValue);
      entry["name"] = use.name;
      if (use.per_gpu != 0) entry["per_gpu"] = Json::Int64(use.per_gpu);
      if (use.per_node != 0) entry["per_node"] = Json::Int64(use.per_node);
    }
  }
  if (job.length) {
    out["progress"] = job.length->progress;
    out["target_progress"] = job.length->target;
  }
  if (!job.adaptive) return out;
  out["models"] = Json::Value(Json::objectValue);
  for (const auto& [type, params] : job.models) out["models"][type] = perfParamsToJson(params);
  out["grad_params"] = gradParamsToJson(job.grad);
  writeBatchLimits(job.limits, out);
  return out;
}

Json::Value paramsToJson(const policy::Params& params) {
  Json::Value out;
  out["objective"] = objectiveName(params.objective);
  out["jct_guard"] = params.jct_guard;
  out["fairness_p"] = params.fairness_p;
  out["restart_threshold"] = params.restart_threshold;
  out["priority_weight"] = params.priority_weight;
  out["min_change_interval_s"] = params.min_change_interval_s;
  out["time_limit_s"] = params.time_limit_s;
  out["relative_speeds"] = Json::Value(Json::objectValue);
  for (const auto& [type, speed] : params.relative_speeds) out["relative_speeds"][type] = speed;
  return out;
}

}  // namespace

Json::Value snapshotToJson(const policy::Snapshot& snapshot) {
  Json::Value out;
  out["time"] = snapshot.time;
  out["nodes"] = Json::Value(Json::arrayValue);
  for (const auto& node : snapshot.nodes) out["nodes"].append(nodeToJson(node));
  out["jobs"] = Json::Value(Json::arrayValue);
  for (const auto& job : snapshot.jobs) out["jobs"].append(jobToJson(job));
  out["params"] = paramsToJson(snapshot.params);
  if (!snapshot.partitions.empty()) {
    Json::Value& partitions = out["partitions"];
    for (const auto& [name, nodes] : snapshot.partitions) {
      partitions[name] = Json::Value(Json::arrayValue);
      for (const auto& node : nodes) partitions[name].append(node);
    }
  }
  if (!snapshot.budgets.empty()) {
    Json::Value& budgets = out["budgets"];
    for (const auto& [name, units] : snapshot.budgets) budgets[name] = Json::Int64(units);
  }
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
    if (job.remaining_s) entry["remaining_s"] = *job.remaining_s;
    if (!job.restarted_for.empty()) entry["restarted_for"] = job.restarted_for;
  }
  Json::Value& stats = out["stats"];
  stats["solve_ms"] = decision.stats.solve_ms;
  stats["solver_status"] = decision.stats.solver_status;
  stats["kept_current"] = decision.stats.kept_current;
  stats["candidate_configs"] = decision.stats.candidate_configs;
  stats["work_limit_hits"] = decision.stats.work_limit_hits;
  stats["time_limit_hits"] = decision.stats.time_limit_hits;
  return out;
}

}  // namespace pollux::schema
