// What sched/pollux knows of each job between rounds: owner, latest goodput report, restarts,
// last decision and status. Shared by the round (one thread) and the REST handlers (a pool).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <json/json.h>

#include "actions.hpp"
#include "common/policy/policy.hpp"
#include "common/schema/goodput_report.hpp"
#include "slurm_view.hpp"

namespace pollux::service {

// A placement Slurm refused to start (its Reason), not to be made again until circumstances
// change (jobs start or end, nodes or reservations change).
struct Refusal {
  std::string reason;          // squeue's Reason, e.g. "QOSMaxGRESPerUser"
  int gpus = 0;                // the size refused
  std::uint64_t circumstances = 0;  // circumstancesOf() when it was refused
};

struct JobRecord {
  uint32_t owner_uid = 0;
  bool adaptive = false;
  std::optional<schema::GoodputReport> report;  // the latest accepted one
  int restarts = 0;                             // restarts Pollux caused
  double last_change_time = 0;                  // when Pollux last placed or resized it
  std::optional<policy::JobDecision> decision;  // what the last round decided
  std::string status;                           // last action or reason, for operators
  std::optional<PendingShrink> shrink;          // until Slurm shows the job on its target
  bool in_place_failed = false;                 // a shrink was not done: requeue from now on
  // Shrunk in place since it last started: Slurm takes no second update of a resized job
  // until it is requeued (22.05 refuses it, 26.05.3 corrupted slurmctld's heap), so its
  // next resize is a requeue.
  bool shrunk_in_place = false;
  // When Pollux last requeued it, until its next run has lasted kRunAfterRequeueS (0: no
  // requeue in flight). A job that ends FAILED before then is requeued once more: its
  // restart met a slurmctld restart (its srun could not reach slurmctld, or Slurm counted
  // the stopped run's end as the job's).
  double requeued_time = 0;
  bool requeue_repeated = false;  // the requeue in flight repeats one that ended so
  // Kept from the job's submission, before Pollux placed it: its user's --nodelist and --begin.
  std::vector<std::string> user_nodes;
  double user_begin_time = 0;
  std::optional<Refusal> refused;  // the last placement Slurm refused, while it stands; not
                                   // saved: after a restart the job is tried again
  std::string waiting;             // why it waits (a Slurm Reason), for operators; not saved
};

// How long a run started after Pollux's requeue must last to end that requeue.
inline constexpr double kRunAfterRequeueS = 30;

// The job ended FAILED with a requeue by Pollux in flight that is not a repeat already: it is
// to be requeued once more (see JobRecord::requeued_time).
bool requeueRepeatDue(const JobRecord& record, const SlurmJob& job);

// kRunAfterRequeueS after Pollux's requeue in flight (not a repeat already), Slurm still shows
// the job RUNNING from a start before it: the run that requeue stopped, restored from state
// slurmctld saved before the requeue and then lost to a restart. Nothing runs; it is to be
// requeued once more.
bool stoppedRunStillShown(const JobRecord& record, const SlurmJob& job, double now);

enum class JobLookup { kUnknown, kNotAdaptive, kFound };

class JobStore {
 public:
  // Adds jobs Slurm reports (keeping a new pending job's node list and begin time as its
  // user's), refreshes owner and adaptivity, drops jobs Slurm no longer has and finished ones
  // (except those with requeueRepeatDue).
  void syncWithSlurm(const std::vector<SlurmJob>& jobs);
  // Slurm refused to start the job where Pollux placed it; `circumstances` as of now.
  void recordRefusal(const std::string& id, const Refusal& refusal);
  // Drops the refusals made under other circumstances than `circumstances`.
  void dropStaleRefusals(std::uint64_t circumstances);
  // Sets each job's waiting reason (empty for those not in `waiting`).
  void recordWaiting(const std::map<std::string, std::string>& waiting);
  // Ends the requeues in flight of jobs whose run since has lasted kRunAfterRequeueS by `now`.
  void endRequeues(const std::vector<SlurmJob>& jobs, double now);
  // A copy of every record, for building a round's snapshot.
  std::map<std::string, JobRecord> records() const;

  void recordDecision(const std::string& id, const std::optional<policy::JobDecision>& decision);
  // `placed`: the job was started or resized now; `restarted`: that cost it a restart.
  void recordAction(const std::string& id, const std::string& status, bool placed,
                    bool restarted, double now);

  // Pollux requeued the job now (a repeat if a requeue of it was already in flight).
  void recordRequeue(const std::string& id, double now);

  void startShrink(const std::string& id, const policy::Allocation& target, double now);
  // `failed`: the job did not shrink in time; later resizes of it go through requeue.
  void endShrink(const std::string& id, bool failed);

  JobLookup lookup(const std::string& id, uint32_t* owner_uid) const;
  // Stores the report and returns the reply for the job (its current decision).
  schema::ReportReply acceptReport(const schema::GoodputReport& report);

  // Persistent part (owner, report, restarts, last change, status, in-place shrink state,
  // requeue in flight, the user's node list and begin time) as JSON, and back.
  // restore() throws pollux::InvalidInput on a malformed document and then keeps nothing.
  Json::Value toJson() const;
  void restore(const Json::Value& saved);

 private:
  mutable std::mutex mutex_;
  std::map<std::string, JobRecord> jobs_;
};

// The reply for a job: its decided batch size, or its initial one until a decision has one.
schema::ReportReply replyFor(const JobRecord& record);

}  // namespace pollux::service
