// SPDX-License-Identifier: GPL-2.0-or-later
#include "job_parts.hpp"

#include <algorithm>

#include "common/policy/configurations.hpp"
#include "common/slurm_text/node_list.hpp"
#include "job_lifecycle.hpp"

namespace pollux::service {

namespace {

std::optional<uint32_t> partOf(const SlurmJob& job) {
  return job.adaptive ? job.adaptive->part_of : std::nullopt;
}

// The reason a part has no use, or "" when it has one.
std::string uselessBecause(const SlurmJob& part, const std::map<uint32_t, const SlurmJob*>& jobs,
                           const JobParts& taken) {
  const uint32_t owner_id = *partOf(part);
  const auto owner = jobs.find(owner_id);
  const std::string owner_name = "JobId=" + std::to_string(owner_id);
  if (owner == jobs.end() || owner->second->state != JobState::kRunning) {
    return partOfJobNotRunning(owner_id);
  }
  if (owner->second->uid != part.uid) return "part of " + owner_name + " of another user";
  if (!owner->second->adaptive || partOf(*owner->second)) {
    return "part of " + owner_name + ", which is not an adaptive job";
  }
  if (part.state == JobState::kPending && taken.pending) {
    return "second pending part of " + owner_name;
  }
  return "";
}

// The part's GPUs on the job's own nodes (it doubles them there), else its nodes beside them;
// a job holding none yet (a home) takes the part's.
void addPart(SlurmJob& job, const RunningPart& part) {
  if (job.nodes.empty()) {
    job.nodes = part.nodes;
    job.num_nodes = static_cast<int>(job.nodes.size());
    job.gpus_per_node = GpuGres{part.gpu_type, part.gpus_per_node};  // untyped: resolveGpuTypes
    return;
  }
  const auto on_job_node = [&](const std::string& node) {
    return std::find(job.nodes.begin(), job.nodes.end(), node) != job.nodes.end();
  };
  if (std::all_of(part.nodes.begin(), part.nodes.end(), on_job_node)) {
    if (job.gpus_per_node) job.gpus_per_node->count += part.gpus_per_node;
    return;
  }
  for (const auto& node : part.nodes) {
    if (!on_job_node(node)) job.nodes.push_back(node);
  }
  job.num_nodes = static_cast<int>(job.nodes.size());
}

// A running home holds none of its job's GPUs: the job holds what its running parts hold.
// With none running, the job is pending to the policy, placed as its pending part is.
void foldIntoHome(SlurmJob& home, const JobParts* parts, const SlurmJob* pending_part,
                  std::set<uint32_t>& homes) {
  home.nodes.clear();
  home.num_nodes = 0;
  home.gpus_per_node.reset();
  if (parts && !parts->running.empty()) {
    for (const auto& part : parts->running) addPart(home, part);
    return;
  }
  homes.insert(home.id);
  home.state = JobState::kPending;
  home.requested_nodes.clear();
  if (!pending_part) return;
  home.requested_nodes = pending_part->requested_nodes;
  home.gpus_per_node = pending_part->gpus_per_node;
  home.eligible_time = pending_part->eligible_time;
  home.held = pending_part->held;
  home.state_reason = pending_part->state_reason;
}

Action cancelOf(uint32_t part, uint32_t owner, std::string why) {
  Action cancel;
  cancel.job_id = part;
  cancel.owner = owner;
  cancel.kind = ActionKind::kCancel;
  cancel.why = std::move(why);
  return cancel;
}

std::string jobName(uint32_t id) { return "JobId=" + std::to_string(id); }

// What a round does with an action on a job whose GPUs are all in parts and that has no
// running part: nullopt where the action stands as it is. The start of a pending home puts
// it on the placement's first node with no GPU and asks its launcher for a part; a running
// home's start places its pending part (or asks for one), its hold holds that part.
std::optional<std::vector<Action>> planHomeAction(Action action, const JobParts* mine,
                                                  PartRound& round) {
  const uint32_t job_id = action.job_id;
  const uint32_t pending = mine ? mine->pending : 0;
  if (action.kind == ActionKind::kHold && round.homes.count(job_id)) {
    if (!pending) return std::vector<Action>{};
    action.job_id = pending;
    action.owner = job_id;
    return std::vector<Action>{action};
  }
  if (action.kind != ActionKind::kStart || action.nodes.empty()) return std::nullopt;
  round.growing[job_id] = round.growing_since.try_emplace(job_id, round.now).first->second;
  if (!round.homes.count(job_id)) {
    round.wanted.insert(job_id);
    action.why = "home on " + action.nodes.front() + ", its first part to be placed (" +
                 action.why + ")";
    action.nodes.resize(1);
    action.gpus_per_node = 0;
    return std::vector<Action>{action};
  }
  if (!pending) {
    round.wanted.insert(job_id);
    return std::vector<Action>{};
  }
  Action start = action;
  start.job_id = pending;
  start.owner = job_id;
  start.why = "first part of " + jobName(job_id) + " on " + commaJoined(action.nodes) + " (" +
              action.why + ")";
  return std::vector<Action>{start};
}

// A running home whose first part has not run within kPartStartTimeoutS goes back to
// pending, its part cancelled: a home holds a node and its time limit runs for a part that
// Slurm does not start (a QOS limit that counts parts, say). True when it does.
bool requeueUnplacedHome(uint32_t job_id, const JobParts* mine, PartRound& round,
                         std::vector<Action>& planned) {
  const double since = round.growing_since.try_emplace(job_id, round.now).first->second;
  if (round.now - since <= kPartStartTimeoutS) {
    round.growing[job_id] = since;
    return false;
  }
  const std::string why = "its first part did not run within " +
                          std::to_string(int(kPartStartTimeoutS)) + " s";
  if (mine && mine->pending) {
    planned.push_back(cancelOf(mine->pending, job_id, jobName(job_id) + "'s home is requeued: " +
                                                          why));
  }
  planned.push_back(Action{job_id, ActionKind::kRequeue, "", 0, {}, "home requeued: " + why});
  return true;
}

// A change of a job whose GPUs are all in parts that no part can carry live: SIGTERM to its
// running parts' steps, whose lead checkpoints; its launcher then cancels its parts, and the
// job, its home alone, is placed anew (its first part starts the training from the
// checkpoint). Slurm never requeues the job: a requeue would have Slurm signal the parts'
// srun in the home, which ends their steps before the checkpoint.
void restartInNewParts(uint32_t job_id, const JobParts& mine, const std::string& why,
                       std::vector<Action>& planned) {
  for (const auto& part : mine.running) {
    Action checkpoint;
    checkpoint.job_id = part.id;
    checkpoint.kind = ActionKind::kCheckpoint;
    checkpoint.owner = job_id;
    checkpoint.why = "restart of " + jobName(job_id) + " in new parts: its part on " +
                     commaJoined(part.nodes) + " checkpoints (" + why + ")";
    planned.push_back(std::move(checkpoint));
  }
}

std::vector<std::string> nodesOf(const policy::Allocation& allocation) {
  std::vector<std::string> nodes;
  for (const auto& [node, gpus] : allocation.nodes) nodes.push_back(node);
  return nodes;
}

// Whether all of the part's nodes are in the allocation.
bool within(const RunningPart& part, const policy::Allocation& allocation) {
  return std::all_of(part.nodes.begin(), part.nodes.end(),
                     [&](const std::string& node) { return allocation.nodes.count(node) > 0; });
}

// A live move whose part did not run within kPartStartTimeoutS: its pending part cancelled,
// a restart in new parts instead.
void abandonMove(uint32_t job_id, const JobParts& mine, const std::string& why,
                 std::vector<Action>& planned) {
  if (mine.pending) {
    planned.push_back(cancelOf(mine.pending, job_id,
                               jobName(job_id) + "'s part for a live move did not run within " +
                                   std::to_string(int(kPartStartTimeoutS)) + " s"));
  }
  restartInNewParts(job_id, mine, why, planned);
}

// A live move under way: once its target's part has joined, its old parts leave, one per
// round (`leave`); a part that has not run within kPartStartTimeoutS of the move's start
// makes it a restart in new parts.
template <typename Leave>
void planMove(uint32_t job_id, const PartMove& move, const JobParts& mine, PartRound& round,
              std::vector<Action>& planned, const Leave& leave) {
  const RunningPart* joiner = nullptr;
  const RunningPart* old = nullptr;
  for (const auto& part : mine.running) {
    if (within(part, move.target)) {
      joiner = &part;
    } else if (!old) {
      old = &part;
    }
  }
  if (!old) return;  // it holds just its target: the move is done
  if (!joiner) {
    if (round.now - move.since > kPartStartTimeoutS) {
      abandonMove(job_id, mine, "its live move's part did not run", planned);
    }
    return;
  }
  if (round.joined.count(job_id)) leave(job_id, *old, {});
}

// Gives `part`'s GPUs, CPUs and memory on each of its nodes back to `nodes`.
void release(std::map<std::string, SlurmNode*>& nodes, const SlurmJob& part) {
  const int gpus = part.gpus_per_node ? part.gpus_per_node->count : 0;
  for (const auto& name : part.nodes) {
    const auto found = nodes.find(name);
    if (found == nodes.end()) continue;
    SlurmNode& node = *found->second;
    node.gpus_used = std::max(node.gpus_used - gpus, 0);
    node.free_cpus += part.demand.cpusFor(gpus);
    if (!node.free_memory_mb || !node.memory_mb) continue;
    node.free_memory_mb =
        part.demand.whole_node_memory
            ? *node.memory_mb
            : std::min(*node.free_memory_mb + part.demand.memoryFor(gpus), *node.memory_mb);
  }
}

}  // namespace

std::string partOfJobNotRunning(uint32_t job_id) {
  return "part of JobId=" + std::to_string(job_id) + ", which does not run";
}

bool gpusInParts(const SlurmJob& job) {
  return job.adaptive && job.adaptive->gpus_in_parts && !job.adaptive->part_of;
}

namespace {

// A running part whose job has ended, while Slurm still completes the job (signals its
// processes, KillWait) or for kEndedJobPartGraceS after its end, or whose job was requeued
// (a pending job's end time is Slurm's estimate: the round times those): the training
// checkpoints in its parts, asked by the job's launcher, or by Pollux where the launcher
// died with its node; the launcher then cancels them.
bool ownerStillEnding(const SlurmJob& part, const std::map<uint32_t, const SlurmJob*>& jobs,
                      double now) {
  const auto owner = jobs.find(*partOf(part));
  if (part.state != JobState::kRunning || owner == jobs.end()) return false;
  const SlurmJob& job = *owner->second;
  const bool ended_lately = job.end_time > 0 && now - job.end_time < kEndedJobPartGraceS;
  const bool requeued = job.state == JobState::kPending && job.restarts > 0;
  return (job.state == JobState::kOther && (job.completing || ended_lately)) || requeued;
}

}  // namespace

FoldedJobs foldParts(std::vector<SlurmJob> jobs, double now) {
  std::map<uint32_t, const SlurmJob*> by_id;
  for (const auto& job : jobs) by_id[job.id] = &job;
  FoldedJobs folded;
  std::vector<const SlurmJob*> running_parts;
  for (const auto& job : jobs) {
    if (!partOf(job) || job.state == JobState::kOther) continue;
    if (ownerStillEnding(job, by_id, now)) {
      folded.ending[*partOf(job)].push_back(job.id);
      continue;
    }
    JobParts& parts = folded.parts[*partOf(job)];
    const std::string useless = uselessBecause(job, by_id, parts);
    if (!useless.empty()) {
      folded.to_cancel[job.id] = useless;
    } else if (job.state == JobState::kPending) {
      parts.pending = job.id;
    } else {
      const GpuGres gres = job.gpus_per_node.value_or(GpuGres{});
      parts.running.push_back(
          {job.id, job.nodes, gres.count, job.start_time, job.batch_host, gres.type});
    }
  }
  for (auto it = folded.parts.begin(); it != folded.parts.end();) {
    auto& running = it->second.running;
    // Submitted one at a time, one per growth: their ids are the growths' order.
    std::sort(running.begin(), running.end(),
              [](const RunningPart& a, const RunningPart& b) { return a.id < b.id; });
    it = it->second.pending || !running.empty() ? std::next(it) : folded.parts.erase(it);
  }
  std::map<uint32_t, SlurmJob> pending_parts;  // copies: `jobs` is moved from below
  for (const auto& [job_id, parts] : folded.parts) {
    if (parts.pending) pending_parts[job_id] = *by_id.at(parts.pending);
  }
  for (auto& job : jobs) {
    if (partOf(job)) continue;
    const auto parts = folded.parts.find(job.id);
    const JobParts* mine = parts == folded.parts.end() ? nullptr : &parts->second;
    if (gpusInParts(job) && job.state == JobState::kRunning) {
      const auto pending = pending_parts.find(job.id);
      foldIntoHome(job, mine, pending == pending_parts.end() ? nullptr : &pending->second,
                   folded.homes);
    } else if (mine) {
      for (const auto& part : mine->running) addPart(job, part);
    }
    folded.jobs.push_back(std::move(job));
  }
  return folded;
}

policy::Allocation RunningPart::allocation(const std::string& gpu_type) const {
  policy::Allocation part{gpu_type, {}};
  for (const auto& node : nodes) part.nodes[node] = gpus_per_node;
  return part;
}

std::vector<policy::Allocation> JobParts::runningAllocations(const std::string& gpu_type) const {
  std::vector<policy::Allocation> allocations;
  for (const auto& part : running) allocations.push_back(part.allocation(gpu_type));
  return allocations;
}

int JobParts::runningGpus() const {
  int gpus = 0;
  for (const auto& part : running) gpus += static_cast<int>(part.nodes.size()) * part.gpus_per_node;
  return gpus;
}

std::set<std::string> JobParts::batchHosts() const {
  std::set<std::string> hosts;
  for (const auto& part : running) {
    if (!part.batch_host.empty()) hosts.insert(part.batch_host);
  }
  return hosts;
}

std::vector<SlurmNode> nodesAfterMoves(std::vector<SlurmNode> nodes,
                                       const std::vector<SlurmJob>& jobs,
                                       const std::map<uint32_t, JobParts>& parts,
                                       const std::map<uint32_t, PartMove>& moving) {
  std::map<std::string, SlurmNode*> by_name;
  for (auto& node : nodes) by_name[node.name] = &node;
  std::map<uint32_t, const SlurmJob*> by_id;
  for (const auto& job : jobs) by_id[job.id] = &job;
  for (const auto& [job_id, move] : moving) {
    const auto mine = parts.find(job_id);
    if (mine == parts.end()) continue;
    for (const RunningPart& part : mine->second.running) {
      const bool outside = std::any_of(part.nodes.begin(), part.nodes.end(), [&](const auto& node) {
        return move.target.nodes.count(node) == 0;
      });
      const auto slurm = by_id.find(part.id);
      if (outside && slurm != by_id.end()) release(by_name, *slurm->second);
    }
  }
  return nodes;
}

namespace {

// The GPUs the running parts hold beyond `current` (the target of a live move or shrink the
// job is seen on), of the type of the first part holding some; nullopt: none.
std::optional<policy::Allocation> leavingOutside(const policy::Allocation& current,
                                                 const JobParts& parts) {
  std::optional<policy::Allocation> leaving;
  std::map<std::string, int> held;
  for (const RunningPart& part : parts.running) {
    const std::string& type = part.gpu_type.empty() ? current.gpu_type : part.gpu_type;
    for (const auto& node : part.nodes) {
      const auto kept = current.nodes.find(node);
      const int within = type == current.gpu_type && kept != current.nodes.end() ? kept->second : 0;
      const int beyond = (held[node] += part.gpus_per_node) - within;
      if (beyond <= 0) continue;
      if (!leaving) leaving = policy::Allocation{type, {}};
      leaving->nodes[node] = beyond;
    }
  }
  return leaving;
}

}  // namespace

void markParts(policy::Snapshot& snapshot, const std::map<uint32_t, JobParts>& parts) {
  for (auto& job : snapshot.jobs) {
    if (!job.current) continue;
    const auto mine = parts.find(static_cast<uint32_t>(std::stoul(job.id)));
    if (mine == parts.end()) continue;
    // Those within what it holds: a moving job is seen on its target, without its old parts.
    for (auto& part : mine->second.runningAllocations(job.current->gpu_type)) {
      const bool within = std::all_of(part.nodes.begin(), part.nodes.end(), [&](const auto& node) {
        const auto held = job.current->nodes.find(node.first);
        return held != job.current->nodes.end() && held->second >= node.second;
      });
      if (within) job.parts.push_back(std::move(part));
    }
    if (!job.parts.empty()) job.batch_hosts = mine->second.batchHosts();
    job.leaving = leavingOutside(*job.current, mine->second);
  }
}

std::optional<std::vector<std::string>> partGrowthNodes(
    const policy::Allocation& current, const policy::Allocation& target,
    const std::vector<policy::Allocation>& parts) {
  if (target.totalGpus() <= current.totalGpus() ||
      !policy::changesInPlace(current, target, parts)) {
    return std::nullopt;
  }
  std::vector<std::string> nodes;
  for (const auto& [node, gpus] : policy::addedTo(current, target).nodes) nodes.push_back(node);
  return nodes;
}

const RunningPart* droppedRunningPart(const policy::Allocation& current,
                                      const policy::Allocation& target, const JobParts& parts) {
  const auto dropped =
      policy::droppedPart(current, target, parts.runningAllocations(current.gpu_type));
  return dropped ? &parts.running[*dropped] : nullptr;
}

std::optional<PartShrink> shrunkRunningPart(const policy::Allocation& current,
                                            const policy::Allocation& target,
                                            const JobParts& parts) {
  const auto shrunk = policy::shrunkPart(
      current, target, parts.runningAllocations(current.gpu_type), parts.batchHosts());
  if (!shrunk) return std::nullopt;
  PartShrink shrink{&parts.running[*shrunk], {}};
  for (const auto& node : shrink.part->nodes) {
    if (!target.nodes.count(node) || target.nodes.at(node) < current.nodes.at(node)) {
      shrink.leaving.push_back(node);
    }
  }
  return shrink;
}

const RunningPart* JobParts::leaving(const PartLeave& leave) const {
  if (running.empty()) return nullptr;
  if (!leave.part) return &running.back();
  const auto part = std::find_if(running.begin(), running.end(),
                                 [&](const RunningPart& mine) { return mine.id == leave.part; });
  return part == running.end() ? nullptr : &*part;
}

std::vector<Action> planPartActions(std::vector<Action> actions,
                                    const std::vector<SlurmJob>& folded,
                                    const std::map<uint32_t, JobParts>& parts, PartRound& round) {
  std::map<uint32_t, const SlurmJob*> by_id;
  for (const auto& job : folded) by_id[job.id] = &job;
  std::vector<Action> planned;
  std::set<uint32_t> settled;  // jobs whose part this round already acted on
  // A running part's workers leave (or have left: the report no longer counts them), those
  // on `nodes` only where some are named: the job's agent then shrinks the part to the others.
  const auto leave = [&](uint32_t job_id, const RunningPart& part,
                         const std::vector<std::string>& nodes) {
    settled.insert(job_id);
    const auto holds = [&](const std::string& node) {
      return std::find(part.nodes.begin(), part.nodes.end(), node) != part.nodes.end();
    };
    if (!nodes.empty() && std::none_of(nodes.begin(), nodes.end(), holds)) return;  // shrunk
    const auto asked = round.leaving_since.find(job_id);
    const double since = asked == round.leaving_since.end() ? round.now : asked->second.since;
    const std::string job = "JobId=" + std::to_string(job_id);
    if (!round.joined.count(job_id) && nodes.empty()) {
      planned.push_back(cancelOf(part.id, job_id,
                                 "live shrink of " + job + ": its part on " +
                                     commaJoined(part.nodes) + " ends, its workers left"));
    } else if (round.now - since > kPartLeaveTimeoutS) {
      planned.push_back(cancelOf(part.id, job_id,
                                 "live shrink of " + job + ": its part's workers on " +
                                     commaJoined(nodes.empty() ? part.nodes : nodes) +
                                     " did not leave (or the part was not shrunk) within " +
                                     std::to_string(int(kPartLeaveTimeoutS)) +
                                     " s; the part ends with them"));
    } else {
      // Asked (again): the job's agent has them leave, then shrinks a part that stays.
      round.leaving[job_id] = {part.id, since, nodes};
    }
  };
  for (const auto& [job_id, asked] : round.leaving_since) {
    const auto mine = parts.find(job_id);
    const RunningPart* part = mine == parts.end() ? nullptr : mine->second.leaving(asked);
    if (part) leave(job_id, *part, asked.nodes);
  }
  for (const uint32_t home : round.homes) {
    const auto own = parts.find(home);
    if (requeueUnplacedHome(home, own == parts.end() ? nullptr : &own->second, round, planned)) {
      settled.insert(home);
    }
  }
  for (auto& action : actions) {
    const uint32_t job_id = action.job_id;
    const auto job = by_id.find(job_id);
    const auto own = parts.find(job_id);
    const bool in_parts = job != by_id.end() && gpusInParts(*job->second);
    const bool in_running_parts = in_parts && own != parts.end() && !own->second.running.empty();
    if (in_running_parts && action.kind == ActionKind::kRequeue && action.nodes.empty()) {
      restartInNewParts(job_id, own->second, action.why, planned);  // it gets no GPU
      settled.insert(job_id);
      continue;
    }
    if (in_parts && !in_running_parts) {
      if (settled.count(job_id)) continue;
      auto home_actions =
          planHomeAction(action, own == parts.end() ? nullptr : &own->second, round);
      if (home_actions) {
        for (auto& home_action : *home_actions) planned.push_back(std::move(home_action));
        settled.insert(job_id);
        continue;
      }
    }
    const bool movable = action.kind == ActionKind::kRequeue || action.kind == ActionKind::kShrink;
    const auto current = job == by_id.end() ? std::nullopt : currentAllocation(*job->second);
    if (!movable || !current || !round.grows_live.count(job_id) || action.nodes.empty() ||
        settled.count(job_id)) {
      if (!settled.count(job_id)) planned.push_back(std::move(action));
      continue;
    }
    const JobParts none;
    const JobParts& mine = own == parts.end() ? none : own->second;
    const policy::Allocation target = targetOf(action);
    const auto added =
        partGrowthNodes(*current, target, mine.runningAllocations(current->gpu_type));
    const bool joining = !mine.running.empty() && !round.joined.count(job_id);
    const RunningPart* dropped = droppedRunningPart(*current, target, mine);
    const auto shrunk = dropped ? std::nullopt : shrunkRunningPart(*current, target, mine);
    // One part joins at a time, and workers leave only once all joined (a join that ends
    // after the last report would lose its workers as in a failure): the change waits.
    const bool moves = in_parts && !added && !dropped && !shrunk && action.restarted_for.empty() &&
                       policy::movesBeside(*current, target);
    if (joining && (added || dropped || shrunk || moves)) continue;
    if (dropped) {
      leave(job_id, *dropped, {});
    } else if (shrunk) {
      leave(job_id, *shrunk->part, shrunk->leaving);
    } else if (added &&
               round.now - round.growing_since.try_emplace(job_id, round.now).first->second >
                   kPartStartTimeoutS) {
      round.growth_failed.insert(job_id);
      if (mine.pending) {
        planned.push_back(cancelOf(mine.pending, job_id,
                                   "JobId=" + std::to_string(job_id) + "'s part did not run within " +
                                       std::to_string(int(kPartStartTimeoutS)) +
                                       " s; the job grows by requeue from now on"));
      }
      action.why += " (its part did not run within " + std::to_string(int(kPartStartTimeoutS)) +
                    " s: by requeue)";
      planned.push_back(std::move(action));
    } else if (added && mine.pending) {
      round.growing[job_id] = round.growing_since.at(job_id);
      Action start = action;
      start.job_id = mine.pending;
      start.kind = ActionKind::kStart;
      start.owner = job_id;
      start.nodes = *added;
      start.gpus_per_node = policy::uniformPerNode(*current);  // as many as the job's, each node
      start.why = "live growth of JobId=" + std::to_string(job_id) + ": part on " +
                  commaJoined(*added) + " (" + action.why + ")";
      planned.push_back(std::move(start));
    } else if (added) {
      round.growing[job_id] = round.growing_since.at(job_id);
      round.wanted.insert(job_id);  // the launcher submits a part; a later round places it
    } else if (moves &&
               round.now - round.growing_since.try_emplace(job_id, round.now).first->second >
                   kPartStartTimeoutS) {
      abandonMove(job_id, mine, action.why, planned);
    } else if (moves && mine.pending) {
      Action start = action;
      start.job_id = mine.pending;
      start.kind = ActionKind::kStart;
      start.owner = job_id;
      start.nodes = nodesOf(target);
      start.gpus_per_node = policy::uniformPerNode(target);
      start.moves_to = target;
      start.why = "live move of " + jobName(job_id) + ": part on " + commaJoined(start.nodes) +
                  ", its parts on " + commaJoined(job->second->nodes) +
                  " leave once it has joined (" + action.why + ")";
      planned.push_back(std::move(start));
    } else if (moves) {
      round.growing[job_id] = round.growing_since.at(job_id);
      round.wanted.insert(job_id);  // the launcher submits a part; a later round places it
    } else if (in_parts) {
      restartInNewParts(job_id, mine, action.why, planned);
    } else {
      if (!mine.running.empty() && action.kind == ActionKind::kShrink) {
        // Its step spans the parts' workers: only a requeue (which ends them) moves it.
        action.kind = ActionKind::kRequeue;
        action.live = false;
        action.why += " (it holds parts: by requeue)";
      }
      planned.push_back(std::move(action));
      continue;
    }
    settled.insert(job_id);
  }
  for (const auto& [job_id, move] : round.moving) {
    const auto own = parts.find(job_id);
    if (settled.count(job_id) || own == parts.end()) continue;  // its old part is leaving
    planMove(job_id, move, own->second, round, planned, leave);
  }
  for (const auto& [job_id, since] : round.checkpointing_since) {
    const auto mine = parts.find(job_id);
    if (mine == parts.end() || round.now - since <= kCheckpointTimeoutS) continue;
    settled.insert(job_id);
    for (const auto& part : mine->second.running) {
      planned.push_back(cancelOf(part.id, job_id,
                                 "restart of " + jobName(job_id) + " in new parts: its part on " +
                                     commaJoined(part.nodes) + " did not checkpoint within " +
                                     std::to_string(int(kCheckpointTimeoutS)) + " s"));
    }
  }
  for (const auto& [job_id, mine] : parts) {
    const bool late = !mine.running.empty() && !round.joined.count(job_id) &&
                      round.now - mine.running.back().since > kPartJoinTimeoutS;
    if (!late || settled.count(job_id)) continue;
    round.growth_failed.insert(job_id);
    planned.push_back(cancelOf(mine.running.back().id, job_id, "its workers did not join JobId=" +
                                                         std::to_string(job_id) + " within " +
                                                         std::to_string(int(kPartJoinTimeoutS)) +
                                                         " s; the job grows by requeue from now on"));
  }
  return planned;
}

}  // namespace pollux::service
