// SPDX-License-Identifier: GPL-2.0-or-later
#include "actions.hpp"

#include <algorithm>
#include <set>

#include "site_policy.hpp"

namespace pollux::service {

namespace {

// GPUs per node when every node gets the same number, else 0.
int uniformGpusPerNode(const policy::Allocation& allocation) {
  int per_node = 0;
  for (const auto& [node, gpus] : allocation.nodes) {
    if (per_node != 0 && gpus != per_node) return 0;
    per_node = gpus;
  }
  return per_node;
}

Action placing(const SlurmJob& job, ActionKind kind, const policy::Allocation& target) {
  Action action{job.id, kind, target.gpu_type, uniformGpusPerNode(target), {}, ""};
  for (const auto& [node, gpus] : target.nodes) action.nodes.push_back(node);
  return action;
}

std::string describe(const policy::Allocation& allocation) {
  std::string text = std::to_string(allocation.totalGpus()) + "x" + allocation.gpu_type + " on ";
  bool first = true;
  for (const auto& [node, gpus] : allocation.nodes) {
    text += (first ? "" : ",") + node;
    first = false;
  }
  return text;
}

// A pending, eligible job whose request already names the target's nodes and GPUs needs
// nothing more. (A requeue can push eligibility out after our update: then it is redone.)
bool alreadyRequested(const SlurmJob& job, const policy::Allocation& target, int gpus_per_node,
                      double now) {
  if (job.held || job.eligible_time > now) return false;
  if (!job.gpus_per_node || job.gpus_per_node->count != gpus_per_node) return false;
  std::vector<std::string> target_nodes;
  for (const auto& [node, gpus] : target.nodes) target_nodes.push_back(node);
  std::vector<std::string> requested = job.requested_nodes;
  std::sort(requested.begin(), requested.end());
  return requested == target_nodes;
}

std::optional<Action> planPending(const SlurmJob& job, const policy::JobDecision* decided,
                                  double now, const std::map<std::string, std::string>& waiting) {
  if (decided &&
      alreadyRequested(job, decided->allocation, uniformGpusPerNode(decided->allocation), now)) {
    return std::nullopt;
  }
  if (decided) {
    Action action = placing(job, ActionKind::kStart, decided->allocation);
    action.why = "placed on " + describe(decided->allocation);
    return action;
  }
  if (heldByPollux(job)) return std::nullopt;
  const auto why = waiting.find(std::to_string(job.id));
  return Action{job.id, ActionKind::kHold, "", 0, {},
                why == waiting.end() ? "waiting for GPUs" : "waiting: Reason=" + why->second};
}

// The target keeps some of the job's nodes, its batch host among them (Slurm never removes
// that one), with the GPUs the job holds on each: what Slurm can shrink a running job to.
bool shrinkableTo(const SlurmJob& job, const policy::Allocation& current,
                  const policy::Allocation& target) {
  if (target.gpu_type != current.gpu_type || target.nodes.size() >= current.nodes.size() ||
      target.nodes.count(job.batch_host) == 0) {
    return false;
  }
  return std::all_of(target.nodes.begin(), target.nodes.end(), [&](const auto& node) {
    const auto held = current.nodes.find(node.first);
    return held != current.nodes.end() && held->second == node.second;
  });
}

constexpr const char* kCheckpointRequested = ", checkpoint requested";

std::optional<Action> planRunning(const SlurmJob& job, const policy::JobDecision* decided,
                                  bool resizes_in_place) {
  const auto current = currentAllocation(job);
  if (!decided) {
    return Action{job.id, ActionKind::kRequeue, "", 0, {}, "preempted: its GPUs go elsewhere"};
  }
  const policy::Allocation& target = decided->allocation;
  if (current && *current == target) return std::nullopt;
  const std::string from = current ? describe(*current) : "untyped GPUs";
  if (current && resizes_in_place && shrinkableTo(job, *current, target)) {
    Action action = placing(job, ActionKind::kShrink, target);
    action.why = "in place " + from + " -> " + describe(target) + kCheckpointRequested;
    return action;
  }
  Action action = placing(job, ActionKind::kRequeue, target);
  action.why = "resize " + from + " -> " + describe(target);
  if (!decided->restarted_for.empty()) {
    action.restarted_for = decided->restarted_for;
    action.why += ", not live: JobId=" + decided->restarted_for + " starts on the GPUs it leaves";
  }
  return action;
}

}  // namespace

void makeLive(Action& shrink) {
  shrink.live = true;
  const std::size_t suffix = shrink.why.rfind(kCheckpointRequested);
  if (suffix != std::string::npos) shrink.why.erase(suffix);
  shrink.why += ", live: the workers on the other nodes leave";
}

const char* toString(ActionKind kind) {
  switch (kind) {
    case ActionKind::kHold: return "hold";
    case ActionKind::kStart: return "start";
    case ActionKind::kRequeue: return "requeue";
    case ActionKind::kShrink: return "shrink";
    case ActionKind::kCancel: return "cancel";
    case ActionKind::kCheckpoint: return "checkpoint";
  }
  return "unknown";
}

std::string tresPerNode(const Action& action) {
  if (action.gpus_per_node == 0) return "";  // clears the request: a home holds no GPU
  return "gres:gpu:" + std::to_string(action.gpus_per_node);
}

std::optional<policy::Allocation> currentAllocation(const SlurmJob& job) {
  if (job.state != JobState::kRunning || !job.gpus_per_node || job.gpus_per_node->type.empty() ||
      job.nodes.empty()) {
    return std::nullopt;
  }
  policy::Allocation allocation{job.gpus_per_node->type, {}};
  for (const auto& node : job.nodes) allocation.nodes[node] = job.gpus_per_node->count;
  return allocation;
}

policy::Allocation targetOf(const Action& action) {
  policy::Allocation target{action.gpu_type, {}};
  for (const auto& node : action.nodes) target.nodes[node] = action.gpus_per_node;
  return target;
}

std::vector<Action> planActions(const std::vector<SlurmJob>& jobs, const policy::Decision& decision,
                                double now, const std::set<uint32_t>& resizes_in_place,
                                std::vector<std::string>& problems,
                                const std::map<std::string, std::string>& waiting) {
  std::vector<Action> actions;
  for (const auto& job : jobs) {
    if (!job.adaptive || job.state == JobState::kOther) continue;
    const auto found = decision.allocations.find(std::to_string(job.id));
    const policy::JobDecision* decided =
        found == decision.allocations.end() ? nullptr : &found->second;
    if (decided && uniformGpusPerNode(decided->allocation) == 0) {
      problems.push_back("JobId=" + std::to_string(job.id) + ": placement " +
                         describe(decided->allocation) +
                         " has unequal GPUs per node; left as it is");
      continue;
    }
    const auto action = job.state == JobState::kPending
                            ? planPending(job, decided, now, waiting)
                            : planRunning(job, decided, resizes_in_place.count(job.id) > 0);
    if (action) actions.push_back(*action);
  }
  return actions;
}

std::vector<Action> planNodeFailureRequeues(
    const std::vector<SlurmJob>& jobs, const std::vector<SlurmNode>& nodes, double since,
    const std::map<uint32_t, std::set<std::string>>& ended_run_nodes) {
  std::set<std::string> unusable;
  for (const auto& node : nodes) {
    if (!node.usable) unusable.insert(node.name);
  }
  std::vector<Action> actions;
  for (const auto& job : jobs) {
    if (!job.adaptive || job.state != JobState::kOther || !job.failed || job.end_time < since) {
      continue;
    }
    std::set<std::string> ran_on(job.nodes.begin(), job.nodes.end());
    const auto remembered = ended_run_nodes.find(job.id);
    if (remembered != ended_run_nodes.end()) {
      ran_on.insert(remembered->second.begin(), remembered->second.end());
    }
    const auto dead = std::find_if(ran_on.begin(), ran_on.end(),
                                   [&](const std::string& node) { return unusable.count(node); });
    if (dead == ran_on.end()) continue;
    Action requeue;
    requeue.job_id = job.id;
    requeue.kind = ActionKind::kRequeue;
    requeue.why = "failed as its node " + *dead + " went down; requeued to be placed again";
    actions.push_back(requeue);
  }
  return actions;
}

}  // namespace pollux::service
