// SPDX-License-Identifier: GPL-2.0-or-later
// A recorded round as the shim's views (recorded_round.h): the job and node views are made by
// the conversions of pollux_service.h's field lists, the others field by field.
#include "recorded_round.h"

#include <deque>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/invalid_input.hpp"
#include "io/state_file.hpp"
#include "io/text_file.hpp"
#include "round_json.hpp"
#include "view_fields.hpp"

using pollux::service::view_fields::ViewStorage;

struct recorded_round {
  pollux::service::RecordedRound recorded;
  ViewStorage storage;
  std::vector<pollux_node_view_t> nodes;
  std::vector<pollux_partition_view_t> partitions;
  std::vector<pollux_job_view_t> jobs;
  std::vector<pollux_reservation_view_t> reservations;
  std::vector<pollux_license_view_t> licenses;
  std::vector<pollux_qos_view_t> qos;
  std::deque<std::vector<pollux_user_usage_t>> qos_users;
  std::deque<std::vector<pollux_account_usage_t>> qos_accounts;
  std::vector<pollux_association_view_t> associations;
  pollux_round_t round{};
  std::deque<std::string> golden_texts;
  std::vector<pollux_action_t> golden_actions;
};

namespace {

using namespace pollux::service;
using pollux::schema::JsonField;

// A field of the lists of pollux_service.h from the service's `source` into `view`.
#define POLLUX_FIELD_TO_VIEW(type, name, kind, presence, key, member) \
  view.name = static_cast<type>(view_fields::kind::toC(source.member, storage));

pollux_node_view_t nodeView(const SlurmNode& source, ViewStorage& storage) {
  pollux_node_view_t view{};
  POLLUX_NODE_FIELDS(POLLUX_FIELD_TO_VIEW)
  return view;
}

void putGpuRequest(const GpuRequest& source, ViewStorage& storage, pollux_job_view_t& view) {
  POLLUX_JOB_GPU_FIELDS(POLLUX_FIELD_TO_VIEW)
}

void putResources(const ResourceRequest& source, ViewStorage& storage, pollux_job_view_t& view) {
  POLLUX_JOB_RESOURCE_FIELDS(POLLUX_FIELD_TO_VIEW)
}

pollux_job_view_t jobView(const SlurmJob& source, ViewStorage& storage) {
  pollux_job_view_t view{};
  POLLUX_JOB_FIELDS(POLLUX_FIELD_TO_VIEW)
  putGpuRequest(source.gpu_request, storage, view);
  putResources(source.resources, storage, view);
  return view;
}

#undef POLLUX_FIELD_TO_VIEW


template <typename Value>
uint32_t valueOr0(const std::map<std::string, Value>& values, const std::string& name) {
  const auto found = values.find(name);
  return found == values.end() ? 0 : static_cast<uint32_t>(found->second);
}

void putPartitions(recorded_round& out) {
  const Round& round = out.recorded.round;
  for (const auto& [name, nodes] : round.partitions) {
    const auto qos = round.partition_qos.find(name);
    out.partitions.push_back({name.c_str(), view_fields::Names::toC(nodes, out.storage),
                              valueOr0(round.partition_max_nodes, name),
                              valueOr0(round.partition_max_time_min, name),
                              qos == round.partition_qos.end() ? nullptr : qos->second.c_str()});
  }
}

// A limit of the service (none where not set) as the views have it (-1 where not set).
template <typename Amount>
int64_t limitView(const std::optional<Amount>& limit) { return limit ? int64_t(*limit) : -1; }

// A user's or an account's usage under a QOS as the views have it.
template <typename View>
View usageView(const UserUsage& usage) {
  View view{};
  view.gpus_used = usage.gpus;
  view.jobs_used = usage.jobs;
  view.cpus_used = usage.tres.cpus;
  view.memory_mb_used = usage.tres.memory_mb;
  view.nodes_used = usage.tres.nodes;
  return view;
}

pollux_account_usage_t accountView(const std::string& name, const UserUsage& usage) {
  auto view = usageView<pollux_account_usage_t>(usage);
  view.account = name.c_str();
  return view;
}

pollux_user_usage_t userView(uint32_t uid, const UserUsage& usage) {
  auto view = usageView<pollux_user_usage_t>(usage);
  view.user_id = uid;
  return view;
}

void putQos(recorded_round& out) {
  for (const auto& qos : out.recorded.round.qos) {
    auto& users = out.qos_users.emplace_back();
    for (const auto& [uid, usage] : qos.users) users.push_back(userView(uid, usage));
    auto& accounts = out.qos_accounts.emplace_back();
    for (const auto& [name, usage] : qos.accounts) accounts.push_back(accountView(name, usage));
    pollux_qos_view_t view{};
    view.name = qos.name.c_str();
    view.grp_gpus = limitView(qos.grp_gpus);
    view.max_gpus_per_user = limitView(qos.max_gpus_per_user);
    view.max_gpus_per_job = limitView(qos.max_gpus_per_job);
    view.grp_jobs = limitView(qos.grp_jobs);
    view.max_jobs_per_user = limitView(qos.max_jobs_per_user);
    view.gpus_used = qos.gpus_used;
    view.jobs_used = qos.jobs_used;
    view.users = users.data();
    view.user_count = users.size();
    view.grp_cpus = limitView(qos.grp_tres.cpus);
    view.grp_memory_mb = limitView(qos.grp_tres.memory_mb);
    view.grp_nodes = limitView(qos.grp_tres.nodes);
    view.max_cpus_per_user = limitView(qos.per_user_tres.cpus);
    view.max_memory_mb_per_user = limitView(qos.per_user_tres.memory_mb);
    view.max_nodes_per_user = limitView(qos.per_user_tres.nodes);
    view.max_cpus_per_job = limitView(qos.per_job.cpus);
    view.max_memory_mb_per_job = limitView(qos.per_job.memory_mb);
    view.max_nodes_per_job = limitView(qos.per_job.nodes);
    view.cpus_used = qos.tres_used.cpus;
    view.memory_mb_used = qos.tres_used.memory_mb;
    view.nodes_used = qos.tres_used.nodes;
    view.max_gpus_per_account = limitView(qos.max_gpus_per_account);
    view.max_cpus_per_account = limitView(qos.per_account_tres.cpus);
    view.max_memory_mb_per_account = limitView(qos.per_account_tres.memory_mb);
    view.max_nodes_per_account = limitView(qos.per_account_tres.nodes);
    view.max_jobs_per_account = limitView(qos.max_jobs_per_account);
    view.accounts = accounts.data();
    view.account_count = accounts.size();
    out.qos.push_back(view);
  }
}

void putAssociations(recorded_round& out) {
  for (const auto& association : out.recorded.round.associations) {
    pollux_association_view_t view{};
    view.id = association.id;
    view.parent_id = association.parent_id;
    view.account = association.account.c_str();
    view.user = association.user.empty() ? nullptr : association.user.c_str();
    view.grp_gpus = limitView(association.grp_gpus);
    view.max_gpus_per_job = limitView(association.max_gpus_per_job);
    view.grp_jobs = limitView(association.grp_jobs);
    view.max_jobs = limitView(association.max_jobs);
    view.gpus_used = association.gpus_used;
    view.jobs_used = association.jobs_used;
    view.grp_cpus = limitView(association.grp_tres.cpus);
    view.grp_memory_mb = limitView(association.grp_tres.memory_mb);
    view.grp_nodes = limitView(association.grp_tres.nodes);
    view.max_cpus_per_job = limitView(association.per_job.cpus);
    view.max_memory_mb_per_job = limitView(association.per_job.memory_mb);
    view.max_nodes_per_job = limitView(association.per_job.nodes);
    view.cpus_used = association.tres_used.cpus;
    view.memory_mb_used = association.tres_used.memory_mb;
    view.nodes_used = association.tres_used.nodes;
    out.associations.push_back(view);
  }
}

void putViews(recorded_round& out) {
  const Round& round = out.recorded.round;
  for (const auto& node : round.nodes) out.nodes.push_back(nodeView(node, out.storage));
  putPartitions(out);
  for (const auto& job : round.jobs) out.jobs.push_back(jobView(job, out.storage));
  for (const auto& reservation : round.reservations) {
    out.reservations.push_back(
        {reservation.name.c_str(), view_fields::Names::toC(reservation.nodes, out.storage),
         static_cast<time_t>(reservation.start_time), static_cast<time_t>(reservation.end_time),
         reservation.maintenance ? 1 : 0,
         reservation.licenses.empty() ? nullptr : reservation.licenses.c_str()});
  }
  for (const auto& license : round.licenses) {
    out.licenses.push_back({license.name.c_str(), static_cast<uint32_t>(license.available),
                            static_cast<uint32_t>(license.reserved)});
  }
  putQos(out);
  putAssociations(out);
  out.round.now = static_cast<time_t>(round.now);
  out.round.nodes = out.nodes.data();
  out.round.node_count = out.nodes.size();
  out.round.partitions = out.partitions.data();
  out.round.partition_count = out.partitions.size();
  out.round.jobs = out.jobs.data();
  out.round.job_count = out.jobs.size();
  out.round.reservations = out.reservations.data();
  out.round.reservation_count = out.reservations.size();
  out.round.licenses = out.licenses.data();
  out.round.license_count = out.licenses.size();
  out.round.qos = out.qos.data();
  out.round.qos_count = out.qos.size();
  out.round.associations = out.associations.data();
  out.round.association_count = out.associations.size();
}

// A plan's action kind as the C plan has it ("live": true makes a shrink SHRINK_LIVE).
int actionKindOf(const JsonField& action) {
  const JsonField field = action["kind"];
  if (field.string() == toString(ActionKind::kShrink) && action.has("live") &&
      action["live"].boolean()) {
    return POLLUX_ACTION_SHRINK_LIVE;
  }
  const std::pair<ActionKind, int> kinds[] = {{ActionKind::kHold, POLLUX_ACTION_HOLD},
                                              {ActionKind::kStart, POLLUX_ACTION_START},
                                              {ActionKind::kRequeue, POLLUX_ACTION_REQUEUE},
                                              {ActionKind::kShrink, POLLUX_ACTION_SHRINK},
                                              {ActionKind::kCancel, POLLUX_ACTION_CANCEL},
                                              {ActionKind::kCheckpoint, POLLUX_ACTION_CHECKPOINT}};
  for (const auto& [kind, c_kind] : kinds) {
    if (field.string() == toString(kind)) return c_kind;
  }
  throw pollux::InvalidInput(field.path() + ": not an action kind");
}

// The text of an optional string field ("" where absent), kept in `out`.
const char* goldenText(recorded_round& out, const JsonField& action, const char* key) {
  return out.golden_texts.emplace_back(action.has(key) ? action[key].string() : "").c_str();
}

uint32_t goldenCount(const JsonField& action, const char* key) {
  return action.has(key) ? static_cast<uint32_t>(action[key].integer(0, 1L << 30)) : 0;
}

// The actions of a plan as planToJson() writes it.
void putGoldenActions(recorded_round& out, const Json::Value& plan) {
  const JsonField actions = JsonField(plan, "plan")["actions"];
  for (Json::ArrayIndex i = 0; i < actions.arraySize(); ++i) {
    const JsonField action = actions.at(i);
    pollux_action_t golden{};
    golden.job_id = static_cast<uint32_t>(action["job_id"].integer(1, 0xFFFFFFFFL));
    golden.kind = actionKindOf(action);
    golden.num_nodes = action["nodes"].arraySize();
    golden.tres_per_node = goldenText(out, action, "tres_per_node");
    golden.node_list = goldenText(out, action, "node_list");
    golden.num_tasks = goldenCount(action, "num_tasks");
    golden.min_cpus = goldenCount(action, "min_cpus");
    golden.admin_comment = goldenText(out, action, "admin_comment");
    golden.release = action.has("release") && action["release"].boolean();
    golden.time_limit_min = goldenCount(action, "time_limit_min");
    out.golden_actions.push_back(golden);
  }
}

std::string fileText(const char* path) {
  const auto text = pollux::io::readTextFile(path);
  if (!text) throw std::runtime_error(std::string("cannot read ") + path);
  return *text;
}

}  // namespace

extern "C" {

recorded_round_t* recorded_round_load(const char* round_path, const char* plan_path) {
  try {
    auto out = std::make_unique<recorded_round>();
    out->recorded = parseRecordedRound(fileText(round_path));
    putViews(*out);
    putGoldenActions(*out, JsonField::parseDocument(fileText(plan_path)));
    return out.release();
  } catch (const std::exception& problem) {
    std::cerr << round_path << ": " << problem.what() << "\n";
    return nullptr;
  }
}

void recorded_round_free(recorded_round_t* recorded) { delete recorded; }

const pollux_round_t* recorded_round_views(const recorded_round_t* recorded) {
  return &recorded->round;
}

const char* recorded_round_scheduler_parameters(const recorded_round_t* recorded) {
  return recorded->recorded.scheduler_parameters.c_str();
}

const char* recorded_round_pollux_conf(const recorded_round_t* recorded) {
  return recorded->recorded.pollux_conf.c_str();
}

int recorded_round_settling(const recorded_round_t* recorded) {
  return recorded->recorded.settling ? 1 : 0;
}

int recorded_round_save_state(const recorded_round_t* recorded, const char* state_dir) {
  // As Service::saveState() writes it.
  Json::Value state;
  state["version"] = 1;
  state["jobs"] = recorded->recorded.jobs;
  try {
    pollux::io::saveState(std::string(state_dir) + "/pollux_state.json", state);
    return 0;
  } catch (const std::exception& problem) {
    std::cerr << problem.what() << "\n";
    return -1;
  }
}

const pollux_action_t* recorded_round_golden_actions(const recorded_round_t* recorded,
                                                     size_t* count) {
  *count = recorded->golden_actions.size();
  return recorded->golden_actions.data();
}

}  // extern "C"
