// SPDX-License-Identifier: GPL-2.0-or-later
// A job's life as sched/pollux follows it, as one state machine: named phases, one transition
// from what Slurm shows of the job each round (observe), one from what Pollux did to it
// (afterAction), and what the round may do with the job in its phase (treatmentOf).
#pragma once

#include <optional>
#include <set>
#include <string>

#include "actions.hpp"
#include "common/policy/policy.hpp"
#include "slurm_view.hpp"

namespace pollux::service {

enum class Phase {
  kWaiting,        // pending: not started yet, or requeued by Slurm, its user or an admin
  kRunning,        // running; free to be resized
  kShrinking,      // asked to shrink in place; until Slurm shows it on its target
  kShrunk,         // running after an in-place shrink: Slurm takes no second update of a
                   // resized job until it is requeued, so its next resize is a requeue
  kRequeued,       // Pollux requeued it; until its next run has lasted kRunAfterRequeueS
  kRequeuedAgain,  // Pollux requeued it once more, the first requeue having not restarted it
  kCheckpointing,  // its GPUs all in parts, asked to checkpoint there for a restart in new
                   // parts; until no part of it runs
  kMoving,         // its GPUs all in parts, a part with its target started: until it holds
                   // just its target (its old parts have left)
  kFinishing,      // its trainer said it finished training: left as it is until it ends
  kEnded           // finished: forgotten
};

// "waiting", "running", ... (scontrol show pollux, the saved state).
const char* toString(Phase phase);
// The phase named so; nullopt for any other name.
std::optional<Phase> phaseNamed(const std::string& name);

// How long a run started after Pollux's requeue must last to end that requeue.
inline constexpr double kRunAfterRequeueS = 30;

// A job asked to shrink in place has this long to checkpoint and shrink itself (the agent's
// grace time, 25 s by default, plus its launcher's start); after that it is requeued.
inline constexpr double kShrinkTimeoutS = 120;

// A job asked to checkpoint in its parts has this long (the agent's grace time and its
// launcher's cancel of the parts); after that its parts are cancelled.
inline constexpr double kCheckpointTimeoutS = 120;

// A live move has this long to hold just its target: its part's start and join, and its old
// parts' leaving one after another. After that the policy decides the job again.
inline constexpr double kMoveTimeoutS = 600;

// Seconds after slurmctld restarts with jobs during which no job is started, nor any running
// job requeued or shrunk: Slurm's view of a job may come from its state file and predate its
// last requeue, and a node may still retry its report that a requeued run ended. On 22.05
// either left GPUs unusable to the next step started there ("Invalid generic resource (gres)
// specification").
inline constexpr double kSettleAfterStartS = 30;

struct Lifecycle {
  Phase phase = Phase::kWaiting;
  double since = 0;  // kRequeued*: when Pollux requeued it; kShrinking: when it asked
  std::optional<policy::Allocation> shrink_target;  // kShrinking
  std::optional<policy::Allocation> move_target;    // kMoving
  // An in-place shrink of it timed out (its script does not run pollux-agent --launch, or
  // its launcher failed): every later resize of it is a requeue.
  bool shrinks_by_requeue = false;
  // The workers of a part of it did not join it in time (see job_parts.hpp): every later
  // growth of it is a requeue.
  bool grows_by_requeue = false;
};

// What an observation brought about, for the log.
enum class Transition {
  kNone,
  kShrinkDone,      // Slurm shows the job on its shrink target
  kShrinkTimedOut,  // not on its target kShrinkTimeoutS after the request: resized by requeue
  kCheckpointDone,  // no part of a checkpointing job runs any more
  kMoveDone,        // a moving job holds just its target
  kMoveTimedOut,    // a moving job did not hold just its target kMoveTimeoutS after its start
};

struct Observed {
  Lifecycle next;
  Transition transition = Transition::kNone;
};

// The job's next lifecycle from what Slurm shows of it now. Slurm's start times are whole
// seconds; a run that started before Pollux's requeue is the run that requeue stopped.
Observed observe(const Lifecycle& current, const SlurmJob& job, double now);

// The job's lifecycle after Pollux did `action` to it at `now` (Slurm accepted it).
Lifecycle afterAction(const Lifecycle& current, const Action& action, double now);

// The job's lifecycle after a report of its lead agent. One that says training finished makes
// a job running where Pollux may change it (running, shrunk, or running after Pollux's
// requeue) finishing; one in the midst of a change (shrinking, checkpointing, moving)
// finishes that change first. Any other report of a finishing job means that its script
// trains again (a second stage under another pollux-agent): it is running.
Lifecycle afterReport(const Lifecycle& current, bool training_finished);

// What a round does with an adaptive job.
enum class Treatment {
  kDecide,           // the policy decides it and its action is carried out
  kDecideNoStop,     // decided, but not requeued or shrunk this round: Slurm's view of it may
                     // predate its last requeue (slurmctld just started, or one of its
                     // nodes has not registered since)
  kAwaitShrink,      // shrinking: the round sees it on its target and leaves it alone
  kAwaitCheckpoint,  // checkpointing: the round sees it on its parts and leaves it alone
  kAwaitMove,        // moving: the round sees it on its parts, and its parts move it on
  kAwaitEnd,         // finishing: the round sees it where it runs and leaves it alone
  kAwaitLastRun,     // requeued and placed while its last run still releases its nodes:
                     // Slurm starts it there once they are free, so it is not re-decided
  kRequeueAgain,     // Pollux's requeue did not restart it: requeued once more to resume
                     // from its checkpoint
};

// What the round around a job knows: the time, whether slurmctld is settling after its start
// (see kSettleAfterStartS) and which nodes have not registered since it started.
struct RoundContext {
  double now = 0;
  bool settling = false;
  std::set<std::string> unregistered_nodes;
};

Treatment treatmentOf(const Lifecycle& lifecycle, const SlurmJob& job, const RoundContext& round);

// Why a kRequeueAgain job is requeued once more, for the log and its admin comment.
std::string whyRequeueAgain(const SlurmJob& job);

// Whether the job may be shrunk in place now (its launcher permitting).
bool mayShrinkInPlace(const Lifecycle& lifecycle);

}  // namespace pollux::service
