// SPDX-License-Identifier: GPL-2.0-or-later
#include "round_json.hpp"

#include "common/invalid_input.hpp"
#include "common/schema/json_reader.hpp"
#include "site_policy.hpp"

namespace pollux::service {

namespace {

using schema::JsonField;

constexpr int kRecordVersion = 1;

Json::Value namesToJson(const std::vector<std::string>& names) {
  Json::Value out(Json::arrayValue);
  for (const auto& name : names) out.append(name);
  return out;
}

std::vector<std::string> parseNames(const JsonField& field) {
  std::vector<std::string> names;
  for (Json::ArrayIndex i = 0; i < field.arraySize(); ++i) names.push_back(field.at(i).string());
  return names;
}

// Strings that may be empty are left out when they are.
void putText(Json::Value& out, const char* key, const std::string& text) {
  if (!text.empty()) out[key] = text;
}

std::string optionalText(const JsonField& holder, const char* key) {
  return holder.has(key) ? holder[key].string() : "";
}

int count(const JsonField& field) { return static_cast<int>(field.integer(0, 1L << 30)); }
std::int64_t amount(const JsonField& field) { return field.integer(0, 1L << 50); }  // CPUs or MB
double seconds(const JsonField& field) { return field.nonNegativeNumber(); }

Json::Value gpuGresToJson(const GpuGres& gpus) {
  Json::Value out;
  putText(out, "type", gpus.type);
  out["count"] = gpus.count;
  return out;
}

GpuGres parseGpuGresJson(const JsonField& field) {
  field.requireOnlyKeys({"type", "count"});
  return GpuGres{optionalText(field, "type"), count(field["count"])};
}

Json::Value nodeToJson(const SlurmNode& node) {
  Json::Value out;
  out["name"] = node.name;
  out["gpus"] = gpuGresToJson(node.gpus);
  out["gpus_used"] = node.gpus_used;
  out["usable"] = node.usable;
  out["registered"] = node.registered;
  out["free_cpus"] = node.free_cpus;
  if (node.memory_mb) out["memory_mb"] = Json::Int64(*node.memory_mb);
  if (node.free_memory_mb) out["free_memory_mb"] = Json::Int64(*node.free_memory_mb);
  if (!node.features.empty()) out["features"] = namesToJson(node.features);
  return out;
}

SlurmNode parseNode(const JsonField& field) {
  field.requireOnlyKeys({"name", "gpus", "gpus_used", "usable", "registered", "free_cpus",
                         "memory_mb", "free_memory_mb", "features"});
  SlurmNode node;
  node.name = field["name"].string();
  node.gpus = parseGpuGresJson(field["gpus"]);
  node.gpus_used = count(field["gpus_used"]);
  node.usable = field["usable"].boolean();
  node.registered = field["registered"].boolean();
  node.free_cpus = count(field["free_cpus"]);
  if (field.has("memory_mb")) node.memory_mb = amount(field["memory_mb"]);
  if (field.has("free_memory_mb")) node.free_memory_mb = amount(field["free_memory_mb"]);
  if (field.has("features")) node.features = parseNames(field["features"]);
  return node;
}

void putLimit(Json::Value& out, const char* key, const std::optional<int>& limit) {
  if (limit) out[key] = *limit;
}

std::optional<int> parseLimit(const JsonField& field, const char* key) {
  if (!field.has(key)) return std::nullopt;
  return count(field[key]);
}

void putAmountLimit(Json::Value& out, const char* key, const std::optional<std::int64_t>& limit) {
  if (limit) out[key] = Json::Int64(*limit);
}

std::optional<std::int64_t> parseAmountLimit(const JsonField& field, const char* key) {
  if (!field.has(key)) return std::nullopt;
  return amount(field[key]);
}

void putAmount(Json::Value& out, const char* key, std::int64_t amount) {
  if (amount != 0) out[key] = Json::Int64(amount);
}

std::int64_t parseAmount(const JsonField& field, const char* key) {
  return field.has(key) ? amount(field[key]) : 0;
}

// "cpus_used", "memory_mb_used" and "nodes_used" where not 0 (absent in rounds recorded
// before them).
void putSharedUsed(Json::Value& out, const SharedTresUsed& used) {
  putAmount(out, "cpus_used", used.cpus);
  putAmount(out, "memory_mb_used", used.memory_mb);
  putAmount(out, "nodes_used", used.nodes);
}

SharedTresUsed parseSharedUsed(const JsonField& field) {
  return {parseAmount(field, "cpus_used"), parseAmount(field, "memory_mb_used"),
          parseAmount(field, "nodes_used")};
}

// The keys of a group's limits on CPUs, memory and nodes ("grp_cpus", ...), or of a QOS's
// limits per user ("max_cpus_per_user", ...).
struct SharedLimitKeys {
  const char* cpus;
  const char* memory_mb;
  const char* nodes;
};
constexpr SharedLimitKeys kGroupKeys{"grp_cpus", "grp_memory_mb", "grp_nodes"};
constexpr SharedLimitKeys kPerUserKeys{"max_cpus_per_user", "max_memory_mb_per_user",
                                       "max_nodes_per_user"};

void putSharedLimits(Json::Value& out, const SharedLimitKeys& keys,
                     const SharedTresLimits& limits) {
  putAmountLimit(out, keys.cpus, limits.cpus);
  putAmountLimit(out, keys.memory_mb, limits.memory_mb);
  putAmountLimit(out, keys.nodes, limits.nodes);
}

SharedTresLimits parseSharedLimits(const JsonField& field, const SharedLimitKeys& keys) {
  return {parseAmountLimit(field, keys.cpus), parseAmountLimit(field, keys.memory_mb),
          parseAmountLimit(field, keys.nodes)};
}

void putJobLimits(Json::Value& out, const JobTresLimits& limits) {
  putAmountLimit(out, "max_cpus_per_job", limits.cpus);
  putAmountLimit(out, "max_memory_mb_per_job", limits.memory_mb);
  putLimit(out, "max_nodes_per_job", limits.nodes);
}

JobTresLimits parseJobLimits(const JsonField& field) {
  return {parseAmountLimit(field, "max_cpus_per_job"),
          parseAmountLimit(field, "max_memory_mb_per_job"),
          parseLimit(field, "max_nodes_per_job")};
}

Json::Value qosToJson(const SlurmQos& qos) {
  Json::Value out;
  out["name"] = qos.name;
  putLimit(out, "grp_gpus", qos.grp_gpus);
  putLimit(out, "max_gpus_per_user", qos.max_gpus_per_user);
  putLimit(out, "max_gpus_per_job", qos.max_gpus_per_job);
  putLimit(out, "grp_jobs", qos.grp_jobs);
  putLimit(out, "max_jobs_per_user", qos.max_jobs_per_user);
  putSharedLimits(out, kGroupKeys, qos.grp_tres);
  putSharedLimits(out, kPerUserKeys, qos.per_user_tres);
  putJobLimits(out, qos.per_job);
  out["gpus_used"] = qos.gpus_used;
  out["jobs_used"] = qos.jobs_used;
  putSharedUsed(out, qos.tres_used);
  out["users"] = Json::Value(Json::arrayValue);
  for (const auto& [uid, usage] : qos.users) {
    Json::Value user;
    user["user_id"] = uid;
    user["gpus_used"] = usage.gpus;
    user["jobs_used"] = usage.jobs;
    putSharedUsed(user, usage.tres);
    out["users"].append(user);
  }
  return out;
}

SlurmQos parseQos(const JsonField& field) {
  field.requireOnlyKeys({"name", "grp_gpus", "max_gpus_per_user", "max_gpus_per_job",
                         "grp_jobs", "max_jobs_per_user", "grp_cpus", "grp_memory_mb",
                         "grp_nodes", "max_cpus_per_user", "max_memory_mb_per_user",
                         "max_nodes_per_user", "max_cpus_per_job", "max_memory_mb_per_job",
                         "max_nodes_per_job", "gpus_used", "jobs_used", "cpus_used",
                         "memory_mb_used", "nodes_used", "users"});
  SlurmQos qos;
  qos.name = field["name"].string();
  qos.grp_gpus = parseLimit(field, "grp_gpus");
  qos.max_gpus_per_user = parseLimit(field, "max_gpus_per_user");
  qos.max_gpus_per_job = parseLimit(field, "max_gpus_per_job");
  qos.grp_jobs = parseLimit(field, "grp_jobs");
  qos.max_jobs_per_user = parseLimit(field, "max_jobs_per_user");
  qos.grp_tres = parseSharedLimits(field, kGroupKeys);
  qos.per_user_tres = parseSharedLimits(field, kPerUserKeys);
  qos.per_job = parseJobLimits(field);
  qos.gpus_used = count(field["gpus_used"]);
  qos.jobs_used = count(field["jobs_used"]);
  qos.tres_used = parseSharedUsed(field);
  const JsonField users = field["users"];
  for (Json::ArrayIndex i = 0; i < users.arraySize(); ++i) {
    const JsonField user = users.at(i);
    user.requireOnlyKeys(
        {"user_id", "gpus_used", "jobs_used", "cpus_used", "memory_mb_used", "nodes_used"});
    qos.users[static_cast<uint32_t>(user["user_id"].integer(0, 0xFFFFFFFFL))] = {
        count(user["gpus_used"]), count(user["jobs_used"]), parseSharedUsed(user)};
  }
  return qos;
}

Json::Value associationToJson(const SlurmAssociation& association) {
  Json::Value out;
  out["id"] = association.id;
  out["parent_id"] = association.parent_id;
  out["account"] = association.account;
  putText(out, "user", association.user);
  putLimit(out, "grp_gpus", association.grp_gpus);
  putLimit(out, "max_gpus_per_job", association.max_gpus_per_job);
  putLimit(out, "grp_jobs", association.grp_jobs);
  putLimit(out, "max_jobs", association.max_jobs);
  putSharedLimits(out, kGroupKeys, association.grp_tres);
  putJobLimits(out, association.per_job);
  out["gpus_used"] = association.gpus_used;
  out["jobs_used"] = association.jobs_used;
  putSharedUsed(out, association.tres_used);
  return out;
}

SlurmAssociation parseAssociation(const JsonField& field) {
  field.requireOnlyKeys({"id", "parent_id", "account", "user", "grp_gpus", "max_gpus_per_job",
                         "grp_jobs", "max_jobs", "grp_cpus", "grp_memory_mb", "grp_nodes",
                         "max_cpus_per_job", "max_memory_mb_per_job", "max_nodes_per_job",
                         "gpus_used", "jobs_used", "cpus_used", "memory_mb_used",
                         "nodes_used"});
  SlurmAssociation association;
  association.id = static_cast<uint32_t>(field["id"].integer(1, 0xFFFFFFFFL));
  association.parent_id = static_cast<uint32_t>(field["parent_id"].integer(0, 0xFFFFFFFFL));
  association.account = field["account"].string();
  association.user = optionalText(field, "user");
  association.grp_gpus = parseLimit(field, "grp_gpus");
  association.max_gpus_per_job = parseLimit(field, "max_gpus_per_job");
  association.grp_jobs = parseLimit(field, "grp_jobs");
  association.max_jobs = parseLimit(field, "max_jobs");
  association.grp_tres = parseSharedLimits(field, kGroupKeys);
  association.per_job = parseJobLimits(field);
  association.gpus_used = count(field["gpus_used"]);
  association.jobs_used = count(field["jobs_used"]);
  association.tres_used = parseSharedUsed(field);
  return association;
}

Json::Value reservationToJson(const SlurmReservation& reservation) {
  Json::Value out;
  out["name"] = reservation.name;
  out["nodes"] = namesToJson(reservation.nodes);
  out["start_time"] = reservation.start_time;
  out["end_time"] = reservation.end_time;
  out["maintenance"] = reservation.maintenance;
  return out;
}

SlurmReservation parseReservation(const JsonField& field) {
  field.requireOnlyKeys({"name", "nodes", "start_time", "end_time", "maintenance"});
  return SlurmReservation{field["name"].string(), parseNames(field["nodes"]),
                          seconds(field["start_time"]), seconds(field["end_time"]),
                          field["maintenance"].boolean()};
}

Json::Value licenseToJson(const SlurmLicense& license) {
  Json::Value out;
  out["name"] = license.name;
  out["available"] = license.available;
  out["reserved"] = license.reserved;
  return out;
}

SlurmLicense parseLicense(const JsonField& field) {
  field.requireOnlyKeys({"name", "available", "reserved"});
  return SlurmLicense{field["name"].string(), count(field["available"]), count(field["reserved"])};
}

JobState parseState(const JsonField& field) {
  const std::string name = field.string();
  for (JobState state : {JobState::kPending, JobState::kRunning, JobState::kOther}) {
    if (name == toString(state)) return state;
  }
  throw InvalidInput(field.path() + ": not pending, running or other");
}

Json::Value gpuRequestToJson(const GpuRequest& request) {
  Json::Value out;
  putText(out, "per_node", request.per_node);
  putText(out, "per_job", request.per_job);
  putText(out, "per_task", request.per_task);
  putText(out, "per_socket", request.per_socket);
  out["nodes"] = request.nodes;
  out["tasks"] = request.tasks;
  out["sockets_per_node"] = request.sockets_per_node;
  return out;
}

GpuRequest parseGpuRequest(const JsonField& field) {
  field.requireOnlyKeys(
      {"per_node", "per_job", "per_task", "per_socket", "nodes", "tasks", "sockets_per_node"});
  GpuRequest request;
  request.per_node = optionalText(field, "per_node");
  request.per_job = optionalText(field, "per_job");
  request.per_task = optionalText(field, "per_task");
  request.per_socket = optionalText(field, "per_socket");
  request.nodes = count(field["nodes"]);
  request.tasks = count(field["tasks"]);
  request.sockets_per_node = count(field["sockets_per_node"]);
  return request;
}

Json::Value resourcesToJson(const ResourceRequest& request) {
  Json::Value out;
  out["min_cpus_per_node"] = request.min_cpus_per_node;
  out["cpus_per_task"] = request.cpus_per_task;
  out["ntasks_per_node"] = request.ntasks_per_node;
  out["ntasks_per_gpu"] = request.ntasks_per_gpu;
  putText(out, "cpus_per_tres", request.cpus_per_tres);
  out["memory_mb_per_node"] = Json::Int64(request.memory_mb_per_node);
  out["memory_mb_per_cpu"] = Json::Int64(request.memory_mb_per_cpu);
  putText(out, "mem_per_tres", request.mem_per_tres);
  out["memory_set"] = request.memory_set;
  out["default_cpus_per_gpu"] = request.default_cpus_per_gpu;
  out["default_memory_mb_per_gpu"] = Json::Int64(request.default_memory_mb_per_gpu);
  return out;
}

ResourceRequest parseResources(const JsonField& field) {
  field.requireOnlyKeys({"min_cpus_per_node", "cpus_per_task", "ntasks_per_node", "ntasks_per_gpu",
                         "cpus_per_tres", "memory_mb_per_node", "memory_mb_per_cpu",
                         "mem_per_tres", "memory_set", "default_cpus_per_gpu",
                         "default_memory_mb_per_gpu"});
  ResourceRequest request;
  request.min_cpus_per_node = count(field["min_cpus_per_node"]);
  request.cpus_per_task = count(field["cpus_per_task"]);
  // Rounds recorded before the plugin read --ntasks-per-node lack it.
  if (field.has("ntasks_per_node")) request.ntasks_per_node = count(field["ntasks_per_node"]);
  request.ntasks_per_gpu = count(field["ntasks_per_gpu"]);
  request.cpus_per_tres = optionalText(field, "cpus_per_tres");
  request.memory_mb_per_node = amount(field["memory_mb_per_node"]);
  request.memory_mb_per_cpu = amount(field["memory_mb_per_cpu"]);
  request.mem_per_tres = optionalText(field, "mem_per_tres");
  request.memory_set = field["memory_set"].boolean();
  request.default_cpus_per_gpu = count(field["default_cpus_per_gpu"]);
  request.default_memory_mb_per_gpu = amount(field["default_memory_mb_per_gpu"]);
  return request;
}

Json::Value jobToJson(const SlurmJob& job) {
  Json::Value out;
  out["job_id"] = job.id;
  out["user_id"] = job.uid;
  out["state"] = toString(job.state);
  out["held"] = job.held;
  if (job.priority > 0) out["priority"] = job.priority;
  putText(out, "state_reason", job.state_reason);
  out["submit_time"] = job.submit_time;
  out["start_time"] = job.start_time;
  out["eligible_time"] = job.eligible_time;
  out["end_time"] = job.end_time;
  if (job.time_limit_min > 0) out["time_limit_min"] = job.time_limit_min;
  out["failed"] = job.failed;
  out["completing"] = job.completing;
  out["restarts"] = job.restarts;
  putText(out, "comment", job.comment);
  out["partitions"] = namesToJson(job.partitions);
  out["nodes"] = namesToJson(job.nodes);
  putText(out, "batch_host", job.batch_host);
  out["requested_nodes"] = namesToJson(job.requested_nodes);
  if (!job.excluded_nodes.empty()) out["excluded_nodes"] = namesToJson(job.excluded_nodes);
  putText(out, "features", job.features);
  putText(out, "reservation", job.reservation);
  putText(out, "dependency", job.dependency);
  if (job.association_id > 0) out["association_id"] = job.association_id;
  putText(out, "qos", job.qos);
  putText(out, "licenses", job.licenses);
  out["num_nodes"] = job.num_nodes;
  out["gpu_request"] = gpuRequestToJson(job.gpu_request);
  out["resources"] = resourcesToJson(job.resources);
  return out;
}

SlurmJob parseJob(const JsonField& field) {
  field.requireOnlyKeys({"job_id", "user_id", "state", "held", "priority", "state_reason",
                         "submit_time", "start_time", "eligible_time", "end_time",
                         "time_limit_min", "failed", "completing", "restarts", "comment",
                         "partitions", "nodes", "batch_host", "requested_nodes", "excluded_nodes",
                         "features", "reservation", "dependency", "association_id", "qos",
                         "licenses",
                         "num_nodes", "gpu_request", "resources"});
  SlurmJob job;
  job.id = static_cast<uint32_t>(field["job_id"].integer(1, 0xFFFFFFFFL));
  job.uid = static_cast<uint32_t>(field["user_id"].integer(0, 0xFFFFFFFFL));
  job.state = parseState(field["state"]);
  job.held = field["held"].boolean();
  // Rounds recorded before the plugin read Slurm's site policy lack its fields; in them a held
  // job (priority 0) was held by Pollux, whose hold is now its begin time.
  const bool held_by_pollux = !field.has("state_reason") && job.held;
  if (held_by_pollux) job.held = false;
  if (field.has("priority")) {
    job.priority = static_cast<uint32_t>(field["priority"].integer(0, 0xFFFFFFFFL));
  }
  job.state_reason = optionalText(field, "state_reason");
  job.submit_time = seconds(field["submit_time"]);
  job.start_time = seconds(field["start_time"]);
  job.eligible_time = held_by_pollux ? kPolluxHoldTime : seconds(field["eligible_time"]);
  job.end_time = seconds(field["end_time"]);
  if (field.has("time_limit_min")) {
    job.time_limit_min = static_cast<int>(field["time_limit_min"].integer(0, 1L << 30));
  }
  job.failed = field["failed"].boolean();
  // Rounds recorded before the plugin read COMPLETING lack it.
  job.completing = field.has("completing") && field["completing"].boolean();
  // Rounds recorded before the plugin read the restart count lack it.
  if (field.has("restarts")) {
    job.restarts = static_cast<uint32_t>(field["restarts"].integer(0, 0xFFFFFFFFL));
  }
  job.comment = optionalText(field, "comment");
  job.partitions = parseNames(field["partitions"]);
  job.nodes = parseNames(field["nodes"]);
  job.batch_host = optionalText(field, "batch_host");
  job.requested_nodes = parseNames(field["requested_nodes"]);
  if (field.has("excluded_nodes")) job.excluded_nodes = parseNames(field["excluded_nodes"]);
  job.features = optionalText(field, "features");
  job.reservation = optionalText(field, "reservation");
  job.dependency = optionalText(field, "dependency");
  if (field.has("association_id")) {
    job.association_id = static_cast<uint32_t>(field["association_id"].integer(0, 0xFFFFFFFFL));
  }
  job.qos = optionalText(field, "qos");
  job.licenses = optionalText(field, "licenses");
  job.num_nodes = count(field["num_nodes"]);
  job.gpu_request = parseGpuRequest(field["gpu_request"]);
  job.resources = parseResources(field["resources"]);
  readRequests(job);
  return job;
}

Json::Value actionToJson(const PlannedAction& planned) {
  const Action& action = planned.action;
  Json::Value out;
  out["job_id"] = action.job_id;
  out["kind"] = toString(action.kind);
  putText(out, "gpu_type", action.gpu_type);
  out["gpus_per_node"] = action.gpus_per_node;
  out["nodes"] = namesToJson(action.nodes);
  putText(out, "tres_per_node", planned.tres_per_node);
  putText(out, "node_list", planned.node_list);
  if (planned.num_tasks > 0) {
    out["num_tasks"] = planned.num_tasks;
    out["min_cpus"] = planned.min_cpus;
  }
  out["admin_comment"] = planned.admin_comment;
  out["why"] = action.why;
  if (planned.release) out["release"] = true;
  if (planned.time_limit_min > 0) out["time_limit_min"] = planned.time_limit_min;
  return out;
}

}  // namespace

Json::Value roundToJson(const Round& round) {
  Json::Value out;
  out["now"] = round.now;
  out["nodes"] = Json::Value(Json::arrayValue);
  for (const auto& node : round.nodes) out["nodes"].append(nodeToJson(node));
  out["partitions"] = Json::Value(Json::objectValue);
  for (const auto& [name, nodes] : round.partitions) {
    out["partitions"][name] = namesToJson({nodes.begin(), nodes.end()});
  }
  for (const auto& [name, max_nodes] : round.partition_max_nodes) {
    out["partition_max_nodes"][name] = max_nodes;
  }
  for (const auto& [name, max_time] : round.partition_max_time_min) {
    out["partition_max_time_min"][name] = max_time;
  }
  out["jobs"] = Json::Value(Json::arrayValue);
  for (const auto& job : round.jobs) out["jobs"].append(jobToJson(job));
  for (const auto& reservation : round.reservations) {
    out["reservations"].append(reservationToJson(reservation));
  }
  for (const auto& license : round.licenses) out["licenses"].append(licenseToJson(license));
  for (const auto& qos : round.qos) out["qos"].append(qosToJson(qos));
  for (const auto& association : round.associations) {
    out["associations"].append(associationToJson(association));
  }
  return out;
}

Round parseRound(const Json::Value& document) {
  const JsonField root(document, "round");
  root.requireOnlyKeys(
      {"now", "nodes", "partitions", "partition_max_nodes", "partition_max_time_min", "jobs",
       "reservations", "licenses", "qos", "associations"});
  Round round;
  round.now = seconds(root["now"]);
  const JsonField nodes = root["nodes"];
  for (Json::ArrayIndex i = 0; i < nodes.arraySize(); ++i) round.nodes.push_back(parseNode(nodes.at(i)));
  const JsonField partitions = root["partitions"];
  for (const auto& name : partitions.memberNames()) {
    const auto members = parseNames(partitions.member(name));
    round.partitions[name] = policy::NodeSet(members.begin(), members.end());
  }
  if (root.has("partition_max_nodes")) {
    const JsonField max_nodes = root["partition_max_nodes"];
    for (const auto& name : max_nodes.memberNames()) {
      round.partition_max_nodes[name] = count(max_nodes.member(name));
    }
  }
  if (root.has("partition_max_time_min")) {
    const JsonField max_time = root["partition_max_time_min"];
    for (const auto& name : max_time.memberNames()) {
      round.partition_max_time_min[name] = count(max_time.member(name));
    }
  }
  const JsonField jobs = root["jobs"];
  for (Json::ArrayIndex i = 0; i < jobs.arraySize(); ++i) round.jobs.push_back(parseJob(jobs.at(i)));
  if (root.has("reservations")) {
    const JsonField reservations = root["reservations"];
    for (Json::ArrayIndex i = 0; i < reservations.arraySize(); ++i) {
      round.reservations.push_back(parseReservation(reservations.at(i)));
    }
  }
  if (root.has("licenses")) {
    const JsonField licenses = root["licenses"];
    for (Json::ArrayIndex i = 0; i < licenses.arraySize(); ++i) {
      round.licenses.push_back(parseLicense(licenses.at(i)));
    }
  }
  if (root.has("qos")) {
    const JsonField qos = root["qos"];
    for (Json::ArrayIndex i = 0; i < qos.arraySize(); ++i) round.qos.push_back(parseQos(qos.at(i)));
  }
  if (root.has("associations")) {
    const JsonField associations = root["associations"];
    for (Json::ArrayIndex i = 0; i < associations.arraySize(); ++i) {
      round.associations.push_back(parseAssociation(associations.at(i)));
    }
  }
  return round;
}

Json::Value recordedRoundToJson(const RecordedRound& recorded) {
  Json::Value out;
  out["version"] = kRecordVersion;
  out["scheduler_parameters"] = recorded.scheduler_parameters;
  out["pollux_conf"] = recorded.pollux_conf;
  out["settling"] = recorded.settling;
  out["jobs"] = recorded.jobs;
  out["round"] = roundToJson(recorded.round);
  return out;
}

RecordedRound parseRecordedRound(const std::string& text) {
  const Json::Value document = JsonField::parseDocument(text);
  const JsonField root(document, "");
  root.requireOnlyKeys({"version", "scheduler_parameters", "pollux_conf", "settling", "jobs", "round"});
  if (root["version"].integer(0, 1L << 30) != kRecordVersion) {
    throw InvalidInput("version: not " + std::to_string(kRecordVersion));
  }
  RecordedRound recorded;
  if (!document["scheduler_parameters"].isString() || !document["pollux_conf"].isString()) {
    throw InvalidInput("scheduler_parameters, pollux_conf: must be strings");
  }
  recorded.scheduler_parameters = document["scheduler_parameters"].asString();
  recorded.pollux_conf = document["pollux_conf"].asString();
  recorded.settling = root["settling"].boolean();
  recorded.jobs = document["jobs"];
  recorded.round = parseRound(document["round"]);
  return recorded;
}

Json::Value planToJson(const RoundPlan& plan) {
  Json::Value out;
  out["solver_status"] = plan.stats.solver_status;
  out["kept_current"] = plan.stats.kept_current;
  out["actions"] = Json::Value(Json::arrayValue);
  for (const auto& action : plan.actions) out["actions"].append(actionToJson(action));
  out["problems"] = Json::Value(Json::arrayValue);
  for (const auto& problem : plan.problems) out["problems"].append(problem);
  for (const auto& [job, reason] : plan.waiting) out["waiting"][job] = reason;
  return out;
}

}  // namespace pollux::service
