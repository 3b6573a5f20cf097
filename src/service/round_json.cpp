// SPDX-License-Identifier: GPL-2.0-or-later
#include "round_json.hpp"

#include "common/invalid_input.hpp"
#include "common/schema/json_reader.hpp"
#include "site_policy.hpp"
#include "view_fields.hpp"

namespace pollux::service {

namespace {

using schema::JsonField;

using view_fields::Presence;

constexpr int kRecordVersion = 1;

Json::Value namesToJson(const std::vector<std::string>& names) {
  return view_fields::Names::write(names);
}

std::vector<std::string> parseNames(const JsonField& field) {
  return view_fields::Names::read(field);
}

// A field of the lists of pollux_service.h: its key (for requireOnlyKeys), from `source` into
// the JSON object `out`, from the JSON object `holder` into `target`.
#define POLLUX_FIELD_KEY(type, name, kind, presence, key, member) key,
#define POLLUX_FIELD_TO_JSON(type, name, kind, presence, key, member) \
  view_fields::write<view_fields::kind, Presence::k##presence>(out, key, source.member);
#define POLLUX_FIELD_FROM_JSON(type, name, kind, presence, key, member) \
  view_fields::read<view_fields::kind, Presence::k##presence>(holder, key, target.member);

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

Json::Value nodeToJson(const SlurmNode& source) {
  Json::Value out(Json::objectValue);
  POLLUX_NODE_FIELDS(POLLUX_FIELD_TO_JSON)
  return out;
}

SlurmNode parseNode(const JsonField& holder) {
  holder.requireOnlyKeys({POLLUX_NODE_FIELDS(POLLUX_FIELD_KEY)});
  SlurmNode target;
  POLLUX_NODE_FIELDS(POLLUX_FIELD_FROM_JSON)
  return target;
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
constexpr SharedLimitKeys kPerAccountKeys{"max_cpus_per_account", "max_memory_mb_per_account",
                                          "max_nodes_per_account"};

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
  putLimit(out, "max_gpus_per_account", qos.max_gpus_per_account);
  putSharedLimits(out, kPerAccountKeys, qos.per_account_tres);
  putLimit(out, "max_jobs_per_account", qos.max_jobs_per_account);
  for (const auto& [name, usage] : qos.accounts) {
    Json::Value account;
    account["account"] = name;
    account["gpus_used"] = usage.gpus;
    account["jobs_used"] = usage.jobs;
    putSharedUsed(account, usage.tres);
    out["accounts"].append(account);
  }
  return out;
}

SlurmQos parseQos(const JsonField& field) {
  field.requireOnlyKeys({"name", "grp_gpus", "max_gpus_per_user", "max_gpus_per_job",
                         "grp_jobs", "max_jobs_per_user", "grp_cpus", "grp_memory_mb",
                         "grp_nodes", "max_cpus_per_user", "max_memory_mb_per_user",
                         "max_nodes_per_user", "max_cpus_per_job", "max_memory_mb_per_job",
                         "max_nodes_per_job", "gpus_used", "jobs_used", "cpus_used",
                         "memory_mb_used", "nodes_used", "users", "max_gpus_per_account",
                         "max_cpus_per_account", "max_memory_mb_per_account",
                         "max_nodes_per_account", "max_jobs_per_account", "accounts"});
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
  qos.max_gpus_per_account = parseLimit(field, "max_gpus_per_account");
  qos.per_account_tres = parseSharedLimits(field, kPerAccountKeys);
  qos.max_jobs_per_account = parseLimit(field, "max_jobs_per_account");
  if (field.has("accounts")) {
    const JsonField accounts = field["accounts"];
    for (Json::ArrayIndex i = 0; i < accounts.arraySize(); ++i) {
      const JsonField account = accounts.at(i);
      account.requireOnlyKeys(
          {"account", "gpus_used", "jobs_used", "cpus_used", "memory_mb_used", "nodes_used"});
      qos.accounts[account["account"].string()] = {
          count(account["gpus_used"]), count(account["jobs_used"]), parseSharedUsed(account)};
    }
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
  putText(out, "licenses", reservation.licenses);
  return out;
}

SlurmReservation parseReservation(const JsonField& field) {
  field.requireOnlyKeys({"name", "nodes", "start_time", "end_time", "maintenance", "licenses"});
  return SlurmReservation{field["name"].string(),       parseNames(field["nodes"]),
                          seconds(field["start_time"]), seconds(field["end_time"]),
                          field["maintenance"].boolean(), optionalText(field, "licenses")};
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

Json::Value gpuRequestToJson(const GpuRequest& source) {
  Json::Value out(Json::objectValue);
  POLLUX_JOB_GPU_FIELDS(POLLUX_FIELD_TO_JSON)
  return out;
}

GpuRequest parseGpuRequest(const JsonField& holder) {
  holder.requireOnlyKeys({POLLUX_JOB_GPU_FIELDS(POLLUX_FIELD_KEY)});
  GpuRequest target;
  POLLUX_JOB_GPU_FIELDS(POLLUX_FIELD_FROM_JSON)
  return target;
}

Json::Value resourcesToJson(const ResourceRequest& source) {
  Json::Value out(Json::objectValue);
  POLLUX_JOB_RESOURCE_FIELDS(POLLUX_FIELD_TO_JSON)
  return out;
}

ResourceRequest parseResources(const JsonField& holder) {
  holder.requireOnlyKeys({POLLUX_JOB_RESOURCE_FIELDS(POLLUX_FIELD_KEY)});
  ResourceRequest target;
  POLLUX_JOB_RESOURCE_FIELDS(POLLUX_FIELD_FROM_JSON)
  return target;
}

Json::Value jobToJson(const SlurmJob& source) {
  Json::Value out(Json::objectValue);
  POLLUX_JOB_FIELDS(POLLUX_FIELD_TO_JSON)
  out["num_nodes"] = source.num_nodes;
  out["gpu_request"] = gpuRequestToJson(source.gpu_request);
  out["resources"] = resourcesToJson(source.resources);
  return out;
}

SlurmJob parseJob(const JsonField& holder) {
  holder.requireOnlyKeys(
      {POLLUX_JOB_FIELDS(POLLUX_FIELD_KEY) "num_nodes", "gpu_request", "resources"});
  SlurmJob target;
  POLLUX_JOB_FIELDS(POLLUX_FIELD_FROM_JSON)
  // Rounds recorded before the plugin read Slurm's site policy lack its fields; in them a held
  // job (priority 0) was held by Pollux, whose hold is now its begin time.
  if (!holder.has("state_reason") && target.held) {
    target.held = false;
    target.eligible_time = kPolluxHoldTime;
  }
  target.num_nodes = count(holder["num_nodes"]);
  target.gpu_request = parseGpuRequest(holder["gpu_request"]);
  target.resources = parseResources(holder["resources"]);
  readRequests(target);
  return target;
}

#undef POLLUX_FIELD_KEY
#undef POLLUX_FIELD_TO_JSON
#undef POLLUX_FIELD_FROM_JSON

Json::Value actionToJson(const PlannedAction& planned) {
  const Action& action = planned.action;
  Json::Value out;
  out["job_id"] = action.job_id;
  out["kind"] = toString(action.kind);
  if (action.live) out["live"] = true;
  if (action.owner) out["part_of"] = action.owner;
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
  for (const auto& [name, qos] : round.partition_qos) out["partition_qos"][name] = qos;
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
      {"now", "nodes", "partitions", "partition_max_nodes", "partition_max_time_min",
       "partition_qos", "jobs", "reservations", "licenses", "qos", "associations"});
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
  if (root.has("partition_qos")) {
    const JsonField partition_qos = root["partition_qos"];
    for (const auto& name : partition_qos.memberNames()) {
      round.partition_qos[name] = partition_qos.member(name).string();
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
