// SPDX-License-Identifier: GPL-2.0-or-later
// The C interface of pollux_service.h over the C++ Service. Every entry point catches
// everything: an exception must never unwind into slurmctld.
#include "pollux_service.h"

#include <algorithm>
#include <cerrno>
#include <memory>
#include <new>
#include <stdexcept>

#include "common/auth/auth_info.hpp"
#include "service.hpp"
#include "io/text_file.hpp"
#include "view_fields.hpp"

struct pollux_service {
  std::unique_ptr<pollux::service::Service> impl;
  pollux_log_fn log;
};

namespace {

using pollux::service::Service;

void logTo(pollux_log_fn log, int level, const std::string& message) {
  if (log) log(level, message.c_str());
}

// Runs `body`, logging any exception; returns `fallback` if one was thrown.
template <typename Result, typename Body>
Result guarded(pollux_log_fn log, const char* where, Result fallback, Body body) {
  try {
    return body();
  } catch (const std::exception& error) {
    logTo(log, POLLUX_LOG_ERROR, std::string(where) + ": " + error.what());
  } catch (...) {
    logTo(log, POLLUX_LOG_ERROR, std::string(where) + ": unknown error");
  }
  return fallback;
}

// The same on a service handle: `fallback` too for a NULL one.
template <typename Result, typename Body>
Result onService(const pollux_service_t* service, const char* where, Result fallback, Body body) {
  if (!service || !service->impl) return fallback;
  return guarded<Result>(service->log, where, fallback, body);
}

// The settings' defaults, for a service that cannot say.
const pollux::settings::Config& defaultConfig() {
  static const pollux::settings::Config defaults;
  return defaults;
}

using pollux::service::view_fields::arrayOf;
using pollux::service::view_fields::InvalidRound;
using pollux::service::view_fields::namesOf;

// Runs `body` (which returns 0, or -1 with errno set) under the -1/errno contract: an
// InvalidRound is EINVAL, running out of memory ENOMEM, anything else EIO; each is logged.
template <typename Body>
int withErrno(pollux_log_fn log, const char* where, Body body) {
  try {
    return body();
  } catch (const InvalidRound& problem) {
    logTo(log, POLLUX_LOG_ERROR, std::string(where) + ": " + problem.what());
    errno = EINVAL;
  } catch (const std::bad_alloc&) {
    logTo(log, POLLUX_LOG_ERROR, std::string(where) + ": out of memory");
    errno = ENOMEM;
  } catch (const std::exception& problem) {
    logTo(log, POLLUX_LOG_ERROR, std::string(where) + ": " + problem.what());
    errno = EIO;
  } catch (...) {
    logTo(log, POLLUX_LOG_ERROR, std::string(where) + ": unknown error");
    errno = EIO;
  }
  return -1;
}

std::string text(const char* value) { return value ? value : ""; }

// A field of a view into `target`, the service's value: the fields' lists of pollux_service.h.
#define POLLUX_FIELD_FROM_VIEW(type, name, kind, presence, key, member) \
  target.member = pollux::service::view_fields::kind::fromC(view.name, #name);

pollux::service::GpuRequest gpuRequestOf(const pollux_job_view_t& view) {
  pollux::service::GpuRequest target;
  POLLUX_JOB_GPU_FIELDS(POLLUX_FIELD_FROM_VIEW)
  return target;
}

pollux::service::ResourceRequest resourcesOf(const pollux_job_view_t& view) {
  pollux::service::ResourceRequest target;
  POLLUX_JOB_RESOURCE_FIELDS(POLLUX_FIELD_FROM_VIEW)
  return target;
}

pollux::service::SlurmNode nodeFrom(const pollux_node_view_t& view) {
  pollux::service::SlurmNode target;
  POLLUX_NODE_FIELDS(POLLUX_FIELD_FROM_VIEW)
  return target;
}

pollux::service::SlurmJob jobFrom(const pollux_job_view_t& view) {
  pollux::service::SlurmJob target;
  POLLUX_JOB_FIELDS(POLLUX_FIELD_FROM_VIEW)
  target.gpu_request = gpuRequestOf(view);
  target.resources = resourcesOf(view);
  target.num_nodes = target.gpu_request.nodes;
  pollux::service::readRequests(target);
  return target;
}

#undef POLLUX_FIELD_FROM_VIEW

std::optional<int> limitOf(int64_t value) {
  if (value < 0) return std::nullopt;
  return static_cast<int>(std::min<int64_t>(value, 1 << 30));
}

int countOf(uint32_t value) { return static_cast<int>(std::min<uint32_t>(value, 1u << 30)); }

int usedOf(int64_t value) { return static_cast<int>(std::clamp<int64_t>(value, 0, 1 << 30)); }

std::optional<std::int64_t> amountLimitOf(int64_t value) {
  return value < 0 ? std::nullopt : std::optional<std::int64_t>(value);
}

pollux::service::SharedTresLimits sharedLimitsOf(int64_t cpus, int64_t memory_mb,
                                                  int64_t nodes) {
  return {amountLimitOf(cpus), amountLimitOf(memory_mb), amountLimitOf(nodes)};
}

pollux::service::SharedTresUsed sharedUsedOf(int64_t cpus, int64_t memory_mb, int64_t nodes) {
  return {std::max<int64_t>(cpus, 0), std::max<int64_t>(memory_mb, 0),
          std::max<int64_t>(nodes, 0)};
}

pollux::service::JobTresLimits jobLimitsOf(int64_t cpus, int64_t memory_mb, int64_t nodes) {
  return {amountLimitOf(cpus), amountLimitOf(memory_mb), limitOf(nodes)};
}

pollux::service::SlurmQos qosFrom(const pollux_qos_view_t& view) {
  pollux::service::SlurmQos qos;
  qos.name = text(view.name);
  qos.grp_gpus = limitOf(view.grp_gpus);
  qos.max_gpus_per_user = limitOf(view.max_gpus_per_user);
  qos.max_gpus_per_job = limitOf(view.max_gpus_per_job);
  qos.grp_jobs = limitOf(view.grp_jobs);
  qos.max_jobs_per_user = limitOf(view.max_jobs_per_user);
  qos.grp_tres = sharedLimitsOf(view.grp_cpus, view.grp_memory_mb, view.grp_nodes);
  qos.per_user_tres = sharedLimitsOf(view.max_cpus_per_user, view.max_memory_mb_per_user,
                                     view.max_nodes_per_user);
  qos.per_job =
      jobLimitsOf(view.max_cpus_per_job, view.max_memory_mb_per_job, view.max_nodes_per_job);
  qos.gpus_used = usedOf(view.gpus_used);
  qos.jobs_used = usedOf(view.jobs_used);
  qos.tres_used = sharedUsedOf(view.cpus_used, view.memory_mb_used, view.nodes_used);
  const auto* users = arrayOf(view.users, view.user_count, "QOS users");
  for (size_t i = 0; i < view.user_count; ++i) {
    qos.users[users[i].user_id] = {usedOf(users[i].gpus_used), usedOf(users[i].jobs_used),
                                   sharedUsedOf(users[i].cpus_used, users[i].memory_mb_used,
                                                users[i].nodes_used)};
  }
  qos.max_gpus_per_account = limitOf(view.max_gpus_per_account);
  qos.per_account_tres = sharedLimitsOf(view.max_cpus_per_account,
                                        view.max_memory_mb_per_account,
                                        view.max_nodes_per_account);
  qos.max_jobs_per_account = limitOf(view.max_jobs_per_account);
  const auto* accounts = arrayOf(view.accounts, view.account_count, "QOS accounts");
  for (size_t i = 0; i < view.account_count; ++i) {
    if (!accounts[i].account) continue;
    qos.accounts[accounts[i].account] = {
        usedOf(accounts[i].gpus_used), usedOf(accounts[i].jobs_used),
        sharedUsedOf(accounts[i].cpus_used, accounts[i].memory_mb_used,
                     accounts[i].nodes_used)};
  }
  return qos;
}

pollux::service::SlurmAssociation associationFrom(const pollux_association_view_t& view) {
  pollux::service::SlurmAssociation association;
  association.id = view.id;
  association.parent_id = view.parent_id;
  association.account = text(view.account);
  association.user = text(view.user);
  association.grp_gpus = limitOf(view.grp_gpus);
  association.max_gpus_per_job = limitOf(view.max_gpus_per_job);
  association.grp_jobs = limitOf(view.grp_jobs);
  association.max_jobs = limitOf(view.max_jobs);
  association.grp_tres = sharedLimitsOf(view.grp_cpus, view.grp_memory_mb, view.grp_nodes);
  association.per_job =
      jobLimitsOf(view.max_cpus_per_job, view.max_memory_mb_per_job, view.max_nodes_per_job);
  association.gpus_used = usedOf(view.gpus_used);
  association.jobs_used = usedOf(view.jobs_used);
  association.tres_used = sharedUsedOf(view.cpus_used, view.memory_mb_used, view.nodes_used);
  return association;
}

pollux::service::Round roundFrom(const pollux_round_t& view) {
  pollux::service::Round round;
  round.now = static_cast<double>(view.now);
  const auto* nodes = arrayOf(view.nodes, view.node_count, "round nodes");
  for (size_t i = 0; i < view.node_count; ++i) {
    if (nodes[i].name) round.nodes.push_back(nodeFrom(nodes[i]));
  }
  const auto* partitions = arrayOf(view.partitions, view.partition_count, "round partitions");
  for (size_t i = 0; i < view.partition_count; ++i) {
    if (!partitions[i].name) continue;
    const auto members = namesOf(partitions[i].nodes, "partition nodes");
    round.partitions[partitions[i].name] = {members.begin(), members.end()};
    if (partitions[i].max_nodes > 0) {
      round.partition_max_nodes[partitions[i].name] = countOf(partitions[i].max_nodes);
    }
    if (partitions[i].max_time_min > 0) {
      round.partition_max_time_min[partitions[i].name] = countOf(partitions[i].max_time_min);
    }
    if (partitions[i].qos && *partitions[i].qos) {
      round.partition_qos[partitions[i].name] = partitions[i].qos;
    }
  }
  const auto* jobs = arrayOf(view.jobs, view.job_count, "round jobs");
  for (size_t i = 0; i < view.job_count; ++i) round.jobs.push_back(jobFrom(jobs[i]));
  const auto* reservations =
      arrayOf(view.reservations, view.reservation_count, "round reservations");
  for (size_t i = 0; i < view.reservation_count; ++i) {
    if (!reservations[i].name) continue;
    round.reservations.push_back({reservations[i].name,
                                  namesOf(reservations[i].nodes, "reservation nodes"),
                                  static_cast<double>(reservations[i].start_time),
                                  static_cast<double>(reservations[i].end_time),
                                  reservations[i].maintenance != 0,
                                  text(reservations[i].licenses)});
  }
  const auto* licenses = arrayOf(view.licenses, view.license_count, "round licenses");
  for (size_t i = 0; i < view.license_count; ++i) {
    if (!licenses[i].name) continue;
    round.licenses.push_back({licenses[i].name, countOf(licenses[i].available),
                              countOf(licenses[i].reserved)});
  }
  const auto* qos = arrayOf(view.qos, view.qos_count, "round QOS");
  for (size_t i = 0; i < view.qos_count; ++i) {
    if (qos[i].name) round.qos.push_back(qosFrom(qos[i]));
  }
  const auto* associations = arrayOf(view.associations, view.association_count, "round associations");
  for (size_t i = 0; i < view.association_count; ++i) {
    round.associations.push_back(associationFrom(associations[i]));
  }
  return round;
}

int cKind(const pollux::service::Action& action) {
  switch (action.kind) {
    case pollux::service::ActionKind::kHold: return POLLUX_ACTION_HOLD;
    case pollux::service::ActionKind::kStart: return POLLUX_ACTION_START;
    case pollux::service::ActionKind::kRequeue: return POLLUX_ACTION_REQUEUE;
    case pollux::service::ActionKind::kShrink:
      return action.live ? POLLUX_ACTION_SHRINK_LIVE : POLLUX_ACTION_SHRINK;
    case pollux::service::ActionKind::kCancel: return POLLUX_ACTION_CANCEL;
    case pollux::service::ActionKind::kCheckpoint: return POLLUX_ACTION_CHECKPOINT;
  }
  return POLLUX_ACTION_HOLD;
}

// The C plan and the actions and strings it points to.
struct OwnedPlan : pollux_plan_t {
  std::vector<pollux::service::PlannedAction> planned;
  std::vector<pollux_action_t> c_actions;
};

std::unique_ptr<OwnedPlan> planFrom(std::vector<pollux::service::PlannedAction> planned) {
  auto plan = std::make_unique<OwnedPlan>();
  plan->planned = std::move(planned);
  for (const auto& p : plan->planned) {
    plan->c_actions.push_back(pollux_action_t{p.action.job_id,
                                              cKind(p.action),
                                              static_cast<uint32_t>(p.action.nodes.size()),
                                              p.tres_per_node.c_str(),
                                              p.node_list.c_str(),
                                              static_cast<uint32_t>(p.num_tasks),
                                              static_cast<uint32_t>(p.min_cpus),
                                              p.admin_comment.c_str(),
                                              p.release ? 1 : 0,
                                              static_cast<uint32_t>(p.time_limit_min),
                                              0,
                                              nullptr});
  }
  plan->actions = plan->c_actions.data();
  plan->action_count = plan->c_actions.size();
  return plan;
}

std::vector<pollux::service::ActionOutcome> outcomesOf(const pollux_plan_t& plan) {
  std::vector<pollux::service::ActionOutcome> outcomes;
  for (size_t i = 0; i < plan.action_count; ++i) {
    const pollux_action_t& action = plan.actions[i];
    const bool deferred = action.error_code == POLLUX_ACTION_DEFERRED;
    outcomes.push_back({deferred ? 0 : action.error_code, text(action.error_text), deferred});
  }
  return outcomes;
}

int cLevel(pollux::service::LogLevel level) {
  switch (level) {
    case pollux::service::LogLevel::kError: return POLLUX_LOG_ERROR;
    case pollux::service::LogLevel::kInfo: return POLLUX_LOG_INFO;
    case pollux::service::LogLevel::kDebug: return POLLUX_LOG_DEBUG;
  }
  return POLLUX_LOG_ERROR;
}

}  // namespace

extern "C" {

pollux_service_t* pollux_service_create(const pollux_settings_t* settings) {
  if (!settings) return nullptr;
  return guarded<pollux_service_t*>(settings->log, "cannot start", nullptr, [&] {
    pollux::service::ServiceSettings converted;
    converted.scheduler_parameters = text(settings->scheduler_parameters);
    // A missing pollux.conf is fine: every key has a default.
    converted.pollux_conf_text =
        pollux::io::readTextFile(text(settings->pollux_conf_path)).value_or("");
    converted.state_dir = text(settings->state_dir);
    converted.munge_socket = pollux::auth::mungeSocketFromAuthInfo(text(settings->auth_info));
    converted.slurm_user_id = settings->slurm_user_id;
    converted.private_jobs = settings->private_jobs != 0;
    converted.slurmctld_started = static_cast<double>(settings->slurmctld_started);
    const pollux_log_fn log = settings->log;
    converted.log = [log](pollux::service::LogLevel level, const std::string& message) {
      logTo(log, cLevel(level), message);
    };
    auto handle = std::make_unique<pollux_service>();
    handle->log = log;
    handle->impl = std::make_unique<Service>(std::move(converted));
    return handle.release();
  });
}

int pollux_service_start_rest(pollux_service_t* service) {
  return onService(service, "REST endpoint not started", -1, [&] {
    service->impl->startRest();
    return 0;
  });
}

void pollux_service_destroy(pollux_service_t* service) {
  if (!service) return;
  const pollux_log_fn log = service->log;
  guarded<int>(log, "shutdown", 0, [&] {
    delete service;
    return 0;
  });
}

int pollux_service_interval(const pollux_service_t* service) {
  return onService(service, "interval", defaultConfig().interval_s,
                   [&] { return service->impl->config().interval_s; });
}

int pollux_service_event_delay(const pollux_service_t* service) {
  return onService(service, "event delay", defaultConfig().event_delay_s,
                   [&] { return service->impl->config().event_delay_s; });
}

int pollux_service_placement_ms(const pollux_service_t* service) {
  return onService(service, "placement time", defaultConfig().placement_ms,
                   [&] { return service->impl->config().placement_ms; });
}

int pollux_service_hosts_backfill(const pollux_service_t* service) {
  return onService(service, "backfill setting", 1,
                   [&] { return service->impl->config().backfill ? 1 : 0; });
}

int pollux_service_plan(pollux_service_t* service, const pollux_round_t* round,
                        pollux_plan_t** plan) {
  if (plan) *plan = nullptr;
  if (!service || !service->impl || !round || !plan) {
    errno = EINVAL;
    return -1;
  }
  return withErrno(service->log, "round", [&] {
    auto planned = service->impl->plan(roundFrom(*round));
    if (!planned) {
      errno = EIO;
      return -1;
    }
    *plan = planFrom(std::move(*planned)).release();
    return 0;
  });
}

int pollux_plan_finish(pollux_service_t* service, pollux_plan_t* plan) {
  std::unique_ptr<OwnedPlan> owned(static_cast<OwnedPlan*>(plan));
  if (!service || !service->impl || !plan) {
    errno = EINVAL;
    return -1;
  }
  return withErrno(service->log, "round end", [&] {
    service->impl->finish(outcomesOf(*owned));
    return 0;
  });
}

int pollux_service_round_costs(const pollux_service_t* service, pollux_round_costs_t* costs) {
  if (costs) *costs = pollux_round_costs_t{};
  if (!service || !service->impl || !costs) {
    errno = EINVAL;
    return -1;
  }
  const auto& last = service->impl->lastRoundCosts();
  costs->solve_ms = last.solve_ms;
  costs->save_ms = last.save_ms;
  costs->state_bytes = last.state_bytes;
  return 0;
}

}  // extern "C"
