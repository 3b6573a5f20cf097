// SPDX-License-Identifier: GPL-2.0-or-later
#include "round_planner.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <set>

#include "common/policy/configurations.hpp"
#include "common/slurm_text/node_list.hpp"
#include "job_parts.hpp"
#include "site_policy.hpp"
#include "snapshot_builder.hpp"

namespace pollux::service {

namespace {

std::vector<std::string> nodeNames(const policy::Allocation& allocation) {
  std::vector<std::string> names;
  for (const auto& [node, gpus] : allocation.nodes) names.push_back(node);
  return names;
}

// The job as it will be in a moment, on the target of its shrink or move: its nodes and the
// GPUs on each (a move may change them).
void seeOnTarget(SlurmJob& job, const policy::Allocation& target) {
  job.nodes = nodeNames(target);
  job.num_nodes = static_cast<int>(job.nodes.size());
  const int per_node = policy::uniformPerNode(target);
  if (job.gpus_per_node && per_node > 0) job.gpus_per_node->count = per_node;
}

// One log line for each lifecycle change worth one.
void logChanges(const std::vector<ObservedChange>& changes, double now, const Log& log) {
  for (const auto& change : changes) {
    const std::string job = "JobId=" + change.id;
    const int after_s = static_cast<int>(now - change.before.since);
    switch (change.transition) {
      case Transition::kNone: break;
      case Transition::kShrinkDone:
        log(LogLevel::kInfo, job + " shrunk in place within " + std::to_string(after_s) +
                                 " s of the request");
        break;
      case Transition::kShrinkTimedOut:
        log(LogLevel::kError,
            job + " did not shrink in place within " +
                std::to_string(static_cast<int>(kShrinkTimeoutS)) +
                " s (is its script running pollux-agent --launch?); resized by requeue from now on");
        break;
      case Transition::kMoveDone:
        log(LogLevel::kInfo, job + " moved live within " + std::to_string(after_s) +
                                 " s: its old parts have left");
        break;
      case Transition::kMoveTimedOut:
        log(LogLevel::kError, job + " did not move live within " +
                                  std::to_string(static_cast<int>(kMoveTimeoutS)) +
                                  " s; decided again");
        break;
      case Transition::kCheckpointDone:
        log(LogLevel::kInfo, job + " checkpointed in its parts within " + std::to_string(after_s) +
                                 " s: no part of it runs; placed anew");
        break;
    }
  }
}

// One log line when a job's part's workers are first asked to leave, and one when a part
// shrunk to some of its nodes is done (Slurm shows it without them); a part that ends is
// logged by its cancel.
void logPartLeaves(const PartRound& round, const std::map<uint32_t, JobParts>& parts,
                   const Log& log) {
  for (const auto& [job_id, leave] : round.leaving) {
    if (round.leaving_since.count(job_id)) continue;
    const auto mine = parts.find(job_id);
    const RunningPart* part = mine == parts.end() ? nullptr : mine->second.leaving(leave);
    if (!part) continue;
    const std::string leaving = commaJoined(leave.nodes.empty() ? part->nodes : leave.nodes);
    log(LogLevel::kInfo,
        "JobId=" + std::to_string(job_id) + " live shrink: its part JobId=" +
            std::to_string(part->id) + "'s workers on " + leaving + " leave" +
            (leave.nodes.empty() ? ", then the part ends"
                                 : ", then the part is shrunk to its other nodes"));
  }
  for (const auto& [job_id, asked] : round.leaving_since) {
    if (asked.nodes.empty() || round.leaving.count(job_id)) continue;
    const auto mine = parts.find(job_id);
    const RunningPart* part = mine == parts.end() ? nullptr : mine->second.leaving(asked);
    const auto holds = [&](const std::string& node) {
      return part && std::find(part->nodes.begin(), part->nodes.end(), node) != part->nodes.end();
    };
    if (!part || std::any_of(asked.nodes.begin(), asked.nodes.end(), holds)) continue;  // cancelled
    log(LogLevel::kInfo, "JobId=" + std::to_string(job_id) + " shrunk live within " +
                             std::to_string(static_cast<int>(round.now - asked.since)) +
                             " s: its part JobId=" + std::to_string(part->id) + " now holds " +
                             commaJoined(part->nodes));
  }
}

// A job placed on nodes runs its --ntasks-per-node tasks (one pollux-agent if not given) on
// each; with --ntasks-per-gpu Slurm counts its tasks from the GPUs itself.
void setTaskCounts(PlannedAction& planned, const ResourceRequest& request) {
  const Action& a = planned.action;
  const bool placing = a.kind == ActionKind::kStart || a.kind == ActionKind::kRequeue;
  if (!placing || a.nodes.empty() || request.ntasks_per_gpu > 0) return;
  planned.num_tasks = static_cast<int>(a.nodes.size()) * std::max(1, request.ntasks_per_node);
  planned.min_cpus = planned.num_tasks * std::max(1, request.cpus_per_task);
}

// Each adaptive job's treatment this round, by its lifecycle and what Slurm shows.
std::map<uint32_t, Treatment> treatmentsOf(const std::vector<SlurmJob>& jobs,
                                           const std::map<std::string, JobRecord>& records,
                                           const RoundContext& context) {
  std::map<uint32_t, Treatment> treatments;
  for (const auto& job : jobs) {
    const auto record = records.find(std::to_string(job.id));
    if (!job.adaptive || record == records.end()) continue;
    treatments[job.id] = treatmentOf(record->second.lifecycle, job, context);
  }
  return treatments;
}

Treatment treatmentIn(const std::map<uint32_t, Treatment>& treatments, uint32_t id) {
  const auto found = treatments.find(id);
  return found == treatments.end() ? Treatment::kDecide : found->second;
}

RoundContext contextOf(const Round& round, bool settling) {
  RoundContext context{round.now, settling, {}};
  for (const auto& node : round.nodes) {
    if (!node.registered) context.unregistered_nodes.insert(node.name);
  }
  return context;
}

// `actions` without those forbidden now: a requeue or shrink of a job whose treatment forbids
// it, and any start while slurmctld settles (a node may still retry its report that a run
// ended, which on 22.05 leaves a job started there meanwhile unable to use its GPUs). Each
// gets a line in `problems` and waits for a later round.
std::vector<Action> withoutActionsForbidden(std::vector<Action> actions,
                                            const std::map<uint32_t, Treatment>& treatments,
                                            bool settling, std::vector<std::string>& problems) {
  const std::string settle_wait = " waits until slurmctld has settled after its start";
  std::vector<Action> kept;
  for (auto& action : actions) {
    const bool stops_steps =
        action.kind == ActionKind::kRequeue || action.kind == ActionKind::kShrink;
    const std::string job = "JobId=" + std::to_string(action.job_id) + ": ";
    if (stops_steps && treatmentIn(treatments, action.job_id) == Treatment::kDecideNoStop) {
      const std::string wait =
          settling ? settle_wait : " waits until its nodes register with slurmctld";
      problems.push_back(job + toString(action.kind) + wait);
      continue;
    }
    if (settling && action.kind == ActionKind::kStart) {
      problems.push_back(job + toString(action.kind) + settle_wait);
      continue;
    }
    kept.push_back(std::move(action));
  }
  return kept;
}

// The requeues of jobs Pollux's requeue did not restart, each without nodes (placed again).
std::vector<Action> requeuesAgain(const std::vector<SlurmJob>& jobs,
                                  const std::map<uint32_t, Treatment>& treatments) {
  std::vector<Action> actions;
  for (const auto& job : jobs) {
    if (treatmentIn(treatments, job.id) != Treatment::kRequeueAgain) continue;
    Action requeue;
    requeue.job_id = job.id;
    requeue.kind = ActionKind::kRequeue;
    requeue.why = whyRequeueAgain(job);
    actions.push_back(requeue);
  }
  return actions;
}

// What Slurm's jobs, nodes and reservations are now, as one number: a refused placement is
// tried again once it changes (a job started or ended, a node or a reservation changed).
std::uint64_t circumstancesOf(const Round& round) {
  std::string text;
  for (const auto& job : round.jobs) {
    if (job.state != JobState::kRunning) continue;
    text += std::to_string(job.id) + ":";
    for (const auto& node : job.nodes) text += node + ",";
  }
  for (const auto& node : round.nodes) text += node.name + (node.usable ? "+" : "-");
  for (const auto& reservation : round.reservations) {
    text += reservation.name + "@" + std::to_string(reservation.start_time);
  }
  return std::hash<std::string>{}(text);
}

// Pending adaptive jobs Pollux placed that Slurm refuses to start there (their Reason; not
// while their last run still releases its nodes): each refusal is recorded, so the job is taken back (held again, its GPUs free) and not placed so
// again until circumstances change.
// `records` is the store's copy, kept up to date with the refusals recorded.
void recordRefusals(JobStore& store, std::map<std::string, JobRecord>& records,
                    const Round& round, std::uint64_t circumstances, const Log& log) {
  for (const auto& job : round.jobs) {
    const auto record = records.find(std::to_string(job.id));
    if (!job.adaptive || job.state != JobState::kPending || record == records.end() ||
        record->second.last_change_time <= 0 || heldByPollux(job) || job.completing ||
        job.requested_nodes.empty() || !refusesPlacement(job.state_reason) ||
        record->second.refused) {
      continue;
    }
    const int gpus = job.gpus_per_node ? job.gpus_per_node->count *
                                             static_cast<int>(job.requested_nodes.size())
                                       : 0;
    const Refusal refusal{job.state_reason, gpus, circumstances};
    store.recordRefusal(record->first, refusal);
    record->second.refused = refusal;
    log(LogLevel::kInfo, "JobId=" + record->first + " refused by Slurm where placed (Reason=" +
                             job.state_reason + ", " + std::to_string(gpus) +
                             " GPUs): taken back, not placed so again until jobs, nodes or "
                             "reservations change");
  }
}

// Pending jobs the decision left without GPUs because a budget they count against is used up
// (a QOS or association limit on GPUs, CPUs, memory or nodes): each with the Reason Slurm
// would give it.
void noteBudgetsUsedUp(const policy::Snapshot& snapshot, const policy::Decision& decision,
                       std::map<std::string, std::string>& waiting) {
  std::map<std::string, std::int64_t> taken;
  for (const auto& job : snapshot.jobs) {
    const auto decided = decision.allocations.find(job.id);
    if (decided == decision.allocations.end()) continue;
    const policy::Allocation& allocation = decided->second.allocation;
    for (const auto& use : job.budgets) {
      taken[use.name] += use.unitsFor(allocation.totalGpus(), int(allocation.nodes.size()));
    }
  }
  for (const auto& job : snapshot.jobs) {
    if (job.current || !job.adaptive || decision.allocations.count(job.id)) continue;
    for (const auto& use : job.budgets) {
      if (taken[use.name] + use.unitsFor(job.min_gpus, 1) > snapshot.budgets.at(use.name)) {
        waiting[job.id] = SiteLimits::reasonOf(use.name);
        break;
      }
    }
  }
}

// The time limit (minutes) of a requeued job's next run: what its --time has left, plus
// the restart; 0 where it has none.
int timeLimitAfterRequeue(const SlurmJob& job, const JobRecord* record, double now) {
  if (job.time_limit_min <= 0 || job.state != JobState::kRunning) return 0;
  const double restart_s =
      record && record->report ? record->report->restart_cost_s.value_or(0.0) : 0.0;
  const double left_s = job.time_limit_min * 60.0 - (now - job.start_time) + restart_s;
  return std::max(1, static_cast<int>(std::ceil(left_s / 60.0)));
}

// Jobs whose workers can join them live (their launcher and trainer say so, or the job put
// its GPUs in parts) and whose parts have not failed to join before: they grow live through
// a part.
std::set<uint32_t> growingLive(const std::vector<SlurmJob>& jobs,
                               const std::map<std::string, JobRecord>& records) {
  std::set<uint32_t> live;
  for (const auto& job : jobs) {
    const auto record = records.find(std::to_string(job.id));
    const JobRecord* known = record == records.end() ? nullptr : &record->second;
    const bool says_so = gpusInParts(job) || (known && known->report &&
                                              known->report->in_place_resize &&
                                              known->report->elastic);
    if (says_so && !(known && known->lifecycle.grows_by_requeue)) live.insert(job.id);
  }
  return live;
}

// Jobs whose last report counts the GPUs of their running part: its workers joined. A job
// whose GPUs are all in parts holds what they hold together (the part of a live move may
// hold another number a node than its old parts).
std::set<uint32_t> joinedParts(const std::vector<SlurmJob>& jobs,
                               const std::map<uint32_t, JobParts>& parts,
                               const std::map<std::string, JobRecord>& records) {
  std::set<uint32_t> joined;
  for (const auto& job : jobs) {
    const auto record = records.find(std::to_string(job.id));
    const auto mine = parts.find(job.id);
    if (mine == parts.end() || record == records.end() || !record->second.report) continue;
    const int per_node = job.gpus_per_node ? job.gpus_per_node->count : 0;
    const int gpus = gpusInParts(job) ? mine->second.runningGpus()
                                      : per_node * static_cast<int>(job.nodes.size());
    if (gpus > 0 && record->second.report->placement.num_replicas >= gpus) joined.insert(job.id);
  }
  return joined;
}

// The jobs whose record has a value in `field` (JobRecord::part_growing_since, say), with it.
template <typename Value>
std::map<uint32_t, Value> valuesOf(const std::map<std::string, JobRecord>& records,
                                   std::optional<Value> JobRecord::*field) {
  std::map<uint32_t, Value> values;
  for (const auto& [id, record] : records) {
    if (record.*field) values[static_cast<uint32_t>(std::stoul(id))] = *(record.*field);
  }
  return values;
}

// What a job's launcher and agent are told of its parts, the one they act on first: the
// running part whose workers are to leave, else its newest running part when its workers
// have not joined yet, else its pending part or the one it wants, else its newest running
// part.
std::optional<schema::PartStatus> partStatus(uint32_t job_id, const JobParts* mine,
                                             const PartRound& round) {
  using State = schema::PartStatus::State;
  const RunningPart* newest = mine && !mine->running.empty() ? &mine->running.back() : nullptr;
  const auto leave = round.leaving.find(job_id);
  const RunningPart* leaving =
      mine && leave != round.leaving.end() ? mine->leaving(leave->second) : nullptr;
  if (leaving) {
    schema::PartStatus status{State::kLeaving, leaving->id, leaving->nodes, leave->second.nodes};
    status.gpus_per_node = leaving->gpus_per_node;
    status.gpu_type = leaving->gpu_type;
    return status;
  }
  const auto running = [](const RunningPart& part) {
    schema::PartStatus status{State::kRunning, part.id, part.nodes};
    status.gpus_per_node = part.gpus_per_node;
    status.gpu_type = part.gpu_type;
    return status;
  };
  if (newest && !round.joined.count(job_id)) return running(*newest);
  if (mine && mine->pending) return schema::PartStatus{State::kPending, mine->pending, {}};
  if (round.wanted.count(job_id)) return schema::PartStatus{};
  if (newest) return running(*newest);
  return std::nullopt;
}

std::map<std::string, schema::PartStatus> partStatuses(const std::map<uint32_t, JobParts>& parts,
                                                       const PartRound& round) {
  std::set<uint32_t> jobs(round.wanted);
  for (const auto& [job_id, mine] : parts) jobs.insert(job_id);
  std::map<std::string, schema::PartStatus> statuses;
  for (const uint32_t job_id : jobs) {
    const auto mine = parts.find(job_id);
    const auto status = partStatus(job_id, mine == parts.end() ? nullptr : &mine->second, round);
    if (status) statuses[std::to_string(job_id)] = *status;
  }
  return statuses;
}

PlannedAction describe(Action action, const policy::Decision& decision,
                       const std::map<uint32_t, const SlurmJob*>& jobs,
                       const std::map<std::string, JobRecord>& records, double now) {
  PlannedAction planned;
  planned.action = std::move(action);
  const Action& a = planned.action;
  if (!a.nodes.empty()) planned.tres_per_node = tresPerNode(a);
  planned.node_list = commaJoined(a.nodes);
  const auto job = jobs.find(a.job_id);
  if (job != jobs.end()) {
    setTaskCounts(planned, job->second->resources);
    const bool places = a.kind == ActionKind::kStart || a.kind == ActionKind::kRequeue;
    planned.release = places && !a.nodes.empty() && heldForBadPlacement(*job->second);
    if (a.kind == ActionKind::kRequeue) {
      const auto record = records.find(std::to_string(a.job_id));
      planned.time_limit_min = timeLimitAfterRequeue(
          *job->second, record == records.end() ? nullptr : &record->second, now);
    }
  }
  planned.admin_comment = "pollux: " + a.why;
  const auto decided = decision.allocations.find(std::to_string(a.job_id));
  if (decided != decision.allocations.end() && decided->second.batch_size > 0) {
    planned.admin_comment += " batch_size=" + std::to_string(decided->second.batch_size);
  }
  return planned;
}

// The running parts of jobs that ended or were requeued: SIGTERM to their steps when first
// seen (the lead's checkpoints the training; its launcher does the same where it outlived
// the job, and where it died with its node nothing else would). Those of a requeued job are
// cancelled kEndedJobPartGraceS later; an ended job's stay while Slurm completes it, as
// foldParts says.
std::vector<Action> actionsOnEndingParts(const std::map<uint32_t, std::vector<uint32_t>>& ending,
                                         const std::vector<SlurmJob>& jobs, JobStore& store,
                                         double now) {
  std::set<uint32_t> owners, requeued;
  for (const auto& [job_id, parts] : ending) owners.insert(job_id);
  for (const auto& job : jobs) {  // an ending job that is pending was requeued (foldParts)
    if (owners.count(job.id) && job.state == JobState::kPending) requeued.insert(job.id);
  }
  const auto since = store.partsEndingSince(owners, now);
  std::vector<Action> actions;
  for (const auto& [job_id, parts] : ending) {
    const bool first_seen = since.at(job_id) == now;  // partsEndingSince's mark of a new one
    const double waited = now - since.at(job_id);
    const std::string job = "JobId=" + std::to_string(job_id);
    const std::string checkpoints =
        job + " ended or was requeued: its part checkpoints the training";
    const std::string useless = partOfJobNotRunning(job_id);
    for (const uint32_t part : parts) {
      if (first_seen) {
        actions.push_back(Action{part, ActionKind::kCheckpoint, "", 0, {}, checkpoints});
      } else if (requeued.count(job_id) && waited >= kEndedJobPartGraceS) {
        actions.push_back(Action{part, ActionKind::kCancel, "", 0, {}, useless});
      }
    }
  }
  return actions;
}

}  // namespace

void logSolverTrouble(const policy::Stats& stats, const Log& log) {
  if (stats.kept_current) {
    log(LogLevel::kError,
        "solver " + stats.solver_status + ": round keeps every current allocation");
  } else if (stats.kept_jobs > 0) {
    log(LogLevel::kError, "solver " + stats.solver_status + " in " +
                              std::to_string(stats.failed_partitions) + " sub-problem(s): " +
                              std::to_string(stats.kept_jobs) +
                              " job(s) keep their current allocation");
  }
  if (stats.time_limit_hits > 0) {
    log(LogLevel::kError, "solver wall-clock limit hit in " +
                              std::to_string(stats.time_limit_hits) +
                              " GLPK solve(s): this round depends on how busy the host was");
  }
  if (stats.work_limit_hits > 0) {
    log(LogLevel::kInfo, "solver work limit hit in " + std::to_string(stats.work_limit_hits) +
                             " GLPK solve(s), as it would be on any host");
  }
}

RoundPlan planRound(JobStore& store, const Round& round, const config::PolicyConfig& config,
                    bool settling, const Log& log, policy::Snapshot* seen) {
  // Typed before folding: each part by its own nodes (a live move's may be of another type).
  std::vector<SlurmJob> typed = round.jobs;
  resolveGpuTypes(typed, round.nodes);
  FoldedJobs folded = foldParts(std::move(typed), round.now);
  std::vector<SlurmJob> jobs = std::move(folded.jobs);
  logChanges(store.observe(jobs, round.now), round.now, log);
  const std::uint64_t circumstances = circumstancesOf(round);
  store.dropStaleRefusals(circumstances);
  auto records = store.records();
  recordRefusals(store, records, round, circumstances, log);
  const auto treatments = treatmentsOf(jobs, records, contextOf(round, settling));
  std::map<uint32_t, PartMove> moving;  // jobs moving live
  for (const auto& [id, record] : records) {
    if (record.lifecycle.phase == Phase::kMoving) {
      moving[static_cast<uint32_t>(std::stoul(id))] = {*record.lifecycle.move_target,
                                                       record.lifecycle.since};
    }
  }
  // The policy sees a shrinking or moving job on its target (where it will be in a moment),
  // a finishing one where it runs (not to be changed), and does not see a job that waits for
  // its last run to release its nodes.
  std::vector<SlurmJob> as_seen, to_plan;
  std::set<uint32_t> resizes_in_place, resizes_live;
  for (auto job : jobs) {
    const Treatment treatment = treatmentIn(treatments, job.id);
    // Its last run's parts still checkpoint the training that its next run resumes.
    if (treatment == Treatment::kAwaitLastRun || folded.ending.count(job.id)) continue;
    const auto record = records.find(std::to_string(job.id));
    if (treatment == Treatment::kAwaitShrink) {
      seeOnTarget(job, *record->second.lifecycle.shrink_target);
    } else if (treatment == Treatment::kAwaitMove) {
      seeOnTarget(job, moving.at(job.id).target);
    } else if (treatment != Treatment::kRequeueAgain && treatment != Treatment::kAwaitCheckpoint &&
               treatment != Treatment::kAwaitEnd) {
      to_plan.push_back(job);
      // A job whose GPUs are all in parts shrinks by dropping a part, never its home.
      const bool launcher_resizes = record != records.end() && record->second.report &&
                                    record->second.report->in_place_resize && !gpusInParts(job);
      if (launcher_resizes && mayShrinkInPlace(record->second.lifecycle)) {
        resizes_in_place.insert(job.id);
        if (record->second.report->elastic) resizes_live.insert(job.id);
      }
    }
    as_seen.push_back(std::move(job));
  }
  policy::Decision decision;
  std::map<std::string, std::string> why_waiting;
  try {
    SiteRules site{round.partitions,   round.partition_max_nodes, round.partition_max_time_min,
                   round.reservations, round.licenses,            std::nullopt};
    if (!round.qos.empty() || !round.associations.empty()) {
      site.limits.emplace(round.qos, round.associations, round.partition_qos);
    }
    const auto nodes = nodesAfterMoves(round.nodes, round.jobs, folded.parts, moving);
    policy::Snapshot snapshot =
        buildSnapshot(round.now, nodes, as_seen, records, config, site, &why_waiting);
    markParts(snapshot, folded.parts);
    if (seen) *seen = snapshot;
    decision = policy::schedule(snapshot);
    noteBudgetsUsedUp(snapshot, decision, why_waiting);
  } catch (const std::exception& problem) {
    throw PolicyFailed(problem.what());
  }
  store.recordWaiting(why_waiting);
  RoundPlan plan;
  plan.stats = decision.stats;
  plan.waiting = why_waiting;
  logSolverTrouble(decision.stats, log);
  for (const auto& job : to_plan) {
    if (!job.adaptive) continue;
    const std::string id = std::to_string(job.id);
    const auto decided = decision.allocations.find(id);
    store.recordDecision(id, decided == decision.allocations.end()
                                 ? std::nullopt
                                 : std::optional<policy::JobDecision>(decided->second));
  }
  auto actions =
      planActions(to_plan, decision, round.now, resizes_in_place, plan.problems, why_waiting);
  actions = withoutActionsForbidden(std::move(actions), treatments, settling, plan.problems);
  for (auto& action : actions) {
    if (action.kind == ActionKind::kShrink && resizes_live.count(action.job_id)) makeLive(action);
  }
  PartRound parts;
  parts.grows_live = growingLive(to_plan, records);
  parts.homes = folded.homes;
  parts.joined = joinedParts(jobs, folded.parts, records);
  parts.growing_since = valuesOf(records, &JobRecord::part_growing_since);
  parts.leaving_since = valuesOf(records, &JobRecord::part_leave);
  for (const auto& [id, record] : records) {
    if (record.lifecycle.phase == Phase::kCheckpointing) {
      parts.checkpointing_since[static_cast<uint32_t>(std::stoul(id))] = record.lifecycle.since;
    }
  }
  parts.moving = moving;
  parts.now = round.now;
  actions = planPartActions(std::move(actions), to_plan, folded.parts, parts);
  logPartLeaves(parts, folded.parts, log);
  store.recordParts(partStatuses(folded.parts, parts), parts.growing, parts.leaving);
  store.refuseLiveGrowth(parts.growth_failed);
  for (const auto& [part, why] : folded.to_cancel) {
    Action cancel;
    cancel.job_id = part;
    cancel.kind = ActionKind::kCancel;
    cancel.why = why;
    actions.push_back(std::move(cancel));
  }
  for (auto& action : actionsOnEndingParts(folded.ending, jobs, store, round.now)) {
    actions.push_back(std::move(action));
  }
  for (auto& action : requeuesAgain(jobs, treatments)) actions.push_back(std::move(action));
  std::set<uint32_t> acted_on;
  for (const auto& action : actions) acted_on.insert(action.job_id);
  const double failures_since = round.now - kNodeFailureWindowS;
  for (auto& action :
       planNodeFailureRequeues(jobs, round.nodes, failures_since, store.endedRunNodes())) {
    if (!acted_on.count(action.job_id)) actions.push_back(std::move(action));
  }
  std::map<uint32_t, const SlurmJob*> by_id;
  for (const auto& job : jobs) by_id[job.id] = &job;
  for (const auto& job : round.jobs) by_id.try_emplace(job.id, &job);  // parts
  for (auto& action : actions) {
    plan.actions.push_back(describe(std::move(action), decision, by_id, records, round.now));
  }
  for (const auto& problem : plan.problems) log(LogLevel::kError, problem);
  return plan;
}

}  // namespace pollux::service
