// SPDX-License-Identifier: GPL-2.0-or-later
// Parts of adaptive jobs: the live growths of a running job. Slurm cannot add GPUs or GPU
// nodes to a running job (job expansion is refused for GPUs or crashes slurmctld), so a job J
// that grows live gets a part: a job of J's user with the comment adaptive:part_of=J, which
// J's `pollux-agent --launch` submits when the plugin wants one (held like any adaptive job),
// which a round places on the nodes J grows to, and into which the launcher starts workers
// that join J's trainer live. A job holds several running parts, one per live growth, and
// grows through one at a time: a further growth waits until every running part's workers
// have joined. The policy sees J holding its own nodes and its running parts'; a shrink that
// drops one of them has its workers leave, then cancels it; a part whose job no longer runs
// is cancelled.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "actions.hpp"
#include "common/policy/policy.hpp"
#include "slurm_view.hpp"

namespace pollux::service {

// A part that runs has this long from its start until its workers have joined (the job's
// report shows its GPUs); then it is cancelled and the job grows by requeue from then on.
inline constexpr double kPartJoinTimeoutS = 150;
// A growth through a part has this long from the round that first wanted it until the part
// runs (the launcher submits it, Slurm starts it where placed); then the job grows by requeue
// from then on (a launcher that submits no part, a limit on submitted or running jobs).
inline constexpr double kPartStartTimeoutS = 90;
// A part the job shrinks off has this long for its workers to leave (the job's report no
// longer counts its nodes); then it is cancelled all the same (its workers' loss is a live
// change as a failure is).
inline constexpr double kPartLeaveTimeoutS = 60;
// How long the running parts of a job that has ended or was requeued are left to checkpoint
// its training (its launcher's request, or Pollux's where the launcher died with its node):
// Slurm's default KillWait.
inline constexpr double kEndedJobPartGraceS = 30;

// A job's part whose workers are asked to leave, since when (0: its newest running part, as
// a state file saved before the part was named says): those on `nodes`, the part then shrunk
// to its others by the job's agent; empty: all of them, the part then cancelled.
struct PartLeave {
  uint32_t part = 0;
  double since = 0;
  std::vector<std::string> nodes = {};
  bool operator==(const PartLeave& other) const {
    return part == other.part && since == other.since && nodes == other.nodes;
  }
};

// A live move of a job whose GPUs are all in parts (lifecycle phase moving): where to, and
// since when.
struct PartMove {
  policy::Allocation target;
  double since = 0;
};

// A part of a job that runs.
struct RunningPart {
  uint32_t id = 0;
  std::vector<std::string> nodes;
  int gpus_per_node = 0;
  double since = 0;             // its start
  std::string batch_host = {};  // Slurm never takes it from the part (a shrink keeps it)
  // Its GPUs' type (a live move's part may hold another than the job's other parts); empty
  // where untyped.
  std::string gpu_type = {};

  // What it holds (GPU type `gpu_type`).
  policy::Allocation allocation(const std::string& gpu_type) const;
};

// A job's parts: at most one held for a growth, and those running, oldest first.
struct JobParts {
  uint32_t pending = 0;  // 0: none
  std::vector<RunningPart> running;

  // What each running part holds, oldest first.
  std::vector<policy::Allocation> runningAllocations(const std::string& gpu_type) const;
  int runningGpus() const;                   // held by the running parts together
  std::set<std::string> batchHosts() const;  // of the running parts
  // The running part `leave` names; nullptr where it runs no more.
  const RunningPart* leaving(const PartLeave& leave) const;
};

// Whether every GPU of the job is in its parts (adaptive:resize=live): the job itself, its
// home, holds none.
bool gpusInParts(const SlurmJob& job);

// Why a part of job `job_id`, which no longer runs, is cancelled.
std::string partOfJobNotRunning(uint32_t job_id);

// Slurm's jobs as the policy sees them: parts folded into their jobs.
struct FoldedJobs {
  std::vector<SlurmJob> jobs;           // every job but parts; a job with its running part's GPUs
  std::map<uint32_t, JobParts> parts;   // by their job's id
  std::map<uint32_t, std::string> to_cancel;  // parts with no use, and why
  // The running parts of jobs that ended or were requeued lately, by job: they checkpoint.
  std::map<uint32_t, std::vector<uint32_t>> ending;
  // Jobs whose GPUs are all in parts, whose home runs without a running part: folded as
  // pending, their first part's placement theirs.
  std::set<uint32_t> homes;
};

// Folds each part into its job: each running part of a running job of the same user adds its
// nodes to the job's, or, on the job's own nodes, its GPUs to the job's there; one pending
// part per job is kept for its next growth. Any other part (its job not running, another
// user's, a second pending one) is to be cancelled, except a running part of a job that has
// ended and is still completing or ended less than kEndedJobPartGraceS before `now`, or that
// was requeued (FoldedJobs::ending): the training checkpoints there first. A running job
// whose GPUs are all in parts holds what its running parts hold (not its home's node); with
// none running it is pending, placed where its pending part is placed (FoldedJobs::homes).
FoldedJobs foldParts(std::vector<SlurmJob> jobs, double now);

// The nodes as a round places jobs on them: without the running parts of jobs moving live
// (`moving`) that lie outside their targets. Those leave once the target's workers have
// joined, and a job placed on their GPUs, CPUs and memory starts there then (Slurm starts
// it); the round sees their jobs on their targets.
std::vector<SlurmNode> nodesAfterMoves(std::vector<SlurmNode> nodes,
                                       const std::vector<SlurmJob>& jobs,
                                       const std::map<uint32_t, JobParts>& parts,
                                       const std::map<uint32_t, PartMove>& moving);

// Tells the policy what each job's running parts within its current allocation hold
// (policy::Job::parts): a moving job, seen on its target, without its old parts; and what
// those beyond it still hold until they have left (policy::Job::leaving).
void markParts(policy::Snapshot& snapshot, const std::map<uint32_t, JobParts>& parts);

// The nodes of the part that carries a change from `current` (with running `parts`) to
// `target`, where the change is a growth a part can carry (policy::changesInPlace: as many
// GPUs as the job has on each of its nodes, on new nodes or on each of its own); nullopt
// otherwise.
std::optional<std::vector<std::string>> partGrowthNodes(
    const policy::Allocation& current, const policy::Allocation& target,
    const std::vector<policy::Allocation>& parts = {});

// The running part whose workers leave when the job moves from `current` to `target`:
// `target` is `current` without exactly what it holds (policy::droppedPart); nullptr if none.
const RunningPart* droppedRunningPart(const policy::Allocation& current,
                                      const policy::Allocation& target, const JobParts& parts);

// The running part that the job's move from `current` to `target` shrinks to some of its
// nodes (policy::shrunkPart, its batch host kept), and those whose workers leave.
struct PartShrink {
  const RunningPart* part = nullptr;
  std::vector<std::string> leaving;
};
std::optional<PartShrink> shrunkRunningPart(const policy::Allocation& current,
                                            const policy::Allocation& target,
                                            const JobParts& parts);

// What a round knows of the jobs that have parts, and what it decides of them besides actions.
struct PartRound {
  std::set<uint32_t> grows_live;  // jobs whose workers can join them live
  std::set<uint32_t> homes;       // FoldedJobs::homes
  std::set<uint32_t> joined;      // jobs whose last report counts all their running parts' GPUs
  std::map<uint32_t, double> growing_since;  // jobs that wanted a growth through a part
  std::map<uint32_t, PartLeave> leaving_since;  // jobs whose part's workers were asked to leave
  std::map<uint32_t, double> checkpointing_since;  // jobs asked to checkpoint in their parts
  std::map<uint32_t, PartMove> moving;             // jobs moving live
  double now = 0;
  // Decided:
  std::set<uint32_t> wanted;        // jobs whose launcher is to submit a part
  std::set<uint32_t> growth_failed;  // jobs whose part did not start or join in time
  std::map<uint32_t, double> growing;  // jobs that wait for their part to run, since when
  std::map<uint32_t, PartLeave> leaving;  // jobs whose part's workers are to leave
};

// Turns the round's resizes of jobs that grow live into parts' actions: a growth a part can
// carry places the job's pending part on the added nodes (or, with none pending, asks the
// launcher for one); it waits (no action) while a running part's workers have not joined, as
// does a shrink that drops a running part, which then has its workers leave at an agreeing
// step and cancels the part once they have (or kPartLeaveTimeoutS after asking). A growth
// whose part does not run within kPartStartTimeoutS is a requeue (its pending part cancelled),
// and so is every later growth of the job; so is a running part whose workers did not join
// within kPartJoinTimeoutS (the part cancelled). Other actions pass as they are (any other
// change of a job with running parts is a requeue). A job whose GPUs are all in parts grows
// live from its first report on; its start is its home's, on the placement's first node with
// no GPU (the launcher is then asked for a part); while its home runs without a running part,
// a start places its pending part (or asks for one) and a hold holds that part; one whose
// first part has not run within kPartStartTimeoutS of its start is requeued (pending again),
// its pending part cancelled. Any other change of such a job with running parts (a move, a
// preemption) is a restart in new parts: a checkpoint action for each running part, whose
// lead checkpoints; the parts of one that has not checkpointed within kCheckpointTimeoutS
// (PartRound::checkpointing_since) are cancelled. Such a job that grows live moves live
// to a target on other nodes of its type with as many GPUs on each: its pending part is
// started there (Action::moves_to), and once its workers have joined, its old parts leave
// one after another (PartRound::moving); a move whose part has not run within
// kPartStartTimeoutS is a restart in new parts.
std::vector<Action> planPartActions(std::vector<Action> actions,
                                    const std::vector<SlurmJob>& folded,
                                    const std::map<uint32_t, JobParts>& parts, PartRound& round);

}  // namespace pollux::service
