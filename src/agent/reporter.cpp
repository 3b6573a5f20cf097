// SPDX-License-Identifier: GPL-2.0-or-later
#include "reporter.hpp"

#include <algorithm>
#include <chrono>
#include <set>
#include <sstream>

#include <json/json.h>

#include "child_process.hpp"
#include "munge/munge_credential.hpp"
#include "common/invalid_input.hpp"
#include "common/slurm_text/node_list.hpp"
#include "log.hpp"
#include "common/schema/json_reader.hpp"
#include "client/status_request.hpp"

namespace pollux::agent {
namespace {

using Clock = std::chrono::steady_clock;

std::chrono::duration<double> seconds(double value) { return std::chrono::duration<double>(value); }

std::string compactJson(const Json::Value& value) {
  Json::StreamWriterBuilder builder;
  builder["indentation"] = "";
  return Json::writeString(builder, value);
}

// The error message of a refused request, or its status.
std::string refusal(const client::HttpResponse& response) {
  std::string text = "HTTP " + std::to_string(response.status);
  try {
    const Json::Value document = schema::JsonField::parseDocument(response.body);
    if (document.isObject() && document["error"].isString()) text += ": " + document["error"].asString();
  } catch (const InvalidInput&) {
  }
  return text;
}

}  // namespace

Reporter::Reporter(ReporterSettings settings, StepEnvironment step, JobState& state,
                   Notify notify, SaveState save)
    : settings_(std::move(settings)), step_(std::move(step)), state_(state),
      notify_(std::move(notify)), save_(std::move(save)), client_(10, settings_.ca_file),
      backoff_(1, 60, static_cast<unsigned>(Clock::now().time_since_epoch().count())) {}

Reporter::~Reporter() { stop(); }

void Reporter::stop() {
  {
    std::lock_guard<std::mutex> guard(state_.mutex);
    state_.stopping = true;
  }
  state_.wake_reporter.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Reporter::start() { thread_ = std::thread(&Reporter::run, this); }

bool Reporter::reportTrainingFinished(double timeout_s) {
  stop();
  if (!state_.leadsNow()) return false;
  client::HttpClient quick(timeout_s, settings_.ca_file);
  try {
    if (!postReport(quick, true)) return false;
    logLine("told sched/pollux that training finished: the job is left as it is until it ends");
    return true;
  } catch (const std::exception& error) {
    logLine("cannot tell sched/pollux that training finished: " + std::string(error.what()));
    return false;
  }
}

bool Reporter::learnGpuType(double timeout_s) {
  client::HttpClient quick(timeout_s, settings_.ca_file);
  try {
    return readStatus(quick);
  } catch (const std::exception& error) {
    logLine("cannot ask sched/pollux for the job's GPU type yet: " + std::string(error.what()));
    return false;
  }
}

void Reporter::run() {
  // Early reports (a new placement or batch measured) wait at least this long after the last.
  const double min_spacing_s = std::min(settings_.interval_s, 2.0);
  double wait_s = 0;
  std::unique_lock<std::mutex> lock(state_.mutex);
  while (!state_.stopping) {
    const auto start = Clock::now();
    state_.wake_reporter.wait_until(lock, start + seconds(std::min(wait_s, min_spacing_s)),
                                    [&] { return state_.stopping; });
    awaitReport(lock, start + std::chrono::duration_cast<Clock::duration>(seconds(wait_s)),
                min_spacing_s);
    if (state_.stopping) break;
    state_.report_now = false;
    lock.unlock();
    const bool answered = exchange();
    lock.lock();
    if (answered) backoff_.reset();
    if (!answered) {
      wait_s = backoff_.nextDelay();
    } else {
      wait_s = part_in_flight_ ? min_spacing_s : settings_.interval_s;
    }
  }
}

void Reporter::awaitReport(std::unique_lock<std::mutex>& lock,
                           std::chrono::steady_clock::time_point due, double tick_s) {
  const auto woken = [&] { return state_.stopping || state_.report_now; };
  const auto holds_parts = [&] {
    return state_.leads &&
           std::any_of(state_.live_joins.begin(), state_.live_joins.end(),
                       [](const LiveJoin& join) { return join.done && !join.left; });
  };
  while (!woken() && Clock::now() < due) {
    if (!holds_parts()) {
      state_.wake_reporter.wait_until(lock, due, woken);
      return;
    }
    const auto tick = std::min(due, Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                       seconds(tick_s)));
    if (state_.wake_reporter.wait_until(lock, tick, woken) || Clock::now() >= due) return;
    lock.unlock();
    try {
      readStatus(client_);
    } catch (const std::exception&) {
      // The next report says that the plugin is unreachable, and retries.
    }
    lock.lock();
  }
}

bool Reporter::exchange() {
  try {
    return state_.leadsNow() ? postReport(client_) : readStatus(client_);
  } catch (const client::TransportError& error) {
    logLine("sched/pollux unreachable (" + std::string(error.what()) + "), retry " +
            std::to_string(backoff_.failures() + 1) + "; training goes on with the last decision");
  } catch (const auth::CredentialError& error) {
    logLine("cannot get a MUNGE credential: " + std::string(error.what()));
  } catch (const std::exception& error) {
    logLine("report failed: " + std::string(error.what()));
  }
  return false;
}

bool Reporter::postReport(client::HttpClient& client, bool training_finished) {
  std::optional<schema::GoodputReport> report;
  {
    std::lock_guard<std::mutex> guard(state_.mutex);
    if (state_.trainer_said_hello) {
      report = state_.measurements.buildReport(
          step_.trainingJob(), state_.gpu_type.empty() ? "unknown" : state_.gpu_type,
          state_.placement);
    }
    if (report) report->elastic = state_.elastic;
  }
  if (!report) return !training_finished && readStatus(client);  // no hello from the trainer
  report->in_place_resize = step_.launched;
  report->training_finished = training_finished;
  const std::string body = compactJson(schema::reportToJson(*report));
  const std::string job = step_.trainingJob();
  const std::string credential =
      auth::encodeCredential(auth::reportPayload(job, body), settings_.munge_socket);
  const client::HttpResponse response =
      client.post(settings_.rest_url + "/v1/jobs/" + job + "/report", body,
                  {"Content-Type: application/json", "X-Munge-Cred: " + credential});
  if (response.status != 200) {
    logLine("report refused: " + refusal(response));
    return false;
  }
  // A finished trainer takes no decision any more.
  if (!training_finished) applyReply(schema::parseReportReply(response.body));
  ++accepted_;
  save_();
  if (settings_.verbose)
    logLine("report accepted (" + std::to_string(report->perf_params.size()) + " GPU type(s) fitted)");
  return true;
}

bool Reporter::readStatus(client::HttpClient& client) {
  const client::HttpResponse response = client::getStatus(
      client, settings_.rest_url, "/v1/jobs/" + step_.trainingJob(), settings_.munge_socket);
  if (response.status != 200) {
    logLine("job status refused: " + refusal(response));
    return false;
  }
  try {
    applyReply(schema::parseReportReply(response.body));
  } catch (const InvalidInput&) {
    // The plugin has no decision for the job yet.
  }
  return true;
}

void Reporter::applyReply(const schema::ReportReply& reply) {
  bool changed = false;
  {
    std::lock_guard<std::mutex> guard(state_.mutex);
    if (reply.allocation && reply.allocation->nodes.count(step_.node_name) &&
        state_.gpu_type != reply.allocation->gpu_type && !settings_.fixed_gpu_type) {
      state_.gpu_type = reply.allocation->gpu_type;
      logLine("running on GPU type " + state_.gpu_type);
    }
    // A reply without an allocation (the job between two placements) is no decision: the
    // trainer keeps its own. One for other GPUs than the trainer runs on (a resize under way,
    // or workers lost on a node the job keeps) gives way to the best batch for the workers it
    // has, by the job's own fit.
    std::optional<Decision> next;
    bool chosen_here = false;
    const int replicas = state_.placement.num_replicas;
    const bool allocated = reply.allocation.has_value();
    if (allocated && reply.allocation->totalGpus() == replicas) {
      if (reply.local_bsz > 0)
        next = Decision{reply.batch_size, reply.local_bsz, reply.accum_steps, reply.lr_scale};
    } else if (allocated && state_.leads) {  // rank 0's agent: the trainer takes rank 0's decision
      next = state_.measurements.bestDecision(state_.gpu_type, state_.placement);
      chosen_here = next.has_value();
      if (chosen_here && !decided_here_) {
        logLine("the trainer has " + std::to_string(replicas) +
                " worker(s), the plugin's decision is for " +
                std::to_string(reply.allocation->totalGpus()) + " GPU(s): batch " +
                std::to_string(next->batch_size) + " chosen here for the workers");
      }
    }
    decided_here_ = chosen_here;
    if (next) {
      changed = !state_.decision || !sameDecision(*state_.decision, *next);
      state_.decision = next;
    }
  }
  if (startLiveShrink(reply)) changed = true;
  if (startLiveJoin(reply)) changed = true;
  if (startPartLeave(reply)) changed = true;
  {
    std::lock_guard<std::mutex> guard(state_.mutex);
    part_in_flight_ = state_.leads && partInFlight(reply.part, state_.live_joins);
  }
  if (changed) notify_();
}

bool Reporter::startLiveShrink(const schema::ReportReply& reply) {
  model::Placement placement;
  {
    std::lock_guard<std::mutex> guard(state_.mutex);
    const bool shrunk_before =
        state_.live_shrink && (!state_.live_shrink->part || !state_.live_shrink->done);
    if (!reply.shrink_in_place || !reply.allocation || !state_.elastic || shrunk_before ||
        !state_.leads || !step_.launched) {
      return false;
    }
    placement = state_.placement;
  }
  const auto nodes = hostnames(step_.node_list);
  if (!nodes) return false;
  std::set<std::string> decided;
  for (const auto& [node, gpus] : reply.allocation->nodes) decided.insert(node);
  const int per_node = placement.num_replicas / std::max(placement.num_nodes, 1);
  LiveShrink shrink = liveShrinkOf(*nodes, per_node, decided, step_.trainingJob());
  if (shrink.leavers == 0) return false;
  std::lock_guard<std::mutex> guard(state_.mutex);
  state_.live_shrink = std::move(shrink);
  return true;
}

// A part of the job runs: the trainer is asked to admit its workers (the launcher starts them
// there) at an agreeing step, once for each part, and once the part before it has joined.
// The part this agent runs in has no workers to admit: its step started the training.
bool Reporter::startLiveJoin(const schema::ReportReply& reply) {
  if (!reply.part || reply.part->state != schema::PartStatus::State::kRunning) return false;
  if (std::to_string(reply.part->job_id) == step_.job_id) return false;
  const auto joins = [&] {  // called with state_.mutex held
    return state_.elastic && state_.leads && step_.launched &&
           mayJoin(state_.live_joins, reply.part->job_id);
  };
  {
    std::lock_guard<std::mutex> guard(state_.mutex);
    if (!joins()) return false;
  }
  const auto step_nodes = hostnames(step_.node_list);  // outside the lock: runs scontrol
  std::lock_guard<std::mutex> guard(state_.mutex);
  if (!joins()) return false;
  const int new_nodes =
      nodesNewToJob(reply.part->nodes, step_nodes, state_.live_joins, state_.step_nodes_left);
  LiveJoin join = joinOf(reply.part->job_id, reply.part->nodes, new_nodes, state_.placement,
                         reply.part->gpus_per_node);
  join.gpu_type = reply.part->gpu_type;
  join.seen_running = std::chrono::steady_clock::now();
  state_.live_joins.push_back(join);
  logLine("job part " + std::to_string(join.part) + " runs: " + std::to_string(join.joiners) +
          " worker(s) to join live");
  return true;
}

// The job shrinks off one of its parts: the workers that joined from it leave at an agreeing
// step, then the agent cancels the part (see Agent::shrinkJobWhenDue). A lead that took over
// from another knows no joins: the part's nodes tell it how many leave.
bool Reporter::startPartLeave(const schema::ReportReply& reply) {
  if (!reply.part || reply.part->state != schema::PartStatus::State::kLeaving) return false;
  std::lock_guard<std::mutex> guard(state_.mutex);
  const bool leaving_now = state_.live_shrink && !state_.live_shrink->done;
  if (!state_.leads || leaving_now) return false;
  const model::Placement& placement = state_.placement;
  const schema::PartStatus& part = *reply.part;
  const int per_node = part.gpus_per_node > 0
                           ? part.gpus_per_node
                           : placement.num_replicas / std::max(placement.num_nodes, 1);
  if (!part.leaving_nodes.empty()) return startPartNodesLeave(part, per_node);
  LiveShrink leave = partLeaveOf(state_.live_joins, part.job_id, placement.num_replicas,
                                 static_cast<int>(part.nodes.size()) * per_node);
  if (leave.leavers == 0) return false;
  logLine("the job shrinks off its part " + std::to_string(leave.part) + ": " +
          std::to_string(leave.leavers) + " worker(s) leave live");
  state_.live_shrink = std::move(leave);
  return true;
}

// The part's workers on some of its nodes leave; the agent then shrinks the part to the
// others. Once per part and nodes: the plugin asks until Slurm shows the part shrunk.
bool Reporter::startPartNodesLeave(const schema::PartStatus& part, int per_node) {
  const auto& last = state_.live_shrink;
  if (last && last->part == part.job_id && last->nodes == part.leaving_nodes) return false;
  std::vector<std::string> kept;
  for (const auto& node : part.nodes) {
    const auto& leaving = part.leaving_nodes;
    if (std::find(leaving.begin(), leaving.end(), node) == leaving.end()) kept.push_back(node);
  }
  LiveShrink leave = partNodesLeaveOf(state_.live_joins, part.job_id, part.leaving_nodes, kept,
                                      per_node, state_.placement.num_replicas);
  if (leave.leavers == 0) return false;
  logLine("the job's part " + std::to_string(leave.part) + " shrinks to " + commaJoined(kept) +
          ": " + std::to_string(leave.leavers) + " worker(s) leave live");
  state_.live_shrink = std::move(leave);
  return true;
}

}  // namespace pollux::agent
