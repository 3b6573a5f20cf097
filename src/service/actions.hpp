// SPDX-License-Identifier: GPL-2.0-or-later
// The difference between what Slurm runs and what the policy decided, as actions.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/policy/policy.hpp"
#include "slurm_view.hpp"

namespace pollux::service {

// kCheckpoint: SIGTERM to the steps of a part of a job whose GPUs are all in parts, whose
// lead then checkpoints the training (see planPartActions).
enum class ActionKind { kHold, kStart, kRequeue, kShrink, kCancel, kCheckpoint };

struct Action {
  uint32_t job_id = 0;
  ActionKind kind = ActionKind::kHold;
  std::string gpu_type;               // target, empty for a hold or a requeue without nodes
  int gpus_per_node = 0;
  std::vector<std::string> nodes;
  std::string why;                    // for the log line
  // kShrink of a job whose trainer changes its world size live: no signal, the job's agent
  // has its leaving workers leave and shrinks the job itself.
  bool live = false;
  // An action on a part of a job (job_parts.hpp): that job's id; 0 where the action is on
  // the job itself.
  uint32_t owner = 0;
  // The start of a part that moves its job there live (job_parts.hpp): the job's target.
  std::optional<policy::Allocation> moves_to = std::nullopt;
  // A change the job could make by a live move, made by restart (policy::JobDecision::
  // restarted_for): the job that starts on the GPUs it leaves.
  std::string restarted_for = {};
};

const char* toString(ActionKind kind);

// A shrink in place of a job whose trainer changes its world size live: no checkpoint is
// asked for (Action::live), the why says so.
void makeLive(Action& shrink);

// "gres:gpu:N" for an action that places a job: untyped, the nodes decide the type; "" for
// a home (no GPU), which clears the job's GPU request.
std::string tresPerNode(const Action& action);

// Adaptive jobs only (rigid jobs are Slurm's backfill's). Pending: start where placed (unless
// its request says so already), else hold (unless Pollux holds it already; `waiting` says
// why, by job id, where the round knows). Running: nothing if unchanged, else requeue to the
// target (or requeue and hold when the policy gave it nothing). A job in `resizes_in_place`
// (its steps run under `pollux-agent --launch`) whose target keeps some of its nodes, its
// batch host among them, with the same GPUs on each, is shrunk in place instead: Slurm
// removes nodes from a running job but leaves its step at the old size, so the launcher
// shrinks the job and starts the step again once it has checkpointed. A target with unequal
// GPUs per node cannot be expressed to Slurm and is skipped with a message in `problems`.
std::vector<Action> planActions(const std::vector<SlurmJob>& jobs, const policy::Decision& decision,
                                double now, const std::set<uint32_t>& resizes_in_place,
                                std::vector<std::string>& problems,
                                const std::map<std::string, std::string>& waiting = {});

// The allocation an action gives its job (empty nodes for a hold or a requeue without nodes).
policy::Allocation targetOf(const Action& action);

// Adaptive jobs that ended FAILED since `since` on a node that is not usable now, each to be
// requeued without nodes (so placed again). A node that dies as a job starts on it: srun
// fails at once and the job ends FAILED before Slurm finds the node dead (Slurm itself
// requeues only the jobs still running on a node it sets DOWN). An adaptive job does not die
// with a node (kill_on_node_fail=0, see job_submit/pollux): Slurm removes the node from it, and
// a job whose steps could not go on without it ends FAILED with the node named only in
// `ended_run_nodes` (JobStore::endedRunNodes).
std::vector<Action> planNodeFailureRequeues(
    const std::vector<SlurmJob>& jobs, const std::vector<SlurmNode>& nodes, double since,
    const std::map<uint32_t, std::set<std::string>>& ended_run_nodes = {});

// The job's current allocation in policy terms, if it runs on GPUs of a known type
// (see resolveGpuTypes).
std::optional<policy::Allocation> currentAllocation(const SlurmJob& job);

}  // namespace pollux::service
