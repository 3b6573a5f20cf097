#include "service.hpp"

#include <algorithm>
#include <set>

#include "api_handler.hpp"
#include "invalid_input.hpp"
#include "model/type_models.hpp"
#include "policy/policy.hpp"
#include "report/model_json.hpp"
#include "report/snapshot_json.hpp"
#include "snapshot_builder.hpp"
#include "state_file.hpp"
#include "text_file.hpp"

namespace pollux::service {

namespace {

constexpr const char* kStateFileName = "/pollux_state.json";
// Adaptive jobs that failed this recently on a node now down are requeued (Slurm keeps
// finished jobs MinJobAge, 300 s by default).
constexpr double kNodeFailureWindowS = 600;
constexpr int kStateVersion = 1;

int cKind(ActionKind kind) {
  switch (kind) {
    case ActionKind::kHold: return POLLUX_ACTION_HOLD;
    case ActionKind::kStart: return POLLUX_ACTION_START;
    case ActionKind::kRequeue: return POLLUX_ACTION_REQUEUE;
    case ActionKind::kShrink: return POLLUX_ACTION_SHRINK;
  }
  return POLLUX_ACTION_HOLD;
}

std::string describeNodes(const std::vector<std::string>& nodes) {
  std::string text;
  for (const auto& node : nodes) text += (text.empty() ? "" : ",") + node;
  return text;
}

std::vector<std::string> sortedNames(const policy::Allocation& allocation) {
  std::vector<std::string> names;
  for (const auto& [node, gpus] : allocation.nodes) names.push_back(node);
  return names;
}

std::string readPem(const std::string& path) {
  const auto text = io::readTextFile(path);
  if (!text) throw std::runtime_error("cannot read " + path);
  return *text;
}

Json::Value allocationJson(const std::optional<policy::JobDecision>& decision) {
  if (!decision) return Json::nullValue;
  Json::Value out = report::allocationToJson(decision->allocation);
  out["gpus"] = decision->allocation.totalGpus();
  return out;
}

const char* stateName(JobState state) {
  switch (state) {
    case JobState::kPending: return "pending";
    case JobState::kRunning: return "running";
    case JobState::kOther: return "other";
  }
  return "other";
}

// Every type's model for the job: measured ones, and estimates from relative speeds.
Json::Value modelsJson(const report::GoodputReport& report, const model::RelativeSpeeds& speeds) {
  model::TypeModels models;
  for (const auto& [type, params] : report.perf_params) models.setMeasured(type, params);
  Json::Value out(Json::objectValue);
  for (const auto& [type, model] : models.complete(speeds)) {
    out[type] = report::perfParamsToJson(model.params);
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
  published_status_ = buildStatus();
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
    restored_jobs_ = !store_.records().empty();
    info("restored state of " + std::to_string(store_.records().size()) + " jobs from " + path);
  } catch (const std::exception& problem) {
    error("state file " + path + " unusable (" + problem.what() + "); starting clean");
  }
}

void Service::saveState() {
  if (settings_.state_dir.empty()) return;
  Json::Value state;
  state["version"] = kStateVersion;
  state["jobs"] = store_.toJson();
  try {
    io::saveState(settings_.state_dir + kStateFileName, state);
  } catch (const std::exception& problem) {
    error(std::string("cannot save state: ") + problem.what());
  }
}

void Service::beginRound(double now) {
  round_time_ = now;
  round_started_ = std::chrono::steady_clock::now();
  round_nodes_.clear();
  round_partitions_.clear();
  round_jobs_.clear();
  round_actions_.clear();
  round_problems_.clear();
  round_stats_ = policy::Stats{};
}

void Service::addNode(SlurmNode node) { round_nodes_.push_back(std::move(node)); }
void Service::addJob(SlurmJob job) { round_jobs_.push_back(std::move(job)); }
void Service::addPartition(const std::string& name, policy::NodeSet nodes) {
  round_partitions_[name] = std::move(nodes);
}

// Ends the in-place shrinks Slurm now shows done, and those given up: the job was not on its
// target within kShrinkTimeoutS (then it is resized by requeue from now on) or stopped running.
void Service::settleShrinks() {
  const auto records = store_.records();
  for (const auto& job : round_jobs_) {
    const auto record = records.find(std::to_string(job.id));
    if (record == records.end() || !record->second.shrink) continue;
    const PendingShrink& shrink = *record->second.shrink;
    switch (shrinkProgress(job, shrink, round_time_)) {
      case ShrinkProgress::kWaiting: break;
      case ShrinkProgress::kDone:
        info("JobId=" + record->first + " shrunk in place to " + describeNodes(job.nodes) +
             " within " + std::to_string(static_cast<int>(round_time_ - shrink.requested_time)) +
             " s of the request");
        store_.endShrink(record->first, false);
        break;
      case ShrinkProgress::kTimedOut:
        error("JobId=" + record->first + " did not shrink in place within " +
              std::to_string(static_cast<int>(kShrinkTimeoutS)) +
              " s (is its script running pollux-agent --launch?); resized by requeue from now on");
        store_.endShrink(record->first, true);
        break;
      case ShrinkProgress::kStopped: store_.endShrink(record->first, false); break;
    }
  }
}

size_t Service::decide() {
  resolveGpuTypes(round_jobs_, round_nodes_);
  store_.syncWithSlurm(round_jobs_);
  settleShrinks();
  const auto records = store_.records();
  // A job shrinking in place is seen on its target (where it will be in a moment) and waits.
  std::vector<SlurmJob> as_seen = round_jobs_;
  std::set<uint32_t> shrinking, resizes_in_place;
  for (auto& job : as_seen) {
    const auto record = records.find(std::to_string(job.id));
    if (record == records.end()) continue;
    if (record->second.shrink) {
      shrinking.insert(job.id);
      job.nodes = sortedNames(record->second.shrink->target);
    } else if (record->second.report && record->second.report->in_place_resize &&
               !record->second.in_place_failed && !record->second.shrunk_in_place) {
      resizes_in_place.insert(job.id);
    }
  }
  policy::Decision decision;
  try {
    decision = policy::schedule(
        buildSnapshot(round_time_, round_nodes_, as_seen, records, config_, round_partitions_));
  } catch (const std::exception& problem) {
    error(std::string("round skipped, nothing changed: ") + problem.what());
    return 0;
  }
  round_stats_ = decision.stats;
  if (decision.stats.kept_current) {
    error("solver " + decision.stats.solver_status + ": round keeps every current allocation");
  } else if (decision.stats.kept_jobs > 0) {
    error("solver " + decision.stats.solver_status + " in " +
          std::to_string(decision.stats.failed_partitions) + " sub-problem(s): " +
          std::to_string(decision.stats.kept_jobs) + " job(s) keep their current allocation");
  }
  std::vector<SlurmJob> to_plan;
  for (const auto& job : round_jobs_) {
    if (!shrinking.count(job.id)) to_plan.push_back(job);
  }
  for (const auto& job : to_plan) {
    if (!job.adaptive) continue;
    const std::string id = std::to_string(job.id);
    const auto decided = decision.allocations.find(id);
    store_.recordDecision(id, decided == decision.allocations.end()
                                  ? std::nullopt
                                  : std::optional<policy::JobDecision>(decided->second));
  }
  auto planned = planActions(to_plan, decision, round_time_, resizes_in_place, round_problems_);
  // Only a slurmctld that had jobs before its start has a state file that may lag behind them.
  const bool settling =
      restored_jobs_ && round_time_ - settings_.slurmctld_started < kSettleAfterStartS;
  planned = deferWhileSlurmSettles(std::move(planned), round_jobs_, round_nodes_, settling,
                                   round_problems_);
  for (auto& action : planned) {
    round_actions_.push_back(ownAction(std::move(action), decision));
  }
  const double failures_since = round_time_ - kNodeFailureWindowS;
  for (auto& action : planNodeFailureRequeues(round_jobs_, round_nodes_, failures_since)) {
    round_actions_.push_back(ownAction(std::move(action), decision));
  }
  for (const auto& problem : round_problems_) error(problem);
  return round_actions_.size();
}

// Keeps the strings the C view of an action points to.
Service::OwnedAction Service::ownAction(Action action, const policy::Decision& decision) const {
  OwnedAction owned;
  owned.action = std::move(action);
  const Action& a = owned.action;
  if (!a.nodes.empty()) owned.tres_per_node = tresPerNode(a);
  for (const auto& node : a.nodes) owned.node_list += (owned.node_list.empty() ? "" : ",") + node;
  owned.admin_comment = "pollux: " + a.why;
  const auto decided = decision.allocations.find(std::to_string(a.job_id));
  if (decided != decision.allocations.end() && decided->second.batch_size > 0) {
    owned.admin_comment += " batch_size=" + std::to_string(decided->second.batch_size);
  }
  return owned;
}

const pollux_action_t& Service::action(size_t index) {
  OwnedAction& owned = round_actions_.at(index);
  const Action& a = owned.action;
  owned.c = pollux_action_t{a.job_id,
                            cKind(a.kind),
                            static_cast<uint32_t>(a.nodes.size()),
                            owned.tres_per_node.c_str(),
                            owned.node_list.c_str(),
                            owned.admin_comment.c_str()};
  return owned.c;
}

void Service::actionDone(size_t index, int error_code, const std::string& error_text) {
  const Action& a = round_actions_.at(index).action;
  const std::string id = std::to_string(a.job_id);
  metrics_.countAction(toString(a.kind), error_code != 0);
  if (error_code != 0) {
    error("JobId=" + id + " " + toString(a.kind) + " failed: " + error_text + " (wanted: " + a.why + ")");
    store_.recordAction(id, std::string(toString(a.kind)) + " failed: " + error_text, false, false,
                        round_time_);
    return;
  }
  info("JobId=" + id + " " + toString(a.kind) + ": " + a.why);
  const bool placed = a.kind != ActionKind::kHold && !a.nodes.empty();
  const bool restarted = a.kind == ActionKind::kRequeue || a.kind == ActionKind::kShrink;
  store_.recordAction(id, a.why, placed, restarted, round_time_);
  if (a.kind == ActionKind::kShrink) store_.startShrink(id, targetOf(a), round_time_);
}

void Service::endRound() {
  const double duration_ms = std::chrono::duration<double, std::milli>(
                                 std::chrono::steady_clock::now() - round_started_).count();
  int adaptive = 0, running = 0;
  for (const auto& job : round_jobs_) {
    adaptive += job.adaptive.has_value();
    running += job.adaptive && job.state == JobState::kRunning;
  }
  metrics_.recordRound(duration_ms, adaptive, running);
  Json::Value status = buildStatus();
  status["last_round"]["duration_ms"] = duration_ms;
  {
    std::lock_guard<std::mutex> guard(status_mutex_);
    published_status_ = std::move(status);
  }
  saveState();
}

Json::Value Service::status() const {
  std::lock_guard<std::mutex> guard(status_mutex_);
  return published_status_;
}

Json::Value Service::buildStatus() const {
  Json::Value status;
  status["time"] = round_time_;
  status["interval_s"] = config_.interval_s;
  status["rest"] = rest_ ? rest_->url() : "";
  Json::Value& round = status["last_round"];
  round["solver_status"] = round_stats_.solver_status;
  round["solve_ms"] = round_stats_.solve_ms;
  round["kept_current"] = round_stats_.kept_current;
  round["actions"] = static_cast<Json::UInt64>(round_actions_.size());
  round["problems"] = Json::Value(Json::arrayValue);
  for (const auto& problem : round_problems_) round["problems"].append(problem);
  status["nodes"] = Json::Value(Json::arrayValue);
  for (const auto& node : round_nodes_) {
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
  const model::RelativeSpeeds speeds = relativeSpeeds(round_nodes_, config_);
  for (const auto& job : round_jobs_) {
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
  entry["state"] = stateName(job.state);
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
  const report::ReportReply reply = replyFor(known);
  entry["batch_size"] = Json::Int64(reply.batch_size);
  entry["local_bsz"] = reply.local_bsz;
  entry["accum_steps"] = reply.accum_steps;
  entry["lr_scale"] = reply.lr_scale;
  entry["restarts"] = known.restarts;
  entry["status"] = known.status;
  if (reply.shrink_in_place) entry["shrink_in_place"] = true;
  entry["reported"] = known.report.has_value();
  if (known.report) {
    entry["models"] = modelsJson(*known.report, speeds);
    entry["progress"]["examples"] = known.report->progress.examples;
    entry["progress"]["epochs"] = known.report->progress.epochs;
    entry["restart_cost_s"] = known.report->restart_cost_s.value_or(0.0);
  }
  return entry;
}

}  // namespace pollux::service
