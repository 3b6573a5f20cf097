// SPDX-License-Identifier: GPL-2.0-or-later
#include "job_lifecycle.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace pollux::service {

namespace {

constexpr const char* kPhaseNames[] = {"waiting",   "running",        "shrinking",     "shrunk",
                                       "requeued",  "requeued_again", "checkpointing", "moving",
                                       "finishing", "ended"};

bool requeuedByPollux(Phase phase) {
  return phase == Phase::kRequeued || phase == Phase::kRequeuedAgain;
}

bool startedSince(const SlurmJob& job, double time) { return job.start_time >= std::floor(time); }

bool onTarget(const SlurmJob& job, const policy::Allocation& target) {
  std::vector<std::string> nodes = job.nodes;
  std::sort(nodes.begin(), nodes.end());
  std::vector<std::string> target_nodes;
  for (const auto& [node, gpus] : target.nodes) target_nodes.push_back(node);
  return nodes == target_nodes;
}

Lifecycle entering(Phase phase, const Lifecycle& current, double since = 0) {
  Lifecycle next;
  next.phase = phase;
  next.since = since;
  next.shrinks_by_requeue = current.shrinks_by_requeue;
  next.grows_by_requeue = current.grows_by_requeue;
  return next;
}

// A job Pollux requeued: it stays so until its next run has lasted kRunAfterRequeueS; one that
// ended FAILED before then stays so (its requeue is repeated) unless it was a repeat already.
Observed observeRequeued(const Lifecycle& current, const SlurmJob& job, double now) {
  switch (job.state) {
    case JobState::kPending: return {current};
    case JobState::kRunning:
      if (startedSince(job, current.since) && now - job.start_time >= kRunAfterRequeueS) {
        return {entering(Phase::kRunning, current)};
      }
      return {current};
    case JobState::kOther:
      if (job.failed && current.phase == Phase::kRequeued) return {current};
      return {entering(Phase::kEnded, current)};
  }
  return {current};
}

// A job asked to checkpoint in its parts: done once none runs (its home alone shows as
// pending, see foldParts).
Observed observeCheckpointing(const Lifecycle& current, const SlurmJob& job) {
  switch (job.state) {
    case JobState::kPending:
      return {entering(Phase::kWaiting, current), Transition::kCheckpointDone};
    case JobState::kRunning: return {current};
    case JobState::kOther: return {entering(Phase::kEnded, current)};
  }
  return {current};
}

// A job moving live: done once it holds just its target (its part's GPUs there).
Observed observeMoving(const Lifecycle& current, const SlurmJob& job, double now) {
  if (job.state == JobState::kPending) return {entering(Phase::kWaiting, current)};
  if (job.state != JobState::kRunning) return {entering(Phase::kEnded, current)};
  if (onTarget(job, *current.move_target)) {
    return {entering(Phase::kRunning, current), Transition::kMoveDone};
  }
  if (now - current.since <= kMoveTimeoutS) return {current};
  return {entering(Phase::kRunning, current), Transition::kMoveTimedOut};
}

// A job whose training finished: it stays so until it ends, unless it is requeued (by its
// user or an admin), whose next run is decided afresh.
Observed observeFinishing(const Lifecycle& current, const SlurmJob& job) {
  switch (job.state) {
    case JobState::kPending: return {entering(Phase::kWaiting, current)};
    case JobState::kRunning: return {current};
    case JobState::kOther: return {entering(Phase::kEnded, current)};
  }
  return {current};
}

Observed observeShrinking(const Lifecycle& current, const SlurmJob& job, double now) {
  if (job.state == JobState::kPending) return {entering(Phase::kWaiting, current)};
  if (job.state != JobState::kRunning) return {entering(Phase::kEnded, current)};
  if (onTarget(job, *current.shrink_target)) {
    return {entering(Phase::kShrunk, current), Transition::kShrinkDone};
  }
  if (now - current.since <= kShrinkTimeoutS) return {current};
  Lifecycle next = entering(Phase::kRunning, current);
  next.shrinks_by_requeue = true;
  return {next, Transition::kShrinkTimedOut};
}

}  // namespace

const char* toString(Phase phase) { return kPhaseNames[static_cast<int>(phase)]; }

std::optional<Phase> phaseNamed(const std::string& name) {
  for (int i = 0; i <= static_cast<int>(Phase::kEnded); ++i) {
    if (name == kPhaseNames[i]) return static_cast<Phase>(i);
  }
  return std::nullopt;
}

Observed observe(const Lifecycle& current, const SlurmJob& job, double now) {
  if (requeuedByPollux(current.phase)) return observeRequeued(current, job, now);
  if (current.phase == Phase::kShrinking) return observeShrinking(current, job, now);
  if (current.phase == Phase::kCheckpointing) return observeCheckpointing(current, job);
  if (current.phase == Phase::kMoving) return observeMoving(current, job, now);
  if (current.phase == Phase::kFinishing) return observeFinishing(current, job);
  switch (job.state) {
    case JobState::kPending: return {entering(Phase::kWaiting, current)};
    case JobState::kRunning:
      return {current.phase == Phase::kShrunk ? current : entering(Phase::kRunning, current)};
    case JobState::kOther: return {entering(Phase::kEnded, current)};
  }
  return {current};
}

Lifecycle afterAction(const Lifecycle& current, const Action& action, double now) {
  switch (action.kind) {
    case ActionKind::kRequeue:
      return entering(requeuedByPollux(current.phase) ? Phase::kRequeuedAgain : Phase::kRequeued,
                      current, now);
    case ActionKind::kShrink: {
      Lifecycle next = entering(Phase::kShrinking, current, now);
      next.shrink_target = targetOf(action);
      return next;
    }
    case ActionKind::kCheckpoint:
      return current.phase == Phase::kCheckpointing
                 ? current
                 : entering(Phase::kCheckpointing, current, now);
    case ActionKind::kStart:
      if (action.moves_to) {
        Lifecycle next = entering(Phase::kMoving, current, now);
        next.move_target = action.moves_to;
        return next;
      }
      return current;
    case ActionKind::kHold:
    case ActionKind::kCancel: return current;
  }
  return current;
}

Lifecycle afterReport(const Lifecycle& current, bool training_finished) {
  if (!training_finished) {
    return current.phase == Phase::kFinishing ? entering(Phase::kRunning, current) : current;
  }
  switch (current.phase) {
    case Phase::kRunning:
    case Phase::kShrunk:
    case Phase::kRequeued:
    case Phase::kRequeuedAgain: return entering(Phase::kFinishing, current);
    default: return current;
  }
}

Treatment treatmentOf(const Lifecycle& lifecycle, const SlurmJob& job, const RoundContext& round) {
  if (lifecycle.phase == Phase::kRequeued) {
    const bool ended_failed = job.state == JobState::kOther && job.failed;
    const bool stopped_run_shown = job.state == JobState::kRunning && !round.settling &&
                                   !startedSince(job, lifecycle.since) &&
                                   round.now - lifecycle.since >= kRunAfterRequeueS;
    if (ended_failed || stopped_run_shown) return Treatment::kRequeueAgain;
  }
  if (lifecycle.phase == Phase::kShrinking) return Treatment::kAwaitShrink;
  if (lifecycle.phase == Phase::kCheckpointing) return Treatment::kAwaitCheckpoint;
  if (lifecycle.phase == Phase::kMoving) return Treatment::kAwaitMove;
  if (lifecycle.phase == Phase::kFinishing) return Treatment::kAwaitEnd;
  if (job.state == JobState::kPending && job.completing && !job.held &&
      !job.requested_nodes.empty()) {
    return Treatment::kAwaitLastRun;
  }
  const bool on_unregistered =
      std::any_of(job.nodes.begin(), job.nodes.end(), [&](const std::string& node) {
        return round.unregistered_nodes.count(node) > 0;
      });
  if (job.state == JobState::kRunning && (round.settling || on_unregistered)) {
    return Treatment::kDecideNoStop;
  }
  return Treatment::kDecide;
}

std::string whyRequeueAgain(const SlurmJob& job) {
  if (job.state == JobState::kRunning) {
    return "shown RUNNING from the run Pollux's requeue stopped (slurmctld restarted from "
           "state saved before it); requeued once more to resume from its checkpoint";
  }
  return "ended FAILED before its run after Pollux's requeue got going (a slurmctld restart "
         "meanwhile?); requeued once more to resume from its checkpoint";
}

bool mayShrinkInPlace(const Lifecycle& lifecycle) {
  return !lifecycle.shrinks_by_requeue && lifecycle.phase != Phase::kShrinking &&
         lifecycle.phase != Phase::kShrunk;
}

}  // namespace pollux::service
