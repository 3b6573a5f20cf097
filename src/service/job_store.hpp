// SPDX-License-Identifier: GPL-2.0-or-later
// What sched/pollux knows of each job between rounds: owner, latest goodput report, restarts,
// last decision and status. Shared by the round (one thread) and the REST handlers (a pool).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <json/json.h>

#include "actions.hpp"
#include "job_lifecycle.hpp"
#include "job_parts.hpp"
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
  Lifecycle lifecycle;
  // Kept from the job's submission, before Pollux placed it: its user's --nodelist and --begin.
  std::vector<std::string> user_nodes;
  double user_begin_time = 0;
  std::optional<Refusal> refused;  // the last placement Slurm refused, while it stands
  std::string waiting;             // why it waits (a Slurm Reason), for operators; not saved
  // Every node Slurm showed its current run on, and when that run started; not saved.
  std::set<std::string> run_nodes;
  double run_start = 0;
  // What Slurm showed it running on at the last round, and what it held before Pollux last
  // changed it (nullopt: pending then), so that the policy does not undo a change at once;
  // not saved.
  std::optional<policy::Allocation> running_on;
  std::optional<policy::Allocation> previous;
  // Its part (job_parts.hpp), where it has or wants one this round, and since when it waits
  // for its part to run (not saved) and since when the part's workers are asked to leave.
  std::optional<schema::PartStatus> part;
  std::optional<double> part_growing_since;
  std::optional<PartLeave> part_leave;
};

// How long the nodes of a run that ended are remembered (Slurm keeps finished jobs MinJobAge,
// 300 s by default): adaptive jobs that failed this recently on a node now down are requeued.
inline constexpr double kNodeFailureWindowS = 600;

// A job's lifecycle changed in a way worth a log line.
struct ObservedChange {
  std::string id;
  Transition transition;
  Lifecycle before;
};

enum class JobLookup { kUnknown, kNotAdaptive, kFound };

class JobStore {
 public:
  // Adds jobs Slurm reports (keeping a new pending job's node list and begin time as its
  // user's), refreshes owner and adaptivity, moves each job's lifecycle on by what Slurm
  // shows at `now`, and forgets the jobs Slurm no longer has and those that ended. Returns the
  // changes worth a log line.
  std::vector<ObservedChange> observe(const std::vector<SlurmJob>& jobs, double now);
  // Slurm refused to start the job where Pollux placed it; `circumstances` as of now.
  void recordRefusal(const std::string& id, const Refusal& refusal);
  // Drops the refusals made under other circumstances than `circumstances`.
  void dropStaleRefusals(std::uint64_t circumstances);
  // Sets each job's waiting reason (empty for those not in `waiting`).
  void recordWaiting(const std::map<std::string, std::string>& waiting);
  // A copy of every record, for building a round's snapshot.
  std::map<std::string, JobRecord> records() const;
  // The nodes each run that ended within kNodeFailureWindowS was seen on, by job id. Slurm
  // removes a failed node from a job that does not die with it (kill_on_node_fail=0), so a
  // run that then failed names that node only here.
  std::map<uint32_t, std::set<std::string>> endedRunNodes() const;
  // Since when each of `jobs`, whose run ended or was requeued, has had running parts: `now`
  // for those new among them (not saved). The others are forgotten.
  std::map<uint32_t, double> partsEndingSince(const std::set<uint32_t>& jobs, double now);

  void recordDecision(const std::string& id, const std::optional<policy::JobDecision>& decision);
  // Sets each job's part (none for those not in `parts`), since when it waits for its part to
  // run and since when the part's workers are asked to leave (by job id; none for those not in
  // `growing`, `leaving`).
  void recordParts(const std::map<std::string, schema::PartStatus>& parts,
                   const std::map<uint32_t, double>& growing,
                   const std::map<uint32_t, PartLeave>& leaving);
  // The jobs' parts did not run or join in time: each grows by requeue from now on.
  void refuseLiveGrowth(const std::set<uint32_t>& jobs);
  // Slurm took `action` at `now`: the job's status, last change, restarts and lifecycle follow.
  void recordAction(const Action& action, double now);
  // Slurm refused `action`: the job's status says so.
  void recordFailedAction(const Action& action, const std::string& error_text);

  JobLookup lookup(const std::string& id, uint32_t* owner_uid) const;
  // Stores the report and returns the reply for the job (its current decision).
  schema::ReportReply acceptReport(const schema::GoodputReport& report);

  // Persistent part (owner, report, restarts, last change, status, lifecycle, the user's node
  // list and begin time, a refusal standing, a part leaving) as JSON, and back.
  // restore() throws pollux::InvalidInput on a malformed document and then keeps nothing.
  Json::Value toJson() const;
  void restore(const Json::Value& saved);
  // The persistent part as it will be once Slurm took `actions` at `now`.
  Json::Value toJsonAfter(const std::vector<Action>& actions, double now) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, JobRecord> jobs_;
  struct EndedRun {
    std::set<std::string> nodes;
    double ended = 0;
  };
  std::map<uint32_t, EndedRun> ended_runs_;
  std::map<uint32_t, double> parts_ending_;  // by job: since when its parts are ending
};

// The reply for a job: its decided batch size, or its initial one until a decision has one.
schema::ReportReply replyFor(const JobRecord& record);

}  // namespace pollux::service
