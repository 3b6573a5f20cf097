// SPDX-License-Identifier: GPL-2.0-or-later
#include "snapshot_builder.hpp"

#include <algorithm>
#include <limits>
#include <set>
#include <tuple>

#include "common/slurm_text/node_list.hpp"
#include "job_parts.hpp"
#include "site_limits.hpp"
#include "site_policy.hpp"

namespace pollux::service {

namespace {

// Where each GPU node's GPUs are, by the policy's type names.
std::map<std::string, std::string> gpuTypesOf(const std::vector<SlurmNode>& nodes) {
  std::map<std::string, std::string> types;
  for (const auto& node : nodes) {
    if (node.gpus.count > 0) types[node.name] = gpuTypeOf(node.gpus);
  }
  return types;
}

// `gpus` GPUs on each of `nodes`, of the type of the nodes (a job's request may be untyped);
// none if a node has no GPUs or is unknown.
std::optional<policy::Allocation> allocationOn(const std::vector<std::string>& nodes, int gpus,
                                               const std::map<std::string, std::string>& types) {
  const auto node_type = types.find(nodes.front());
  if (node_type == types.end()) return std::nullopt;
  policy::Allocation allocation{node_type->second, {}};
  for (const auto& node : nodes) {
    if (types.count(node) == 0) return std::nullopt;
    allocation.nodes[node] = gpus;
  }
  return allocation;
}

// Where a running adaptive job sits: the GPUs per node Pollux gave it on each of its nodes.
std::optional<policy::Allocation> runningAllocation(const SlurmJob& job,
                                                    const std::map<std::string, std::string>& types) {
  if (!job.adaptive || job.state != JobState::kRunning || !job.gpus_per_node ||
      job.gpus_per_node->count <= 0 || job.nodes.empty()) {
    return std::nullopt;
  }
  return allocationOn(job.nodes, job.gpus_per_node->count, types);
}

using RunningJobs = std::vector<std::pair<const SlurmJob*, policy::Allocation>>;

// The snapshot's running jobs: the adaptive ones. A running rigid job is no decision of the
// policy's; the GPUs it holds, in whatever form it asked, are simply not free (Slurm's count).
RunningJobs runningAdaptiveJobs(const std::vector<SlurmJob>& jobs,
                                const std::map<std::string, std::string>& types) {
  RunningJobs running;
  for (const auto& job : jobs) {
    if (auto allocation = runningAllocation(job, types)) running.emplace_back(&job, *allocation);
  }
  return running;
}

std::map<std::string, int> gpusHeld(const RunningJobs& running) {
  std::map<std::string, int> held;
  for (const auto& [job, allocation] : running) {
    for (const auto& [node, gpus] : allocation.nodes) held[node] += gpus;
  }
  return held;
}

int heldOn(const std::map<std::string, int>& held, const std::string& node) {
  const auto found = held.find(node);
  return found == held.end() ? 0 : found->second;
}

// Up, not drained, with a CPU left and its slurmd registered since slurmctld started: a node
// where Slurm can start another job. (After a restart slurmctld shows nodes in their saved
// state until they register; a job started there meanwhile failed its first step on 22.05,
// "Invalid generic resource (gres) specification".)
bool takesJobs(const SlurmNode& node) {
  return node.usable && node.registered && node.free_cpus > 0;
}

// GPUs of each node for the snapshot's jobs: those the snapshot's running jobs hold, plus on
// a node that takes jobs those no job holds. (Slurm's count of the GPUs in use includes
// running rigid and completing jobs; it may lag a job the snapshot has.)
std::vector<policy::Node> snapshotNodes(const std::vector<SlurmNode>& nodes,
                                        const std::map<std::string, int>& held) {
  std::vector<policy::Node> out;
  for (const auto& node : nodes) {
    if (node.gpus.count <= 0) continue;
    const int ours = heldOn(held, node.name);
    const int free = std::max(node.gpus.count - std::max(node.gpus_used, ours), 0);
    const int offered = ours + (takesJobs(node) ? free : 0);
    if (offered > 0) out.push_back({node.name, gpuTypeOf(node.gpus), offered});
  }
  return out;
}

// What no job holds on each usable node, for the placed jobs that have not started yet.
class StartingRoom {
 public:
  StartingRoom(const std::vector<SlurmNode>& nodes, const std::map<std::string, int>& held) {
    for (const auto& node : nodes) {
      if (!takesJobs(node)) continue;
      const int free_gpus = node.gpus.count - std::max(node.gpus_used, heldOn(held, node.name));
      rooms_[node.name] =
          policy::NodeRoom{free_gpus, node.free_cpus, node.free_memory_mb, node.memory_mb};
    }
  }

  // Claims `gpus` GPUs on each of `nodes` with the job's CPUs and memory; false, claiming
  // nothing, where a node cannot take them now (Slurm would not start the job there).
  bool claim(const std::vector<std::string>& nodes, int gpus, const policy::NodeDemand& demand) {
    for (const auto& name : nodes) {
      const auto room = rooms_.find(name);
      if (room == rooms_.end() || !room->second.takes(gpus, demand)) return false;
    }
    for (const auto& name : nodes) rooms_.at(name).take(gpus, demand);
    return true;
  }

 private:
  std::map<std::string, policy::NodeRoom> rooms_;
};

bool placedBefore(const JobRecord* record) { return record && record->last_change_time > 0; }

// Where a pending adaptive job Pollux has placed (released, ReqNodeList and GPUs set) is
// about to start. The policy treats it as the job's current allocation, so anti-thrashing
// keeps it while Slurm starts the job rather than re-deciding it every round. A placement
// Slurm refuses (its Reason) is none either, nor is a job held by anyone. A placement
// the nodes cannot take now (down since, or their GPUs, CPUs or memory taken) is no
// placement: Slurm would not start it there, so it is redone. A job Pollux placed before
// keeps its placement when its eligibility lies ahead: Slurm's requeue pushed it out after
// the placement (by its requeue delay), and the placement is then only released again.
std::optional<policy::Allocation> startingAllocation(
    const SlurmJob& job, const std::map<std::string, std::string>& types, StartingRoom& room,
    double now, bool placed_before) {
  if (job.state != JobState::kPending || !job.adaptive || job.held || heldByPollux(job) ||
      refusesPlacement(job.state_reason) || (job.eligible_time > now && !placed_before) ||
      !job.gpus_per_node || job.gpus_per_node->count <= 0 || job.requested_nodes.empty()) {
    return std::nullopt;
  }
  auto allocation = allocationOn(job.requested_nodes, job.gpus_per_node->count, types);
  if (!allocation || !room.claim(job.requested_nodes, job.gpus_per_node->count, job.demand)) {
    return std::nullopt;
  }
  return allocation;
}

// CPUs and memory the snapshot's running jobs hold on a node, by their requests.
struct Held {
  int cpus = 0;
  std::int64_t memory_mb = 0;
  bool all_memory = false;  // a job without a memory request holds all of it
};

std::map<std::string, Held> heldOnNodes(const RunningJobs& running) {
  std::map<std::string, Held> held;
  for (const auto& [job, allocation] : running) {
    for (const auto& [name, gpus] : allocation.nodes) {
      Held& node = held[name];
      node.cpus += job->demand.cpusFor(gpus);
      if (job->demand.whole_node_memory) node.all_memory = true;
      else node.memory_mb += job->demand.memoryFor(gpus);
    }
  }
  return held;
}

// CPUs and memory of each node for the snapshot's jobs: what no job holds plus what the
// snapshot's running jobs hold there, counted as the placement charges them.
void setCapacities(std::vector<policy::Node>& snapshot_nodes, const std::vector<SlurmNode>& nodes,
                   const RunningJobs& running) {
  std::map<std::string, const SlurmNode*> slurm_nodes;
  for (const auto& node : nodes) slurm_nodes[node.name] = &node;
  const auto held = heldOnNodes(running);
  for (auto& node : snapshot_nodes) {
    const SlurmNode& slurm = *slurm_nodes.at(node.name);
    const auto on_node = held.find(node.name);
    const Held holding = on_node == held.end() ? Held{} : on_node->second;
    node.cpus = std::max(slurm.free_cpus, 0) + holding.cpus;
    if (!slurm.memory_mb || !slurm.free_memory_mb) continue;
    node.memory_mb =
        holding.all_memory ? *slurm.memory_mb : *slurm.free_memory_mb + holding.memory_mb;
  }
}

void addModel(const JobRecord& record, policy::Job& job) {
  if (!record.report) return;
  const schema::GoodputReport& report = *record.report;
  job.models = report.perf_params;
  job.grad = report.grad;
  job.limits = report.limits;
  job.restart_cost_s = report.restart_cost_s.value_or(0.0);
  job.live_resize_cost_s = report.resize_stall_s;
  // Its workers join it live through a part (job_parts.hpp): its joiners take what they took
  // last, or, until some joined, as long as a restarted worker takes to start.
  job.grows_live = report.in_place_resize && report.elastic && !record.lifecycle.grows_by_requeue;
  if (job.grows_live) job.join_startup_s = report.join_startup_s.value_or(job.restart_cost_s);
  // A job past its declared length (its trainer misjudged it) is scheduled with the length
  // doubled (policy::DeclaredLength::remaining).
  job.length = report.length;
}

policy::Job adaptiveJob(const SlurmJob& slurm, const JobRecord* record, int cluster_gpus) {
  policy::Job job;
  job.id = std::to_string(slurm.id);
  job.submit_time = slurm.submit_time;
  job.adaptive = true;
  job.min_gpus = slurm.adaptive->min_gpus;
  job.max_gpus = std::max(job.min_gpus, slurm.adaptive->max_gpus.value_or(cluster_gpus));
  job.gpu_type = slurm.adaptive->gpu_type;
  job.priority = slurm.priority;
  job.last_change_time = slurm.start_time;
  if (record) {
    job.restarts = record->restarts;
    if (record->last_change_time > 0) job.last_change_time = record->last_change_time;
    job.previous = record->previous;
    addModel(*record, job);
    job.moves_live = job.grows_live && gpusInParts(slurm);
  }
  return job;
}

// Restricts jobs to the nodes Slurm would start them on (partitions, reservations,
// constraints, excluded nodes, their user's node list), naming each distinct node set in the
// snapshot. Jobs restricted alike share one set, worked out once.
class NodeRestrictions {
 public:
  NodeRestrictions(double now, const std::vector<SlurmNode>& nodes,
                   const std::map<std::string, policy::NodeSet>& partitions,
                   const std::vector<SlurmReservation>& reservations, policy::Snapshot& snapshot)
      : now_(now), partitions_(partitions), reservations_(reservations), snapshot_(snapshot) {
    policy::NodeSet offered;
    for (const auto& node : snapshot.nodes) offered.insert(node.name);
    for (const auto& node : nodes) {
      if (offered.count(node.name)) candidates_.push_back(node);
    }
  }

  // False where no node is left to the job: Slurm would start it nowhere.
  bool apply(const NodeRules& rules, policy::Job& job) {
    const std::string name = nameOf(rules);
    auto known = allowed_.find(name);
    if (known == allowed_.end()) {
      known = allowed_.emplace(name, allowedNodes(rules, now_, candidates_, partitions_,
                                                  reservations_)).first;
      if (known->second) snapshot_.partitions.emplace(name, *known->second);
    }
    if (!known->second) return true;
    if (known->second->empty()) return false;
    job.partition = name;
    return true;
  }

 private:
  // The job's partitions (the set's name as before site policy), then each other rule it has.
  std::string nameOf(const NodeRules& rules) const {
    const SlurmJob& job = rules.job;
    std::string name = commaJoined(rules.partitions);
    const auto rule = [&](const char* key, const std::string& value) {
      if (!value.empty()) name += std::string("|") + key + "=" + value;
    };
    rule("reservation", job.reservation);
    rule("constraint", job.features);
    rule("exclude", commaJoined(job.excluded_nodes));
    rule("nodelist", commaJoined(rules.user_nodes));
    std::vector<std::string> ahead;
    for (const auto& reservation : reservations_) {
      if (reservation.start_time < rules.until && reservation.end_time > now_) {
        ahead.push_back(reservation.name);
      }
    }
    rule("reserved", commaJoined(ahead));
    return name;
  }

  double now_;
  std::vector<SlurmNode> candidates_;  // the snapshot's nodes
  const std::map<std::string, policy::NodeSet>& partitions_;
  const std::vector<SlurmReservation>& reservations_;
  policy::Snapshot& snapshot_;
  std::map<std::string, std::optional<policy::NodeSet>> allowed_;  // none: no restriction
};

// A pending rigid job that asked for GPUs and that Slurm would start once they are free: demand
// the adaptive jobs yield to. A job held, waiting for a dependency or its begin time, or kept
// back by a limit is no demand.
std::optional<policy::Job> waitingRigidJob(const SlurmJob& slurm, double now) {
  if (slurm.state != JobState::kPending || slurm.requested_gpus.count <= 0 ||
      !whyCannotStart(slurm, now, slurm.eligible_time).empty() ||
      refusesPlacement(slurm.state_reason)) {
    return std::nullopt;
  }
  policy::Job job;
  job.id = std::to_string(slurm.id);
  job.submit_time = slurm.submit_time;
  job.adaptive = false;
  job.min_gpus = job.max_gpus = slurm.requested_gpus.count;
  if (!slurm.requested_gpus.type.empty()) job.gpu_type = slurm.requested_gpus.type;
  return job;
}

// Seconds of its time limit the job has left (none if unlimited).
std::optional<double> timeLeft(const SlurmJob& slurm, double now) {
  if (slurm.time_limit_min <= 0) return std::nullopt;
  const double used = slurm.state == JobState::kRunning ? now - slurm.start_time : 0;
  return slurm.time_limit_min * 60.0 - used;
}

// When the job would end, or could be moved off its nodes: reservations that start before
// then keep it off theirs.
double occupiesUntil(const SlurmJob& slurm, const policy::Job& job, double now) {
  if (slurm.state == JobState::kRunning) return now + job.restart_cost_s + kReservationLeadS;
  const auto left = timeLeft(slurm, now);
  return left ? now + *left : std::numeric_limits<double>::infinity();
}

// A running job keeps its allocation where no change can pay: its training finished, or it
// has less time left than a restart would cost.
void keepWhereNoChangePays(const SlurmJob& slurm, const JobRecord* record, policy::Job& job,
                           double now) {
  if (!job.current) return;
  const bool finishing = record && record->lifecycle.phase == Phase::kFinishing;
  const auto left = timeLeft(slurm, now);
  if (!finishing && (!left || *left >= job.restart_cost_s + kReservationLeadS)) return;
  job.min_gpus = job.max_gpus = job.current->totalGpus();
  job.gpu_type = job.current->gpu_type;
}

// Why an adaptive job is not for the policy this round (empty if it is): Slurm would not start
// it, or Slurm refused its last placement and nothing has changed since. A refusal that
// depends on its size leaves it a smaller one instead.
std::string sitsOut(const SlurmJob& slurm, const JobRecord* record, policy::Job& job, double now) {
  if (slurm.state != JobState::kPending) return "";
  const std::string why = whyCannotStart(slurm, now, record ? record->user_begin_time : 0);
  if (!why.empty() || !record || !record->refused) return why;
  const Refusal& refused = *record->refused;
  if (refusalDependsOnSize(refused.reason) && refused.gpus > job.min_gpus) {
    job.max_gpus = std::min(job.max_gpus, refused.gpus - 1);
    return "";
  }
  return refused.reason;
}

// A job in a partition with MaxNodes (the first of `partitions`, those it may run in) holds at
// most that many of its nodes' GPUs; false (Slurm would not start it: PartitionNodeLimit) where
// that is below its minimum.
bool fitsPartitionMaxNodes(const std::vector<std::string>& partitions, const SiteRules& site,
                           const std::vector<SlurmNode>& nodes, policy::Job& job) {
  if (partitions.empty()) return true;
  const auto max_nodes = site.partition_max_nodes.find(partitions.front());
  const auto members = site.partitions.find(partitions.front());
  if (max_nodes == site.partition_max_nodes.end() || members == site.partitions.end()) {
    return true;
  }
  int largest = 0;
  for (const auto& node : nodes) {
    if (members->second.count(node.name)) largest = std::max(largest, node.gpus.count);
  }
  const int most = max_nodes->second * largest;
  if (most < job.min_gpus) return false;
  job.max_gpus = std::min(job.max_gpus, most);
  return true;
}

// The site's limits a job is under: none if it may not start whatever its size (a limit on
// running jobs, or a cap or a budget below its minimum), the Reason then in `why`. Otherwise
// its maximum capped and its budgets named, each budget's capacity entered in `snapshot`.
class LimitsApplier {
 public:
  LimitsApplier(const SiteLimits* limits, const std::vector<SlurmNode>& nodes,
                const RunningJobs& running, policy::Snapshot& snapshot)
      : limits_(limits), snapshot_(snapshot) {
    if (!limits_) return;
    for (const auto& node : nodes) {
      largest_node_gpus_ = std::max(largest_node_gpus_, node.gpus.count);
      largest_node_memory_mb_ = std::max(largest_node_memory_mb_, node.memory_mb.value_or(0));
    }
    for (const auto& [slurm, allocation] : running) {
      const GpuCharge charge = chargeOf(slurm->demand, largest_node_memory_mb_);
      for (const auto& budget : limits_->budgetsOf(*slurm)) {
        held_[budget.name] += allocation.totalGpus() * budget.perGpu(charge) +
                              std::int64_t(allocation.nodes.size()) * budget.perNode();
      }
    }
  }

  // False, with Slurm's Reason in `why`, where the job may not start whatever its size.
  bool apply(const SlurmJob& slurm, policy::Job& job, std::string& why) {
    if (!limits_) return true;
    const auto kept_back = [&](std::string reason) {
      why = std::move(reason);
      return false;
    };
    const bool pending = slurm.state == JobState::kPending;
    if (pending && slurm.adaptive) why = limits_->runningJobsLimit(slurm);
    if (!why.empty()) return false;
    const GpuCharge charge = chargeOf(slurm.demand, largest_node_memory_mb_);
    if (const auto cap = limits_->gpusPerJob(slurm, charge, largest_node_gpus_)) {
      if (cap->gpus < job.min_gpus && pending) return kept_back(cap->reason);
      job.max_gpus = std::max(job.min_gpus, std::min(job.max_gpus, cap->gpus));
    }
    for (const auto& budget : limits_->budgetsOf(slurm)) {
      const auto held = held_.find(budget.name);
      const std::int64_t capacity = budget.capacity(held == held_.end() ? 0 : held->second);
      const policy::BudgetUse use{budget.name, budget.perGpu(charge), budget.perNode()};
      if (capacity < use.unitsFor(job.min_gpus, 1) && pending) {
        return kept_back(SiteLimits::reasonOf(budget.name));
      }
      snapshot_.budgets[budget.name] = capacity;
      job.budgets.push_back(use);
    }
    return true;
  }

 private:
  const SiteLimits* limits_;
  policy::Snapshot& snapshot_;
  int largest_node_gpus_ = 1;
  std::int64_t largest_node_memory_mb_ = 1;
  // What the snapshot's running jobs hold, by budget (GPUs, CPUs, MB or nodes)
  std::map<std::string, std::int64_t> held_;
};

// Pending jobs whose licenses are not free (Slurm's Reason: Licenses). Jobs take them in the
// order Slurm would start them: those Pollux placed first, then by priority, then by
// submission. Jobs held or waiting for a dependency take none.
std::set<uint32_t> jobsWithoutLicenses(const std::vector<SlurmJob>& jobs, const SiteRules& site,
                                       double now) {
  std::vector<const SlurmJob*> claimants;
  for (const auto& job : jobs) {
    if (job.state == JobState::kPending && !job.licenses.empty() && !job.held &&
        job.dependency.empty()) {
      claimants.push_back(&job);
    }
  }
  const auto placed = [](const SlurmJob* job) {
    return job->adaptive && !heldByPollux(*job) && !job->requested_nodes.empty();
  };
  std::sort(claimants.begin(), claimants.end(), [&](const SlurmJob* a, const SlurmJob* b) {
    return std::make_tuple(!placed(a), -static_cast<double>(a->priority), a->submit_time, a->id) <
           std::make_tuple(!placed(b), -static_cast<double>(b->priority), b->submit_time, b->id);
  });
  LicensePool pool(site.licenses, site.reservations, now);
  std::set<uint32_t> without;
  for (const SlurmJob* job : claimants) {
    if (!pool.take(*job)) without.insert(job->id);
  }
  return without;
}

}  // namespace

model::RelativeSpeeds relativeSpeeds(const std::vector<SlurmNode>& nodes,
                                     const config::PolicyConfig& config) {
  model::RelativeSpeeds speeds = config.policy.relative_speeds;
  for (const auto& node : nodes) {
    if (node.gpus.count > 0) speeds.emplace(gpuTypeOf(node.gpus), config.default_speed);
  }
  return speeds;
}

policy::Snapshot buildSnapshot(double now, const std::vector<SlurmNode>& nodes,
                               const std::vector<SlurmJob>& jobs,
                               const std::map<std::string, JobRecord>& records,
                               const config::PolicyConfig& config, const SiteRules& site,
                               std::map<std::string, std::string>* waiting) {
  policy::Snapshot snapshot;
  snapshot.time = now;
  snapshot.params = config.policy;
  snapshot.params.relative_speeds = relativeSpeeds(nodes, config);
  const auto node_types = gpuTypesOf(nodes);
  const RunningJobs running = runningAdaptiveJobs(jobs, node_types);
  const auto held = gpusHeld(running);
  snapshot.nodes = snapshotNodes(nodes, held);
  int cluster_gpus = 0;
  for (const auto& node : snapshot.nodes) cluster_gpus += node.gpus;
  StartingRoom room(nodes, held);
  NodeRestrictions restrictions(now, nodes, site.partitions, site.reservations, snapshot);
  LimitsApplier site_limits(site.limits ? &*site.limits : nullptr, nodes, running, snapshot);
  const auto wait = [&](const SlurmJob& slurm, const std::string& why) {
    if (waiting) (*waiting)[std::to_string(slurm.id)] = why;
  };
  const std::vector<std::string> no_nodes;
  const auto without_licenses = jobsWithoutLicenses(jobs, site, now);
  for (const auto& slurm : jobs) {
    if (slurm.state == JobState::kOther) continue;
    if (without_licenses.count(slurm.id)) {
      if (slurm.adaptive) wait(slurm, "Licenses");
      continue;
    }
    std::optional<policy::Job> job;
    const JobRecord* record = nullptr;
    if (slurm.adaptive) {
      const auto found = records.find(std::to_string(slurm.id));
      record = found == records.end() ? nullptr : &found->second;
      job = adaptiveJob(slurm, record, std::max(cluster_gpus, 1));
      if (const std::string why = sitsOut(slurm, record, *job, now); !why.empty()) {
        wait(slurm, why);
        continue;
      }
      job->current = runningAllocation(slurm, node_types);
      if (!job->current) {
        job->current = startingAllocation(slurm, node_types, room, now, placedBefore(record));
      }
      keepWhereNoChangePays(slurm, record, *job, now);
    } else {
      job = waitingRigidJob(slurm, now);
    }
    if (!job) continue;
    std::string why;
    const auto partitions = partitionsWithinMaxTime(slurm, site.partition_max_time_min);
    if (partitions.empty() && !slurm.partitions.empty()) {
      why = "PartitionTimeLimit";
    } else if (site_limits.apply(slurm, *job, why) &&
               !fitsPartitionMaxNodes(partitions, site, nodes, *job) &&
               slurm.state == JobState::kPending) {
      why = "PartitionNodeLimit";
    }
    if (!why.empty()) {
      if (slurm.adaptive) wait(slurm, why);
      continue;
    }
    job->demand = slurm.demand;
    // Pollux never changes a rigid job: its node list is its user's.
    const std::vector<std::string>& user_nodes =
        record ? record->user_nodes : slurm.adaptive ? no_nodes : slurm.requested_nodes;
    const NodeRules rules{slurm, partitions, user_nodes, occupiesUntil(slurm, *job, now)};
    if (!restrictions.apply(rules, *job)) {
      wait(slurm, slurm.reservation.empty() ? "ReqNodeNotAvail" : "Reservation");
      if (!job->current || slurm.state != JobState::kRunning) continue;
      job->partition.reset();  // a running job no node suits any more stays where it is
      job->min_gpus = job->max_gpus = job->current->totalGpus();
    }
    snapshot.jobs.push_back(std::move(*job));
  }
  setCapacities(snapshot.nodes, nodes, running);
  return snapshot;
}

}  // namespace pollux::service
