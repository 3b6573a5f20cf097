// SPDX-License-Identifier: GPL-2.0-or-later
#include "service.hpp"

#include <algorithm>

#include "api_handler.hpp"
#include "common/invalid_input.hpp"
#include "common/model/type_models.hpp"
#include "common/policy/policy.hpp"
#include "common/schema/model_json.hpp"
#include "common/schema/snapshot_json.hpp"
#include "round_json.hpp"
#include "snapshot_builder.hpp"
#include "status_view.hpp"
#include "io/state_file.hpp"
#include "io/text_file.hpp"

namespace pollux::service {

namespace {

constexpr const char* kStateFileName = "/pollux_state.json";
constexpr int kStateVersion = 1;
// When the slurmctld that restarted with jobs started (see Service::settling).
constexpr const char* kRestartedWithJobsKey = "slurmctld_restarted_with_jobs_at";

std::string readPem(const std::string& path) {
  const auto text = io::readTextFile(path);
  if (!text) throw std::runtime_error("cannot read " + path);
  return *text;
}

Json::Value allocationJson(const std::optional<policy::JobDecision>& decision) {
  if (!decision) return Json::nullValue;
  Json::Value out = schema::allocationToJson(decision->allocation);
  out["gpus"] = decision->allocation.totalGpus();
  return out;
}

// Every type's model for the job: measured ones, and estimates from relative speeds.
Json::Value modelsJson(const schema::GoodputReport& report, const model::RelativeSpeeds& speeds) {
  model::TypeModels models;
  for (const auto& [type, params] : report.perf_params) models.setMeasured(type, params);
  Json::Value out(Json::objectValue);
  for (const auto& [type, model] : models.complete(speeds)) {
    out[type] = schema::perfParamsToJson(model.params);
    out[type]["estimated"] = model.estimated;
  }
  return out;
}

}  // namespace

settings::Config Service::loadConfig() const {
  const settings::ParsedConfig parsed = settings::parseConfig(settings_.pollux_conf_text, settings_.scheduler_parameters);
  for (const auto& message : parsed.errors) error(message);
  return parsed.config;
}

Service::Service(ServiceSettings settings)
    : settings_(std::move(settings)),
      config_(loadConfig()),
      report_limiter_(config_.max_reports_per_s) {
  restoreState();
  published_.round = round_;
}

Service::~Service() {
  rest_.reset();
  saveState();
}

void Service::startRest() {
  RestServerOptions options;
  options.address = config_.rest_addr;
  options.port = config_.rest_port;
  options.threads = config_.rest_threads;
  options.log_error = [this](const std::string& message) { error("REST: " + message); };
  if (!config_.tls_cert.empty()) {
    options.tls_cert_pem = readPem(config_.tls_cert);
    options.tls_key_pem = readPem(config_.tls_key);
  }
  ApiContext context{store_,
                     metrics_,
                     report_limiter_,
                     settings_.slurm_user_id,
                     settings_.private_jobs,
                     settings_.munge_socket,
                     [this] { return status(); }};
  rest_ = std::make_unique<RestServer>(options, ApiHandler(std::move(context)));
  info("REST listening on " + rest_->url());
}

void Service::restoreState() {
  if (settings_.state_dir.empty()) return;
  const std::string path = settings_.state_dir + kStateFileName;
  try {
    const auto saved = io::loadState(path);
    if (!saved) return;
    if ((*saved)["version"] != kStateVersion) throw InvalidInput("unknown state version");
    store_.restore((*saved)["jobs"]);
    // A service re-created by a reconfigure learns what the first one of this slurmctld knew.
    const Json::Value& restarted = (*saved)[kRestartedWithJobsKey];
    restarted_with_jobs_ = !store_.records().empty() ||
                           (restarted.isNumeric() && settings_.slurmctld_started > 0 &&
                            restarted.asDouble() == settings_.slurmctld_started);
    info("restored state of " + std::to_string(store_.records().size()) + " jobs from " + path);
  } catch (const std::exception& problem) {
    error("state file " + path + " unusable (" + problem.what() + "); starting clean");
    restarted_with_jobs_ = true;  // it may have had jobs that Slurm's saved state lags behind
  }
}

bool Service::saveDue() const {
  return !saved_at_ || std::chrono::steady_clock::now() - *saved_at_ >=
                           std::chrono::seconds(config_.interval_s);
}

void Service::saveState(std::optional<Json::Value> jobs) {
  if (settings_.state_dir.empty()) return;
  const auto started = std::chrono::steady_clock::now();
  saved_at_ = started;
  Json::Value state;
  state["version"] = kStateVersion;
  state["jobs"] = jobs ? std::move(*jobs) : store_.toJson();
  if (restarted_with_jobs_) state[kRestartedWithJobsKey] = settings_.slurmctld_started;
  try {
    // Unchanged since the last save (most rounds of a busy cluster that only start rigid
    // jobs): no write, no fsync.
    const auto saved = io::saveStateIfChanged(settings_.state_dir + kStateFileName, state,
                                              saved_text_);
    costs_.state_bytes = std::max(costs_.state_bytes, saved.bytes);
    costs_.save_ms += std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - started).count();
  } catch (const std::exception& problem) {
    error(std::string("cannot save state: ") + problem.what());
  }
}

// The round's requeues are saved as done before Slurm takes them: a slurmctld killed right
// after a requeue (its own state may predate it) restarts with a plugin that knows the run it
// shows RUNNING was stopped, and requeues the job once more (Treatment::kRequeueAgain).
void Service::saveRequeuesAhead() {
  std::vector<Action> requeues;
  for (const auto& planned : round_plan_.actions) {
    if (planned.action.kind == ActionKind::kRequeue) requeues.push_back(planned.action);
  }
  if (!requeues.empty()) saveState(store_.toJsonAfter(requeues, round_->now));
}

bool Service::settling() const {
  if (round_->now - settings_.slurmctld_started >= kSettleAfterStartS) return false;
  // Only a slurmctld that had jobs before its start has a state file that may lag behind them.
  // (A requeued job's submit time is that of the requeue's end, which may follow the start.)
  return restarted_with_jobs_ ||
         std::any_of(round_->jobs.begin(), round_->jobs.end(), [this](const SlurmJob& job) {
           return job.submit_time < settings_.slurmctld_started;
         });
}

// With pollux_dump_rounds, the round and all planRound() reads, for pollux-replay.
void Service::dumpRound() const {
  if (config_.dump_rounds_dir.empty()) return;
  const RecordedRound recorded{settings_.scheduler_parameters, settings_.pollux_conf_text,
                               settling(), store_.toJson(), *round_};
  const std::string path = config_.dump_rounds_dir + "/round-" +
                           std::to_string(static_cast<long>(round_->now)) + "-" +
                           std::to_string(rounds_dumped_) + ".json";
  try {
    io::saveState(path, recordedRoundToJson(recorded));
  } catch (const std::exception& problem) {
    error("cannot dump the round: " + std::string(problem.what()));
  }
}

std::optional<std::vector<PlannedAction>> Service::plan(Round round) {
  round_started_ = std::chrono::steady_clock::now();
  round_ = std::make_shared<const Round>(std::move(round));
  round_plan_ = RoundPlan{};
  costs_ = RoundCosts{};
  dumpRound();
  ++rounds_dumped_;
  try {
    round_plan_ = planRound(store_, *round_, config_, settling(), settings_.log);
    costs_.solve_ms = round_plan_.stats.solve_ms;
    saveRequeuesAhead();
  } catch (const PolicyFailed& problem) {
    round_plan_.problems.push_back(std::string("round skipped, nothing changed: ") +
                                   problem.what());
    error(round_plan_.problems.back());
    endRound();
    return std::nullopt;
  }
  return round_plan_.actions;
}

void Service::recordOutcome(const Action& a, const ActionOutcome& outcome) {
  const std::string id = std::to_string(a.job_id);
  if (outcome.deferred) {
    metrics_.countAction(toString(a.kind), ActionResult::kDeferred);
    info("JobId=" + id + " " + toString(a.kind) +
         " deferred to the next round: this round's time for placements was spent (wanted: " +
         a.why + ")");
    return;
  }
  metrics_.countAction(toString(a.kind),
                       outcome.error_code != 0 ? ActionResult::kFailed : ActionResult::kDone);
  if (outcome.error_code != 0) {
    error("JobId=" + id + " " + toString(a.kind) + " failed: " + outcome.error_text +
          " (wanted: " + a.why + ")");
    store_.recordFailedAction(a, outcome.error_text);
    return;
  }
  info("JobId=" + id + " " + toString(a.kind) + ": " + a.why);
  store_.recordAction(a, round_->now);
}

void Service::finish(const std::vector<ActionOutcome>& outcomes) {
  const auto& actions = round_plan_.actions;
  if (outcomes.size() != actions.size()) {
    error("round ended with " + std::to_string(outcomes.size()) + " outcomes for " +
          std::to_string(actions.size()) + " actions");
  }
  for (size_t i = 0; i < actions.size() && i < outcomes.size(); ++i) {
    recordOutcome(actions[i].action, outcomes[i]);
  }
  endRound();
}

void Service::endRound() {
  const double duration_ms = std::chrono::duration<double, std::milli>(
                                 std::chrono::steady_clock::now() - round_started_).count();
  int adaptive = 0, running = 0;
  for (const auto& job : round_->jobs) {
    adaptive += job.adaptive.has_value();
    running += job.adaptive && job.state == JobState::kRunning;
  }
  metrics_.recordRound(duration_ms, adaptive, running);
  {
    std::lock_guard<std::mutex> guard(status_mutex_);
    published_ = PublishedRound{round_, round_plan_.stats, round_plan_.actions.size(),
                                round_plan_.problems, duration_ms};
    status_.reset();
  }
  if (!round_plan_.actions.empty() || saveDue()) saveState();
}

Json::Value Service::status() const {
  std::lock_guard<std::mutex> guard(status_mutex_);
  if (!status_) status_ = buildStatus(published_);
  return *status_;
}

Json::Value Service::buildStatus(const PublishedRound& published) const {
  const Round& last = *published.round;
  Json::Value status;
  status["time"] = last.now;
  status["interval_s"] = config_.interval_s;
  status["rest"] = rest_ ? rest_->url() : "";
  Json::Value& round = status["last_round"];
  round["solver_status"] = published.stats.solver_status;
  round["solve_ms"] = published.stats.solve_ms;
  round["kept_current"] = published.stats.kept_current;
  round["work_limit_hits"] = published.stats.work_limit_hits;
  round["time_limit_hits"] = published.stats.time_limit_hits;
  round["actions"] = static_cast<Json::UInt64>(published.actions);
  round["problems"] = Json::Value(Json::arrayValue);
  for (const auto& problem : published.problems) round["problems"].append(problem);
  if (published.duration_ms) round["duration_ms"] = *published.duration_ms;
  status["nodes"] = Json::Value(Json::arrayValue);
  for (const auto& node : last.nodes) {
    Json::Value entry;
    entry["name"] = node.name;
    entry["gpu_type"] = gpuTypeOf(node.gpus);
    entry["gpus"] = node.gpus.count;
    entry["free_gpus"] = std::max(node.gpus.count - node.gpus_used, 0);
    entry["usable"] = node.usable;
    entry["free_cpus"] = node.free_cpus;
    if (node.free_memory_mb) entry["free_memory_mb"] = Json::Int64(*node.free_memory_mb);
    status["nodes"].append(entry);
  }
  status["jobs"] = Json::Value(Json::arrayValue);
  const auto records = store_.records();
  const model::RelativeSpeeds speeds = relativeSpeeds(last.nodes, config_);
  for (const auto& job : last.jobs) {
    if (job.state == JobState::kOther) continue;
    status["jobs"].append(jobStatus(job, records, speeds));
  }
  return status;
}

Json::Value Service::jobStatus(const SlurmJob& job, const std::map<std::string, JobRecord>& records,
                               const model::RelativeSpeeds& speeds) const {
  Json::Value entry;
  const std::string id = std::to_string(job.id);
  entry["job_id"] = id;
  entry["user_id"] = job.uid;
  entry["state"] = toString(job.state);
  entry["adaptive"] = job.adaptive.has_value();
  if (!job.comment_error.empty()) entry["comment_error"] = job.comment_error;
  if (job.adaptive) {
    entry["min_gpus"] = job.adaptive->min_gpus;
    if (job.adaptive->max_gpus) entry["max_gpus"] = *job.adaptive->max_gpus;
    if (job.adaptive->gpu_type) entry["gpu_type"] = *job.adaptive->gpu_type;
  } else if (job.requested_gpus.count > 0) {  // in total, however it asked
    entry["min_gpus"] = entry["max_gpus"] = job.requested_gpus.count;
    if (!job.requested_gpus.type.empty()) entry["gpu_type"] = job.requested_gpus.type;
  }
  const auto record = records.find(id);
  if (record == records.end()) return entry;
  const JobRecord& known = record->second;
  entry["allocation"] = allocationJson(known.decision);
  const schema::ReportReply reply = replyFor(known);
  entry["batch_size"] = Json::Int64(reply.batch_size);
  entry["local_bsz"] = reply.local_bsz;
  entry["accum_steps"] = reply.accum_steps;
  entry["lr_scale"] = reply.lr_scale;
  if (job.adaptive) entry["phase"] = toString(known.lifecycle.phase);
  entry["restarts"] = known.restarts;
  entry["status"] = known.status;
  if (!known.waiting.empty()) entry["waiting"] = known.waiting;
  if (reply.shrink_in_place) entry["shrink_in_place"] = true;
  if (reply.part) entry["part"] = schema::partToJson(*reply.part);
  entry["reported"] = known.report.has_value();
  if (known.report) {
    entry["models"] = modelsJson(*known.report, speeds);
    entry["progress"]["examples"] = known.report->progress.examples;
    entry["progress"]["epochs"] = known.report->progress.epochs;
    entry["restart_cost_s"] = known.report->restart_cost_s.value_or(0.0);
    if (known.report->resize_stall_s) entry["resize_stall_s"] = *known.report->resize_stall_s;
    if (known.report->join_startup_s) entry["join_startup_s"] = *known.report->join_startup_s;
    if (known.report->length) {
      entry["length"] = lengthStatus(*known.report->length,
                                     known.decision ? known.decision->remaining_s : std::nullopt);
    }
  }
  return entry;
}

}  // namespace pollux::service
