#include "snapshot_builder.hpp"

#include <algorithm>

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

// Up, not drained and with a CPU left: a node where Slurm can start another job.
bool takesJobs(const SlurmNode& node) { return node.usable && node.free_cpus > 0; }

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
// the nodes cannot take now (down since, or their GPUs, CPUs or memory taken) is no
// placement: Slurm would not start it there, so it is redone. A job Pollux placed before
// keeps its placement when its eligibility lies ahead: Slurm's requeue pushed it out after
// the placement (by its requeue delay), and the placement is then only released again.
std::optional<policy::Allocation> startingAllocation(
    const SlurmJob& job, const std::map<std::string, std::string>& types, StartingRoom& room,
    double now, bool placed_before) {
  if (job.state != JobState::kPending || !job.adaptive || job.held ||
      (job.eligible_time > now && !placed_before) ||
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
  // A declared length whose work is done is no declaration the policy can use: the job
  // trains on (its trainer misjudged it) and is scheduled as undeclared.
  if (report.length && report.length->progress < report.length->target) job.length = report.length;
}

policy::Job adaptiveJob(const SlurmJob& slurm, const JobRecord* record, int cluster_gpus) {
  policy::Job job;
  job.id = std::to_string(slurm.id);
  job.submit_time = slurm.submit_time;
  job.adaptive = true;
  job.min_gpus = slurm.adaptive->min_gpus;
  job.max_gpus = std::max(job.min_gpus, slurm.adaptive->max_gpus.value_or(cluster_gpus));
  job.gpu_type = slurm.adaptive->gpu_type;
  job.last_change_time = slurm.start_time;
  if (record) {
    job.restarts = record->restarts;
    if (record->last_change_time > 0) job.last_change_time = record->last_change_time;
    addModel(*record, job);
  }
  return job;
}

// Which partitions restrict their jobs: those whose nodes leave out some of the snapshot's.
// Worked out once per set of partitions (many jobs share one), not once per job.
class PartitionRestrictions {
 public:
  PartitionRestrictions(const std::map<std::string, policy::NodeSet>& partitions,
                        policy::Snapshot& snapshot)
      : partitions_(partitions), snapshot_(snapshot) {}

  // Restricts the job to the nodes of its partitions where they leave out some of the
  // snapshot's nodes, adding that node set to the snapshot (named by the partitions).
  // Partitions Slurm did not list restrict nothing.
  void apply(const SlurmJob& slurm, policy::Job& job) {
    std::string name;
    for (const auto& partition : slurm.partitions) name += (name.empty() ? "" : ",") + partition;
    if (name.empty()) return;
    const auto known = restricts_.find(name);
    const bool restricts = known != restricts_.end() ? known->second : decide(slurm, name);
    if (restricts) job.partition = name;
  }

 private:
  bool decide(const SlurmJob& slurm, const std::string& name) {
    policy::NodeSet allowed;
    bool listed = true;
    for (const auto& partition : slurm.partitions) {
      const auto members = partitions_.find(partition);
      if (members == partitions_.end()) listed = false;
      else allowed.insert(members->second.begin(), members->second.end());
    }
    const auto& nodes = snapshot_.nodes;
    const bool restricts = listed && !std::all_of(nodes.begin(), nodes.end(),
                                                  [&](const policy::Node& node) {
                                                    return allowed.count(node.name) > 0;
                                                  });
    if (restricts) snapshot_.partitions.emplace(name, std::move(allowed));
    restricts_[name] = restricts;
    return restricts;
  }

  const std::map<std::string, policy::NodeSet>& partitions_;
  policy::Snapshot& snapshot_;
  std::map<std::string, bool> restricts_;  // by comma-joined partition names
};

// A pending rigid job that asked for GPUs: demand the adaptive jobs yield to.
std::optional<policy::Job> waitingRigidJob(const SlurmJob& slurm) {
  if (slurm.state != JobState::kPending || slurm.requested_gpus.count <= 0) return std::nullopt;
  policy::Job job;
  job.id = std::to_string(slurm.id);
  job.submit_time = slurm.submit_time;
  job.adaptive = false;
  job.min_gpus = job.max_gpus = slurm.requested_gpus.count;
  if (!slurm.requested_gpus.type.empty()) job.gpu_type = slurm.requested_gpus.type;
  return job;
}

// A pending job Pollux has never placed whose eligibility lies ahead: the user's --begin.
// (A job Pollux requeued also waits for eligibility, but Pollux resets that itself.)
bool waitsForUserBeginTime(const SlurmJob& slurm, const JobRecord* record, double now) {
  return slurm.state == JobState::kPending && slurm.eligible_time > now && !placedBefore(record);
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
                               const config::PolicyConfig& config,
                               const std::map<std::string, policy::NodeSet>& partitions) {
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
  PartitionRestrictions restrictions(partitions, snapshot);
  for (const auto& slurm : jobs) {
    if (slurm.state == JobState::kOther) continue;
    std::optional<policy::Job> job;
    if (slurm.adaptive) {
      const auto found = records.find(std::to_string(slurm.id));
      const JobRecord* record = found == records.end() ? nullptr : &found->second;
      if (waitsForUserBeginTime(slurm, record, now)) continue;
      job = adaptiveJob(slurm, record, std::max(cluster_gpus, 1));
      job->current = runningAllocation(slurm, node_types);
      if (!job->current) {
        job->current = startingAllocation(slurm, node_types, room, now, placedBefore(record));
      }
    } else {
      job = waitingRigidJob(slurm);
    }
    if (!job) continue;
    job->demand = slurm.demand;
    restrictions.apply(slurm, *job);
    snapshot.jobs.push_back(std::move(*job));
  }
  setCapacities(snapshot.nodes, nodes, running);
  return snapshot;
}

}  // namespace pollux::service
