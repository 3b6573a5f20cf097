// SPDX-License-Identifier: GPL-2.0-or-later
#include "job_store.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "common/invalid_input.hpp"
#include "common/model/efficiency.hpp"
#include "common/schema/json_reader.hpp"
#include "common/schema/snapshot_json.hpp"
#include "site_policy.hpp"

namespace pollux::service {

namespace {

void lifecycleToJson(const Lifecycle& lifecycle, Json::Value& job) {
  job["phase"] = toString(lifecycle.phase);
  if (lifecycle.since > 0) job["phase_since"] = lifecycle.since;
  if (lifecycle.shrink_target) {
    job["shrink_target"] = schema::allocationToJson(*lifecycle.shrink_target);
  }
  if (lifecycle.move_target) job["move_target"] = schema::allocationToJson(*lifecycle.move_target);
  if (lifecycle.shrinks_by_requeue) job["shrinks_by_requeue"] = true;
  if (lifecycle.grows_by_requeue) job["grows_by_requeue"] = true;
}

bool flagged(const schema::JsonField& job, const char* key) {
  return job.has(key) && job[key].boolean();
}

// A lifecycle saved before phases were named: a shrink in flight, a requeue in flight
// (repeated or not), a shrink done since the job started, a shrink given up.
Lifecycle lifecycleFromFlags(const schema::JsonField& job) {
  Lifecycle lifecycle;
  lifecycle.shrinks_by_requeue = flagged(job, "in_place_failed");
  if (job.has("shrink")) {
    lifecycle.phase = Phase::kShrinking;
    lifecycle.shrink_target = schema::parseAllocation(job["shrink"]["target"]);
    lifecycle.since = job["shrink"]["requested_time"].nonNegativeNumber();
  } else if (job.has("requeued_time") && job["requeued_time"].nonNegativeNumber() > 0) {
    lifecycle.phase = flagged(job, "requeue_repeated") ? Phase::kRequeuedAgain : Phase::kRequeued;
    lifecycle.since = job["requeued_time"].nonNegativeNumber();
  } else if (flagged(job, "shrunk_in_place")) {
    lifecycle.phase = Phase::kShrunk;
  }
  return lifecycle;
}

void refusalToJson(const Refusal& refusal, Json::Value& job) {
  job["refused"]["reason"] = refusal.reason;
  job["refused"]["gpus"] = refusal.gpus;
  job["refused"]["circumstances"] = std::to_string(refusal.circumstances);
}

Refusal refusalFromJson(const schema::JsonField& refused) {
  const std::string circumstances = refused["circumstances"].string();
  Refusal refusal{refused["reason"].string(),
                  static_cast<int>(refused["gpus"].integer(0, 1L << 30)), 0};
  const char* end = circumstances.data() + circumstances.size();
  const auto [stop, error] = std::from_chars(circumstances.data(), end, refusal.circumstances);
  if (error != std::errc() || stop != end) {
    throw InvalidInput(refused["circumstances"].path() + ": not a 64-bit decimal number");
  }
  return refusal;
}

Lifecycle lifecycleFromJson(const schema::JsonField& job) {
  if (!job.has("phase")) return lifecycleFromFlags(job);
  Lifecycle lifecycle;
  const std::string name = job["phase"].string();
  const auto phase = phaseNamed(name);
  if (!phase || *phase == Phase::kEnded) {
    throw InvalidInput("jobs: unknown phase \"" + name + "\"");
  }
  lifecycle.phase = *phase;
  if (job.has("phase_since")) lifecycle.since = job["phase_since"].nonNegativeNumber();
  if (job.has("shrink_target")) {
    lifecycle.shrink_target = schema::parseAllocation(job["shrink_target"]);
  }
  if (lifecycle.phase == Phase::kShrinking && !lifecycle.shrink_target) {
    throw InvalidInput("jobs: phase \"shrinking\" without shrink_target");
  }
  if (job.has("move_target")) lifecycle.move_target = schema::parseAllocation(job["move_target"]);
  if (lifecycle.phase == Phase::kMoving && !lifecycle.move_target) {
    throw InvalidInput("jobs: phase \"moving\" without move_target");
  }
  lifecycle.shrinks_by_requeue = flagged(job, "shrinks_by_requeue");
  lifecycle.grows_by_requeue = flagged(job, "grows_by_requeue");
  return lifecycle;
}

// A running job's nodes join those of its run; a new run (a restart) starts afresh.
void noteRunNodes(JobRecord& record, const SlurmJob& job) {
  if (record.run_start != job.start_time) {
    record.run_nodes.clear();
    record.run_start = job.start_time;
  }
  record.run_nodes.insert(job.nodes.begin(), job.nodes.end());
}

// What Slurm taking `action` at `now` changes in the record of its job (or its part's job).
void applyAction(std::map<std::string, JobRecord>& jobs, const Action& action, double now) {
  const auto found = jobs.find(std::to_string(action.owner ? action.owner : action.job_id));
  if (found == jobs.end()) return;
  JobRecord& record = found->second;
  record.status = action.why;
  const bool changes_part = action.owner && action.kind != ActionKind::kHold;
  if (changes_part || (action.kind != ActionKind::kHold && !action.nodes.empty())) {
    record.last_change_time = now;
    record.previous = record.running_on;
  }
  const bool restarts = action.kind == ActionKind::kRequeue ||
                        (action.kind == ActionKind::kShrink && !action.live) ||
                        (action.kind == ActionKind::kCheckpoint &&
                         record.lifecycle.phase != Phase::kCheckpointing);
  if (restarts) ++record.restarts;
  record.lifecycle = afterAction(record.lifecycle, action, now);
}

Json::Value recordToJson(const JobRecord& record) {
  Json::Value job;
  job["owner_uid"] = record.owner_uid;
  job["adaptive"] = record.adaptive;
  job["restarts"] = record.restarts;
  job["last_change_time"] = record.last_change_time;
  job["status"] = record.status;
  lifecycleToJson(record.lifecycle, job);
  if (record.refused) refusalToJson(*record.refused, job);
  if (!record.user_nodes.empty()) {
    for (const auto& node : record.user_nodes) job["user_nodes"].append(node);
  }
  if (record.user_begin_time > 0) job["user_begin_time"] = record.user_begin_time;
  if (record.report) job["report"] = schema::reportToJson(*record.report);
  if (record.part_leave) {
    job["part_leaving_since"] = record.part_leave->since;
    if (record.part_leave->part) job["part_leaving"] = record.part_leave->part;
    for (const auto& node : record.part_leave->nodes) job["part_leaving_nodes"].append(node);
  }
  return job;
}

Json::Value recordsToJson(const std::map<std::string, JobRecord>& jobs) {
  Json::Value out(Json::objectValue);
  for (const auto& [id, record] : jobs) out[id] = recordToJson(record);
  return out;
}

}  // namespace

std::vector<ObservedChange> JobStore::observe(const std::vector<SlurmJob>& jobs, double now) {
  std::lock_guard<std::mutex> guard(mutex_);
  std::map<std::string, JobRecord> current;
  std::vector<ObservedChange> changes;
  for (const auto& job : jobs) {
    const std::string id = std::to_string(job.id);
    const auto known = jobs_.find(id);
    if (known == jobs_.end() && job.state == JobState::kOther) continue;
    JobRecord record;
    if (known != jobs_.end()) {
      record = std::move(known->second);
    } else if (job.state == JobState::kPending) {
      record.user_nodes = job.requested_nodes;
      if (!heldByPollux(job)) record.user_begin_time = job.eligible_time;
    }
    const Observed observed = service::observe(record.lifecycle, job, now);
    if (job.state == JobState::kRunning) noteRunNodes(record, job);
    record.running_on =
        job.state == JobState::kRunning ? currentAllocation(job) : std::nullopt;
    if (observed.next.phase == Phase::kEnded) {
      if (!record.run_nodes.empty()) ended_runs_[job.id] = {std::move(record.run_nodes), now};
      continue;
    }
    if (observed.transition != Transition::kNone) {
      changes.push_back({id, observed.transition, record.lifecycle});
    }
    record.lifecycle = observed.next;
    record.owner_uid = job.uid;
    record.adaptive = job.adaptive.has_value();
    current[id] = std::move(record);
  }
  jobs_ = std::move(current);
  for (auto run = ended_runs_.begin(); run != ended_runs_.end();) {
    run = now - run->second.ended > kNodeFailureWindowS ? ended_runs_.erase(run) : std::next(run);
  }
  return changes;
}

std::map<uint32_t, std::set<std::string>> JobStore::endedRunNodes() const {
  std::lock_guard<std::mutex> guard(mutex_);
  std::map<uint32_t, std::set<std::string>> nodes;
  for (const auto& [id, run] : ended_runs_) nodes[id] = run.nodes;
  return nodes;
}

std::map<uint32_t, double> JobStore::partsEndingSince(const std::set<uint32_t>& jobs, double now) {
  std::lock_guard<std::mutex> guard(mutex_);
  std::map<uint32_t, double> since;
  for (const uint32_t job : jobs) {
    const auto known = parts_ending_.find(job);
    since[job] = known == parts_ending_.end() ? now : known->second;
  }
  parts_ending_ = since;
  return since;
}

void JobStore::recordRefusal(const std::string& id, const Refusal& refusal) {
  std::lock_guard<std::mutex> guard(mutex_);
  const auto found = jobs_.find(id);
  if (found != jobs_.end()) found->second.refused = refusal;
}

void JobStore::dropStaleRefusals(std::uint64_t circumstances) {
  std::lock_guard<std::mutex> guard(mutex_);
  for (auto& [id, record] : jobs_) {
    if (record.refused && record.refused->circumstances != circumstances) record.refused.reset();
  }
}

void JobStore::recordWaiting(const std::map<std::string, std::string>& waiting) {
  std::lock_guard<std::mutex> guard(mutex_);
  for (auto& [id, record] : jobs_) {
    const auto reason = waiting.find(id);
    record.waiting = reason == waiting.end() ? "" : reason->second;
  }
}

std::map<std::string, JobRecord> JobStore::records() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return jobs_;
}

void JobStore::recordDecision(const std::string& id,
                              const std::optional<policy::JobDecision>& decision) {
  std::lock_guard<std::mutex> guard(mutex_);
  const auto found = jobs_.find(id);
  if (found != jobs_.end()) found->second.decision = decision;
}

void JobStore::recordParts(const std::map<std::string, schema::PartStatus>& parts,
                           const std::map<uint32_t, double>& growing,
                           const std::map<uint32_t, PartLeave>& leaving) {
  std::lock_guard<std::mutex> guard(mutex_);
  const auto since = [](const auto& values, const std::string& id) {
    const auto found = values.find(static_cast<uint32_t>(std::stoul(id)));
    return found == values.end() ? std::nullopt : std::optional(found->second);
  };
  for (auto& [id, record] : jobs_) {
    const auto part = parts.find(id);
    record.part = part == parts.end() ? std::nullopt : std::optional(part->second);
    record.part_growing_since = since(growing, id);
    record.part_leave = since(leaving, id);
  }
}

void JobStore::refuseLiveGrowth(const std::set<uint32_t>& jobs) {
  std::lock_guard<std::mutex> guard(mutex_);
  for (const uint32_t id : jobs) {
    const auto found = jobs_.find(std::to_string(id));
    if (found != jobs_.end()) found->second.lifecycle.grows_by_requeue = true;
  }
}

void JobStore::recordAction(const Action& action, double now) {
  std::lock_guard<std::mutex> guard(mutex_);
  applyAction(jobs_, action, now);
}

void JobStore::recordFailedAction(const Action& action, const std::string& error_text) {
  std::lock_guard<std::mutex> guard(mutex_);
  const auto found = jobs_.find(std::to_string(action.owner ? action.owner : action.job_id));
  if (found != jobs_.end()) {
    found->second.status = std::string(toString(action.kind)) + " failed: " + error_text;
  }
}

JobLookup JobStore::lookup(const std::string& id, uint32_t* owner_uid) const {
  std::lock_guard<std::mutex> guard(mutex_);
  const auto found = jobs_.find(id);
  if (found == jobs_.end()) return JobLookup::kUnknown;
  if (owner_uid) *owner_uid = found->second.owner_uid;
  return found->second.adaptive ? JobLookup::kFound : JobLookup::kNotAdaptive;
}

schema::ReportReply JobStore::acceptReport(const schema::GoodputReport& report) {
  std::lock_guard<std::mutex> guard(mutex_);
  const auto found = jobs_.find(report.job_id);
  if (found == jobs_.end()) {  // ended since the handler looked it up: answer, keep nothing
    JobRecord gone;
    gone.report = report;
    return replyFor(gone);
  }
  found->second.report = report;
  const Phase before = found->second.lifecycle.phase;
  found->second.lifecycle = afterReport(found->second.lifecycle, report.training_finished);
  // A report changes the phase only into finishing, or out of it into running.
  if (found->second.lifecycle.phase != before) {
    found->second.status = found->second.lifecycle.phase == Phase::kFinishing
                               ? "training finished: left as it is until it ends"
                               : "training again after its last training finished";
  }
  return replyFor(found->second);
}

schema::ReportReply replyFor(const JobRecord& record) {
  schema::ReportReply reply{0, 0, 0, 1.0, std::nullopt};
  if (record.decision) reply.allocation = record.decision->allocation;
  reply.shrink_in_place = record.lifecycle.phase == Phase::kShrinking;
  reply.part = record.part;
  if (!record.report) return reply;
  const schema::GoodputReport& report = *record.report;
  if (record.decision && record.decision->batch_size > 0) {
    reply.batch_size = record.decision->batch_size;
    reply.local_bsz = record.decision->local_bsz;
    reply.accum_steps = record.decision->accum_steps;
  } else {
    const int replicas = std::max(1, report.placement.num_replicas);
    reply.batch_size = report.limits.init_batch_size;
    reply.local_bsz = std::clamp(static_cast<int>(std::ceil(double(reply.batch_size) / replicas)),
                                 report.limits.min_local_bsz, report.limits.max_local_bsz);
  }
  reply.lr_scale = model::lrScale(model::LrScaling::kAdaScale, report.grad,
                                  double(report.limits.init_batch_size), double(reply.batch_size));
  return reply;
}

Json::Value JobStore::toJson() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return recordsToJson(jobs_);
}

Json::Value JobStore::toJsonAfter(const std::vector<Action>& actions, double now) const {
  std::map<std::string, JobRecord> jobs;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    jobs = jobs_;
  }
  for (const auto& action : actions) applyAction(jobs, action, now);
  return recordsToJson(jobs);
}

void JobStore::restore(const Json::Value& saved) {
  std::map<std::string, JobRecord> restored;
  const schema::JsonField root(saved, "jobs");
  for (const auto& id : root.memberNames()) {
    const schema::JsonField job = root.member(id);
    JobRecord record;
    record.owner_uid = static_cast<uint32_t>(job["owner_uid"].integer(0, 0xFFFFFFFFL));
    record.adaptive = job["adaptive"].boolean();
    record.restarts = static_cast<int>(job["restarts"].integer(0, 1L << 30));
    record.last_change_time = job["last_change_time"].nonNegativeNumber();
    if (job.has("status") && !saved[id]["status"].asString().empty()) {
      record.status = job["status"].string();
    }
    record.lifecycle = lifecycleFromJson(job);
    if (job.has("refused")) record.refused = refusalFromJson(job["refused"]);
    if (job.has("user_nodes")) {
      const schema::JsonField nodes = job["user_nodes"];
      for (Json::ArrayIndex i = 0; i < nodes.arraySize(); ++i) {
        record.user_nodes.push_back(nodes.at(i).string());
      }
    }
    if (job.has("user_begin_time")) {
      record.user_begin_time = job["user_begin_time"].nonNegativeNumber();
    }
    if (job.has("part_leaving_since")) {
      PartLeave leave;
      leave.since = job["part_leaving_since"].nonNegativeNumber();
      if (job.has("part_leaving")) {
        leave.part = static_cast<uint32_t>(job["part_leaving"].integer(1, UINT32_MAX));
      }
      if (job.has("part_leaving_nodes")) {
        const schema::JsonField nodes = job["part_leaving_nodes"];
        for (Json::ArrayIndex i = 0; i < nodes.arraySize(); ++i) {
          leave.nodes.push_back(nodes.at(i).string());
        }
      }
      record.part_leave = leave;
    }
    if (job.has("report")) {
      Json::StreamWriterBuilder writer;
      record.report = schema::parseGoodputReport(Json::writeString(writer, saved[id]["report"]));
    }
    restored[id] = std::move(record);
  }
  std::lock_guard<std::mutex> guard(mutex_);
  jobs_ = std::move(restored);
}

}  // namespace pollux::service
