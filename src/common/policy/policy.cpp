#include "policy/policy.hpp"

#include <algorithm>
#include <chrono>

#include "policy/configurations.hpp"
#include "policy/job_goodput.hpp"
#include "policy/milp.hpp"
#include "policy/objective.hpp"
#include "policy/partition.hpp"
#include "policy/placement.hpp"
#include "policy/validation.hpp"

namespace pollux::policy {

int Allocation::totalGpus() const {
  int total = 0;
  for (const auto& [name, gpus] : nodes) total += gpus;
  return total;
}

bool Allocation::operator==(const Allocation& other) const {
  return gpu_type == other.gpu_type && nodes == other.nodes;
}

namespace {

// A job the MILP decides on: adaptive, or rigid and waiting.
struct Contender {
  const Job* job;
  JobGoodput goodput;
  std::vector<JobOption> options;
};

bool isFixed(const Job& job) { return !job.adaptive && job.current.has_value(); }

std::map<std::string, int> fixedUsage(const std::vector<Job>& jobs) {
  std::map<std::string, int> usage;
  for (const auto& job : jobs) {
    if (!isFixed(job)) continue;
    for (const auto& [name, gpus] : job.current->nodes) usage[name] += gpus;
  }
  return usage;
}

std::vector<Contender> contendersOf(const Snapshot& snapshot, const ClusterShape& cluster) {
  const bool rigid_waiting = std::any_of(snapshot.jobs.begin(), snapshot.jobs.end(),
                                         [](const Job& job) { return !job.adaptive && !job.current; });
  std::vector<Contender> contenders;
  std::vector<std::vector<JobOption>> adaptive;
  std::vector<std::vector<JobOption>> rigid;
  for (const auto& job : snapshot.jobs) {
    if (isFixed(job)) continue;
    Contender contender{&job, JobGoodput(job, snapshot.params.relative_speeds, cluster), {}};
    const auto candidates = candidateConfigs(job, cluster);
    if (job.adaptive) {
      adaptive.push_back(
          adaptiveOptions(job, candidates, contender.goodput, snapshot, rigid_waiting));
    } else {
      std::vector<JobOption> options;
      for (const auto& config : candidates) options.push_back({config, 1.0, 1.0});
      rigid.push_back(options);
    }
    contenders.push_back(std::move(contender));
  }
  prioritise(adaptive, rigid);
  auto next_adaptive = adaptive.begin();
  auto next_rigid = rigid.begin();
  for (auto& contender : contenders) {
    contender.options = std::move(contender.job->adaptive ? *next_adaptive++ : *next_rigid++);
  }
  return contenders;
}

MilpInput milpInput(const std::vector<Contender>& contenders, const ClusterShape& cluster,
                    const Snapshot& snapshot, const std::map<std::string, int>& reserved) {
  std::map<std::string, int> type_index;
  MilpInput input;
  for (const auto& [type, shape] : cluster) {
    type_index[type] = static_cast<int>(input.types.size());
    input.types.push_back({0, 0});
  }
  for (const auto& node : snapshot.nodes) {
    if (node.gpus <= 0) continue;
    const auto used = reserved.find(node.name);
    const int taken = used == reserved.end() ? 0 : used->second;
    MilpTypeCapacity& capacity = input.types[type_index.at(node.gpu_type)];
    capacity.gpus += node.gpus - taken;
    if (taken == 0 && node.gpus == cluster.at(node.gpu_type).largest_node) ++capacity.whole_nodes;
  }
  for (const auto& contender : contenders) {
    std::vector<MilpOption> options;
    for (const auto& option : contender.options) {
      const Config& config = option.config;
      const int whole = config.nodes > 1 ? config.gpus / cluster.at(config.gpu_type).largest_node : 0;
      options.push_back({type_index.at(config.gpu_type), config.gpus, whole, option.weight});
    }
    input.jobs.push_back(std::move(options));
  }
  input.time_limit_s = snapshot.params.time_limit_s;
  return input;
}

// The job's other options on the same type with fewer GPUs, largest first.
std::vector<Config> smallerConfigs(const Contender& contender, const Config& chosen) {
  std::vector<Config> smaller;
  for (const auto& option : contender.options) {
    if (option.config.gpu_type == chosen.gpu_type && option.config.gpus < chosen.gpus) {
      smaller.push_back(option.config);
    }
  }
  std::sort(smaller.begin(), smaller.end(),
            [](const Config& a, const Config& b) { return a.gpus > b.gpus; });
  return smaller;
}

JobDecision decide(Contender& contender, const Allocation& allocation) {
  JobDecision decision{allocation, 0, 0, 0};
  if (!contender.job->adaptive) return decision;
  if (const auto batch = contender.goodput.best(configOf(allocation))) {
    decision.batch_size = batch->batch_size;
    decision.local_bsz = batch->local_bsz;
    decision.accum_steps = batch->accum_steps;
  }
  return decision;
}

void keepFixed(const Snapshot& snapshot, Decision& decision) {
  for (const auto& job : snapshot.jobs) {
    if (isFixed(job)) decision.allocations[job.id] = JobDecision{*job.current, 0, 0, 0};
  }
}

void keepCurrent(std::vector<Contender>& contenders, Decision& decision) {
  decision.stats.kept_current = true;
  for (auto& contender : contenders) {
    if (contender.job->current) {
      decision.allocations[contender.job->id] = decide(contender, *contender.job->current);
    }
  }
}

void placeChosen(const Snapshot& snapshot, const std::map<std::string, int>& reserved,
                 std::vector<Contender>& contenders, const MilpResult& result,
                 Decision& decision) {
  std::vector<PlacementRequest> requests;
  std::vector<Contender*> requesters;
  for (std::size_t i = 0; i < contenders.size(); ++i) {
    if (result.chosen[i] < 0) continue;
    const Config& chosen = contenders[i].options[result.chosen[i]].config;
    requests.push_back({chosen, contenders[i].job->current, smallerConfigs(contenders[i], chosen)});
    requesters.push_back(&contenders[i]);
  }
  const PlacementResult placed = place(snapshot.nodes, reserved, requests);
  decision.stats.placement_fallbacks = placed.fallbacks;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (!placed.allocations[i]) continue;
    decision.allocations[requesters[i]->job->id] = decide(*requesters[i], *placed.allocations[i]);
  }
}

}  // namespace

Decision schedule(const Snapshot& snapshot) {
  const auto start = std::chrono::steady_clock::now();
  validate(snapshot);
  Decision decision;
  const ClusterShape cluster = shapeOf(snapshot.nodes);
  const auto reserved = fixedUsage(snapshot.jobs);
  keepFixed(snapshot, decision);
  auto contenders = contendersOf(snapshot, cluster);
  if (contenders.empty()) {
    decision.stats.solver_status = "no_jobs";
  } else {
    const MilpResult result = solvePartitioned(milpInput(contenders, cluster, snapshot, reserved),
                                               snapshot.params.partition_jobs);
    decision.stats.solver_status = result.outcome.describe();
    decision.stats.candidate_configs = result.columns;
    decision.stats.partitions = result.partitions;
    if (result.outcome.status == SolveStatus::kOptimal ||
        result.outcome.status == SolveStatus::kFeasible) {
      placeChosen(snapshot, reserved, contenders, result, decision);
      decision.stats.objective = result.objective;
    } else {
      keepCurrent(contenders, decision);
    }
  }
  decision.stats.solve_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return decision;
}

}  // namespace pollux::policy
