// The C interface of pollux_service.h over the C++ Service. Every entry point catches
// everything: an exception must never unwind into slurmctld.
#include "../pollux_service.h"

#include <algorithm>

#include "auth/auth_info.hpp"
#include "invalid_input.hpp"
#include "report/adaptive_comment.hpp"
#include "service.hpp"
#include "text_file.hpp"

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

// Seconds between rounds when the service cannot say (pollux_interval's default).
constexpr int kFallbackIntervalS = 60;

std::string text(const char* value) { return value ? value : ""; }

pollux::service::JobState stateOf(int state) {
  if (state == POLLUX_JOB_PENDING) return pollux::service::JobState::kPending;
  if (state == POLLUX_JOB_RUNNING) return pollux::service::JobState::kRunning;
  return pollux::service::JobState::kOther;
}

pollux::policy::NodeDemand demandOf(const pollux_job_view_t& view) {
  pollux::service::ResourceRequest request;
  request.min_cpus_per_node = view.min_cpus_per_node;
  request.cpus_per_task = std::max(1, view.cpus_per_task);
  request.ntasks_per_gpu = std::max(0, view.ntasks_per_gpu);
  request.cpus_per_tres = text(view.cpus_per_tres);
  request.memory_mb_per_node = static_cast<std::int64_t>(view.memory_mb_per_node);
  request.memory_mb_per_cpu = static_cast<std::int64_t>(view.memory_mb_per_cpu);
  request.mem_per_tres = text(view.mem_per_tres);
  request.memory_set = view.memory_set != 0;
  request.default_cpus_per_gpu = static_cast<int>(view.default_cpus_per_gpu);
  request.default_memory_mb_per_gpu = static_cast<std::int64_t>(view.default_memory_mb_per_gpu);
  return pollux::service::nodeDemandOf(request);
}

pollux::service::GpuRequest gpuRequestOf(const pollux_job_view_t& view) {
  pollux::service::GpuRequest request;
  request.per_node = text(view.tres_per_node);
  request.per_job = text(view.tres_per_job);
  request.per_task = text(view.tres_per_task);
  request.per_socket = text(view.tres_per_socket);
  request.nodes = static_cast<int>(view.num_nodes);
  request.tasks = static_cast<int>(view.num_tasks);
  request.sockets_per_node = view.sockets_per_node;
  return request;
}

std::optional<std::int64_t> megabytes(int64_t value) {
  return value < 0 ? std::nullopt : std::optional<std::int64_t>(value);
}

pollux::service::SlurmNode nodeFrom(const pollux_node_view_t& view) {
  pollux::service::SlurmNode node;
  node.name = text(view.name);
  node.gpus = pollux::service::parseGpuGres(text(view.gres)).value_or(pollux::service::GpuGres{});
  node.gpus_used = pollux::service::countGpus(text(view.gres_used));
  node.usable = view.usable != 0;
  node.registered = view.registered != 0;
  node.free_cpus = view.free_cpus;
  node.memory_mb = megabytes(view.memory_mb);
  node.free_memory_mb = megabytes(view.free_memory_mb);
  return node;
}

pollux::service::SlurmJob jobFrom(const pollux_job_view_t& view) {
  pollux::service::SlurmJob job;
  job.id = view.job_id;
  job.uid = view.user_id;
  job.state = stateOf(view.state);
  job.held = view.held != 0;
  job.submit_time = static_cast<double>(view.submit_time);
  job.start_time = static_cast<double>(view.start_time);
  job.eligible_time = static_cast<double>(view.eligible_time);
  job.end_time = static_cast<double>(view.end_time);
  job.failed = view.failed != 0;
  try {
    job.adaptive = pollux::report::parseAdaptiveComment(text(view.comment));
  } catch (const pollux::InvalidInput& error) {
    job.comment_error = error.what();  // treated as rigid; job_submit rejects these at sbatch
  }
  job.partitions = pollux::service::splitNames(text(view.partition));
  job.nodes = pollux::service::splitNames(text(view.nodes));
  job.batch_host = text(view.batch_host);
  job.requested_nodes = pollux::service::splitNames(text(view.requested_nodes));
  job.gpus_per_node = pollux::service::parseGpuGres(text(view.tres_per_node));
  job.requested_gpus = pollux::service::requestedGpus(gpuRequestOf(view));
  job.num_nodes = static_cast<int>(view.num_nodes);
  job.demand = demandOf(view);
  return job;
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
    converted.log = [log](int level, const std::string& message) { logTo(log, level, message); };
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
  return onService(service, "interval", kFallbackIntervalS,
                   [&] { return service->impl->config().interval_s; });
}

int pollux_service_hosts_backfill(const pollux_service_t* service) {
  return onService(service, "backfill setting", 1,
                   [&] { return service->impl->config().backfill ? 1 : 0; });
}

void pollux_round_begin(pollux_service_t* service, time_t now) {
  onService(service, "round", 0, [&] {
    service->impl->beginRound(static_cast<double>(now));
    return 0;
  });
}

void pollux_round_add_node(pollux_service_t* service, const pollux_node_view_t* node) {
  onService(service, "round", 0, [&] {
    if (node) service->impl->addNode(nodeFrom(*node));
    return 0;
  });
}

void pollux_round_add_partition(pollux_service_t* service, const char* name, const char* nodes) {
  onService(service, "round", 0, [&] {
    const auto members = pollux::service::splitNames(text(nodes));
    service->impl->addPartition(text(name), {members.begin(), members.end()});
    return 0;
  });
}

void pollux_round_add_job(pollux_service_t* service, const pollux_job_view_t* job) {
  onService(service, "round", 0, [&] {
    if (job) service->impl->addJob(jobFrom(*job));
    return 0;
  });
}

size_t pollux_round_decide(pollux_service_t* service) {
  return onService(service, "round", size_t{0}, [&] { return service->impl->decide(); });
}

const pollux_action_t* pollux_round_action(pollux_service_t* service, size_t index) {
  return onService(service, "round", static_cast<const pollux_action_t*>(nullptr),
                   [&] { return &service->impl->action(index); });
}

void pollux_round_action_done(pollux_service_t* service, size_t index, int error_code,
                              const char* error_text) {
  onService(service, "round", 0, [&] {
    service->impl->actionDone(index, error_code, text(error_text));
    return 0;
  });
}

void pollux_round_end(pollux_service_t* service) {
  onService(service, "round", 0, [&] {
    service->impl->endRound();
    return 0;
  });
}

}  // extern "C"
