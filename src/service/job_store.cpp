#include "job_store.hpp"

#include <algorithm>
#include <cmath>

#include "common/invalid_input.hpp"
#include "common/model/efficiency.hpp"
#include "common/schema/json_reader.hpp"
#include "common/schema/snapshot_json.hpp"
#include "site_policy.hpp"

namespace pollux::service {

namespace {

// A requeue by Pollux is in flight and is not a repeat already.
bool repeatableRequeue(const JobRecord& record) {
  return record.requeued_time > 0 && !record.requeue_repeated;
}

// Slurm's start times are whole seconds; an older start is the run the requeue stopped.
bool startedSinceRequeue(const SlurmJob& job, const JobRecord& record) {
  return job.start_time >= std::floor(record.requeued_time);
}

}  // namespace

bool requeueRepeatDue(const JobRecord& record, const SlurmJob& job) {
  return job.state == JobState::kOther && job.failed && repeatableRequeue(record);
}

bool stoppedRunStillShown(const JobRecord& record, const SlurmJob& job, double now) {
  return job.state == JobState::kRunning && repeatableRequeue(record) &&
         !startedSinceRequeue(job, record) && now - record.requeued_time >= kRunAfterRequeueS;
}

void JobStore::syncWithSlurm(const std::vector<SlurmJob>& jobs) {
  std::lock_guard<std::mutex> guard(mutex_);
  std::map<std::string, JobRecord> current;
  for (const auto& job : jobs) {
    const std::string id = std::to_string(job.id);
    const auto known = jobs_.find(id);
    const bool repeat_due = known != jobs_.end() && requeueRepeatDue(known->second, job);
    if (job.state == JobState::kOther && !repeat_due) continue;
    JobRecord& record = current[id];
    if (known != jobs_.end()) {
      record = std::move(known->second);
    } else if (job.state == JobState::kPending) {
      record.user_nodes = job.requested_nodes;
      if (!heldByPollux(job)) record.user_begin_time = job.eligible_time;
    }
    record.owner_uid = job.uid;
    record.adaptive = job.adaptive.has_value();
    if (job.state == JobState::kPending) record.shrunk_in_place = false;  // requeued
  }
  jobs_ = std::move(current);
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

void JobStore::endRequeues(const std::vector<SlurmJob>& jobs, double now) {
  std::lock_guard<std::mutex> guard(mutex_);
  for (const auto& job : jobs) {
    const auto found = jobs_.find(std::to_string(job.id));
    if (found == jobs_.end() || found->second.requeued_time <= 0) continue;
    JobRecord& record = found->second;
    const bool runs_since = job.state == JobState::kRunning && startedSinceRequeue(job, record);
    if (runs_since && now - job.start_time >= kRunAfterRequeueS) {
      record.requeued_time = 0;
      record.requeue_repeated = false;
    }
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

void JobStore::recordAction(const std::string& id, const std::string& status, bool placed,
                            bool restarted, double now) {
  std::lock_guard<std::mutex> guard(mutex_);
  const auto found = jobs_.find(id);
  if (found == jobs_.end()) return;
  found->second.status = status;
  if (placed) found->second.last_change_time = now;
  if (restarted) ++found->second.restarts;
}

void JobStore::recordRequeue(const std::string& id, double now) {
  std::lock_guard<std::mutex> guard(mutex_);
  const auto found = jobs_.find(id);
  if (found == jobs_.end()) return;
  found->second.requeue_repeated = found->second.requeued_time > 0;
  found->second.requeued_time = now;
}

void JobStore::startShrink(const std::string& id, const policy::Allocation& target, double now) {
  std::lock_guard<std::mutex> guard(mutex_);
  const auto found = jobs_.find(id);
  if (found == jobs_.end()) return;
  found->second.shrink = PendingShrink{target, now};
  found->second.shrunk_in_place = true;
}

void JobStore::endShrink(const std::string& id, bool failed) {
  std::lock_guard<std::mutex> guard(mutex_);
  const auto found = jobs_.find(id);
  if (found == jobs_.end()) return;
  found->second.shrink.reset();
  if (failed) found->second.in_place_failed = true;
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
  return replyFor(found->second);
}

schema::ReportReply replyFor(const JobRecord& record) {
  schema::ReportReply reply{0, 0, 0, 1.0, std::nullopt};
  if (record.decision) reply.allocation = record.decision->allocation;
  reply.shrink_in_place = record.shrink.has_value();
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
  Json::Value out(Json::objectValue);
  for (const auto& [id, record] : jobs_) {
    Json::Value& job = out[id];
    job["owner_uid"] = record.owner_uid;
    job["adaptive"] = record.adaptive;
    job["restarts"] = record.restarts;
    job["last_change_time"] = record.last_change_time;
    job["status"] = record.status;
    if (record.shrunk_in_place) job["shrunk_in_place"] = true;
    if (record.in_place_failed) job["in_place_failed"] = true;
    if (record.requeued_time > 0) job["requeued_time"] = record.requeued_time;
    if (record.requeue_repeated) job["requeue_repeated"] = true;
    if (!record.user_nodes.empty()) {
      for (const auto& node : record.user_nodes) job["user_nodes"].append(node);
    }
    if (record.user_begin_time > 0) job["user_begin_time"] = record.user_begin_time;
    if (record.shrink) {
      job["shrink"]["target"] = schema::allocationToJson(record.shrink->target);
      job["shrink"]["requested_time"] = record.shrink->requested_time;
    }
    if (record.report) job["report"] = schema::reportToJson(*record.report);
  }
  return out;
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
    record.shrunk_in_place = job.has("shrunk_in_place") && job["shrunk_in_place"].boolean();
    record.in_place_failed = job.has("in_place_failed") && job["in_place_failed"].boolean();
    if (job.has("requeued_time")) record.requeued_time = job["requeued_time"].nonNegativeNumber();
    record.requeue_repeated = job.has("requeue_repeated") && job["requeue_repeated"].boolean();
    if (job.has("user_nodes")) {
      const schema::JsonField nodes = job["user_nodes"];
      for (Json::ArrayIndex i = 0; i < nodes.arraySize(); ++i) {
        record.user_nodes.push_back(nodes.at(i).string());
      }
    }
    if (job.has("user_begin_time")) {
      record.user_begin_time = job["user_begin_time"].nonNegativeNumber();
    }
    if (job.has("shrink")) {
      record.shrink = PendingShrink{schema::parseAllocation(job["shrink"]["target"]),
                                    job["shrink"]["requested_time"].nonNegativeNumber()};
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
