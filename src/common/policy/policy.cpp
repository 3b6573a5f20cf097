// SPDX-License-Identifier: GPL-2.0-or-later
#include "policy.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <future>
#include <thread>

#include "completion_time.hpp"
#include "configurations.hpp"
#include "job_goodput.hpp"
#include "milp.hpp"
#include "objective.hpp"
#include "partition.hpp"
#include "placement.hpp"
#include "validation.hpp"

namespace pollux::policy {

int Allocation::totalGpus() const {
  int total = 0;
  for (const auto& [name, gpus] : nodes) total += gpus;
  return total;
}

bool Allocation::operator==(const Allocation& other) const {
  return gpu_type == other.gpu_type && nodes == other.nodes;
}

int NodeDemand::cpusFor(int gpus) const { return std::max(cpus, cpus_per_gpu * gpus); }

std::int64_t NodeDemand::memoryFor(int gpus) const {
  return std::max({memory_mb, memory_mb_per_cpu * cpusFor(gpus), memory_mb_per_gpu * gpus});
}

bool NodeRoom::takes(int wanted_gpus, const NodeDemand& demand) const {
  if (gpus < wanted_gpus) return false;
  if (cpus && *cpus < demand.cpusFor(wanted_gpus)) return false;
  if (!memory_mb) return true;
  if (demand.whole_node_memory) return memory_mb == all_memory_mb;
  return *memory_mb >= demand.memoryFor(wanted_gpus);
}

void NodeRoom::take(int taken_gpus, const NodeDemand& demand) {
  gpus -= taken_gpus;
  if (cpus) *cpus -= demand.cpusFor(taken_gpus);
  if (!memory_mb) return;
  *memory_mb -= demand.whole_node_memory ? *memory_mb : demand.memoryFor(taken_gpus);
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

std::vector<Holding> fixedHoldings(const std::vector<Job>& jobs) {
  std::vector<Holding> holdings;
  for (const auto& job : jobs) {
    if (isFixed(job)) holdings.push_back({*job.current, job.demand});
  }
  return holdings;
}

// The nodes the job may run on (its partition's), or nullptr for any node.
const NodeSet* allowedNodes(const Job& job, const Snapshot& snapshot) {
  return job.partition ? &snapshot.partitions.at(*job.partition) : nullptr;
}

// Whether some configuration may not fit: nodes limit CPUs or memory, or jobs partitions.
bool needsPlaceableCheck(const Snapshot& snapshot) {
  const auto& nodes = snapshot.nodes;
  const auto& jobs = snapshot.jobs;
  return std::any_of(nodes.begin(), nodes.end(),
                     [](const Node& node) { return node.cpus || node.memory_mb; }) ||
         std::any_of(jobs.begin(), jobs.end(), [](const Job& job) { return job.partition; });
}

// The job's candidate configurations that some nodes could hold (its current one always).
std::vector<Config> placeableConfigs(const Job& job, const Snapshot& snapshot,
                                     const ClusterShape& cluster, const PlaceableCheck* check) {
  auto configs = candidateConfigs(job, cluster);
  if (!check) return configs;
  const std::optional<Config> current =
      job.current ? std::optional<Config>(configOf(*job.current)) : std::nullopt;
  const NodeSet* allowed = allowedNodes(job, snapshot);
  configs.erase(std::remove_if(configs.begin(), configs.end(),
                               [&](const Config& config) {
                                 return config != current &&
                                        !check->placeable(config, job.demand, allowed);
                               }),
                configs.end());
  return configs;
}

Contender contenderOf(const Job& job, const Snapshot& snapshot, const ClusterShape& cluster,
                      const WaitingRigidTypes& rigid_waiting, const PriorityScale& priorities,
                      const PlaceableCheck* check) {
  Contender contender{&job, JobGoodput(job, snapshot.params.relative_speeds, cluster), {}};
  const auto candidates = placeableConfigs(job, snapshot, cluster, check);
  if (job.adaptive) {
    contender.options =
        adaptiveOptions(job, candidates, contender.goodput, snapshot, rigid_waiting);
    const double factor = priorities.factor(job);
    for (auto& option : contender.options) option.weight *= factor;
  } else {
    for (const auto& config : candidates) contender.options.push_back({config, 1.0, 1.0});
  }
  return contender;
}

// GPUs free on each node: its GPUs less what every job holds there.
std::map<std::string, int> freeGpus(const Snapshot& snapshot) {
  std::map<std::string, int> free;
  for (const Node& node : snapshot.nodes) free[node.name] = node.gpus;
  for (const Job& job : snapshot.jobs) {
    if (!job.current) continue;
    for (const auto& [name, gpus] : job.current->nodes) free[name] -= gpus;
  }
  return free;
}

bool roomToDouble(const Allocation& current, const std::map<std::string, int>& free) {
  return std::all_of(current.nodes.begin(), current.nodes.end(), [&](const auto& node) {
    const auto left = free.find(node.first);
    return left != free.end() && left->second >= node.second;
  });
}

// The jobs the round decides: the snapshot's, except copies in `roomless_copies` of those
// that could grow live on their own nodes and find no room there (Job::room_to_double).
std::vector<const Job*> decidingJobs(const Snapshot& snapshot, std::deque<Job>& roomless_copies) {
  const bool any_grows_live = std::any_of(snapshot.jobs.begin(), snapshot.jobs.end(),
                                          [](const Job& job) { return job.grows_live; });
  const auto free = any_grows_live ? freeGpus(snapshot) : std::map<std::string, int>{};
  std::vector<const Job*> deciding;
  for (const auto& job : snapshot.jobs) {
    if (isFixed(job)) continue;
    if (job.grows_live && job.current && job.parts.empty() &&
        !roomToDouble(*job.current, free)) {
      roomless_copies.push_back(job);
      roomless_copies.back().room_to_double = false;
      deciding.push_back(&roomless_copies.back());
    } else {
      deciding.push_back(&job);
    }
  }
  return deciding;
}

// Below this many jobs per thread, evaluating goodput models in parallel is not worth it.
constexpr std::size_t kJobsPerThread = 100;

// Goodput evaluation (bestBatch per job, configuration and type) dominates large rounds and is
// independent per job: it runs on a few threads, each on a contiguous range of the jobs.
std::vector<Contender> contendersOf(const Snapshot& snapshot, const ClusterShape& cluster,
                                    const std::vector<Holding>& fixed,
                                    std::deque<Job>& roomless_copies) {
  WaitingRigidTypes rigid_waiting;
  for (const Job& job : snapshot.jobs) {
    if (!job.adaptive && !job.current) rigid_waiting.insert(job.gpu_type.value_or(""));
  }
  const std::vector<const Job*> deciding = decidingJobs(snapshot, roomless_copies);
  std::optional<PlaceableCheck> check;
  if (needsPlaceableCheck(snapshot)) check.emplace(snapshot.nodes, fixed, snapshot.partitions);
  const PriorityScale priorities(snapshot);
  const std::size_t threads = std::clamp<std::size_t>(
      deciding.size() / kJobsPerThread, 1, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::future<std::vector<Contender>>> parts;
  for (std::size_t t = 0; t < threads; ++t) {
    const std::size_t begin = deciding.size() * t / threads;
    const std::size_t end = deciding.size() * (t + 1) / threads;
    const auto policy = threads == 1 ? std::launch::deferred : std::launch::async;
    parts.push_back(std::async(policy, [&, begin, end] {
      std::vector<Contender> part;
      for (std::size_t i = begin; i < end; ++i) {
        part.push_back(contenderOf(*deciding[i], snapshot, cluster, rigid_waiting, priorities,
                                   check ? &*check : nullptr));
      }
      return part;
    }));
  }
  std::vector<Contender> contenders;
  for (auto& part : parts) {
    for (auto& contender : part.get()) contenders.push_back(std::move(contender));
  }
  std::vector<std::vector<JobOption>> adaptive;
  std::vector<std::vector<JobOption>> rigid;
  for (auto& contender : contenders) {
    (contender.job->adaptive ? adaptive : rigid).push_back(std::move(contender.options));
  }
  prioritise(adaptive, rigid);
  auto next_adaptive = adaptive.begin();
  auto next_rigid = rigid.begin();
  for (auto& contender : contenders) {
    contender.options = std::move(contender.job->adaptive ? *next_adaptive++ : *next_rigid++);
  }
  return contenders;
}

// Units each of the snapshot's budgets (in name order) leaves to the contenders: less what
// the fixed jobs in it hold, never below 0 (a budget lowered under running jobs).
std::vector<std::int64_t> budgetsLeft(const Snapshot& snapshot) {
  std::map<std::string, std::int64_t> left = snapshot.budgets;
  for (const auto& job : snapshot.jobs) {
    if (!isFixed(job)) continue;
    for (const auto& use : job.budgets) {
      left.at(use.name) -= use.unitsFor(job.current->totalGpus(), int(job.current->nodes.size()));
    }
  }
  std::vector<std::int64_t> capacities;
  for (const auto& [name, units] : left) capacities.push_back(std::max<std::int64_t>(units, 0));
  return capacities;
}

void addBudgets(const std::vector<Contender>& contenders, const Snapshot& snapshot,
                MilpInput& input) {
  if (snapshot.budgets.empty()) return;
  input.budgets = budgetsLeft(snapshot);
  std::map<std::string, int> index_of;
  for (const auto& [name, units] : snapshot.budgets) index_of.emplace(name, int(index_of.size()));
  for (const auto& contender : contenders) {
    std::vector<BudgetShare>& shares = input.job_budgets.emplace_back();
    for (const auto& use : contender.job->budgets) {
      shares.push_back({index_of.at(use.name), use.per_gpu, use.per_node});
    }
  }
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
    const std::optional<Config> current =
        contender.job->current ? std::optional<Config>(configOf(*contender.job->current))
                               : std::nullopt;
    input.current.push_back(-1);
    for (const auto& option : contender.options) {
      const Config& config = option.config;
      if (current && config == *current) input.current.back() = int(options.size());
      const int whole = config.nodes > 1 ? config.gpus / cluster.at(config.gpu_type).largest_node : 0;
      options.push_back(
          {type_index.at(config.gpu_type), config.gpus, whole, option.weight, config.nodes});
    }
    input.jobs.push_back(std::move(options));
  }
  addBudgets(contenders, snapshot, input);
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
  JobDecision decision{allocation, 0, 0, 0, std::nullopt};
  if (!contender.job->adaptive) return decision;
  const Config config = configOf(allocation);
  if (const auto batch = contender.goodput.best(config)) {
    decision.batch_size = batch->batch_size;
    decision.local_bsz = batch->local_bsz;
    decision.accum_steps = batch->accum_steps;
  }
  decision.remaining_s = remainingSeconds(*contender.job, contender.goodput, config);
  return decision;
}

// A declaring job's options in the completion-time pass, as MILP options over `fair_input`'s.
struct CompletionJob {
  int contender = 0;
  CompletionOptions options;
};

std::vector<CompletionJob> completionJobs(std::vector<Contender>& contenders,
                                          const MilpResult& fair, const Snapshot& snapshot) {
  std::vector<CompletionJob> jobs;
  for (std::size_t i = 0; i < contenders.size(); ++i) {
    Contender& contender = contenders[i];
    if (!declaresLength(*contender.job) || !contender.goodput.hasModel() || fair.kept[i]) continue;
    CompletionOptions options = completionOptions(*contender.job, contender.options,
                                                  contender.goodput, fair.chosen[i],
                                                  snapshot.params, snapshot.time);
    if (!options.options.empty()) jobs.push_back({static_cast<int>(i), std::move(options)});
  }
  return jobs;
}

// The completion-time pass over the capacity the goodput round gave `jobs` or left free.
MilpInput completionInput(const MilpInput& fair_input, const MilpResult& fair,
                          const std::vector<CompletionJob>& jobs,
                          const std::vector<Contender>& contenders, const Snapshot& snapshot) {
  const double fairness_p = snapshot.params.fairness_p;
  const PriorityScale priorities(snapshot);
  std::vector<int> others = fair.chosen;
  for (const auto& job : jobs) others[job.contender] = -1;
  MilpInput input;
  input.types = leftoverCapacity(fair_input, others);
  input.budgets = leftoverBudgets(fair_input, others);
  input.time_limit_s = fair_input.time_limit_s;
  std::vector<CompletionOptions> options_of;
  for (const auto& job : jobs) options_of.push_back(job.options);
  const auto weights = completionWeights(options_of, fairness_p);
  // Guarded jobs come first: their bonus exceeds every other weight together.
  double guard_bonus = 1;
  const double most_factor = 1 + std::max(snapshot.params.priority_weight, 0.0);
  for (const auto& job_weights : weights) {
    for (double weight : job_weights) guard_bonus += std::max(weight, 0.0) * most_factor;
  }
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    const CompletionJob& job = jobs[k];
    std::vector<MilpOption> options;
    input.current.push_back(-1);
    for (std::size_t o = 0; o < job.options.options.size(); ++o) {
      const int index = job.options.options[o].option;
      if (index == fair_input.current[job.contender]) {
        input.current.back() = static_cast<int>(options.size());
      }
      MilpOption option = fair_input.jobs[job.contender][index];
      option.weight = weights[k][o] * priorities.factor(*contenders[job.contender].job) +
                      (job.options.guarded ? guard_bonus : 0.0);
      options.push_back(option);
    }
    input.jobs.push_back(std::move(options));
    if (!fair_input.job_budgets.empty()) {
      input.job_budgets.push_back(fair_input.job_budgets[job.contender]);
    }
  }
  return input;
}

// The goodput round's result with the declaring jobs re-decided by completion time (Params::
// objective == kJct); the goodput result itself if nothing declares or the pass fails.
MilpResult byCompletionTime(std::vector<Contender>& contenders, const MilpInput& fair_input,
                            const MilpResult& fair, const Snapshot& snapshot,
                            const SplitLimits& limits) {
  const auto jobs = completionJobs(contenders, fair, snapshot);
  if (jobs.empty()) return fair;
  const MilpResult pass = solvePartitioned(
      completionInput(fair_input, fair, jobs, contenders, snapshot), limits);
  MilpResult merged = fair;
  merged.work_limit_hits += pass.work_limit_hits;
  merged.time_limit_hits += pass.time_limit_hits;
  if (!pass.outcome.hasSolution()) return merged;
  merged.columns += pass.columns;
  merged.partitions += pass.partitions;
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    const int chosen = pass.chosen[k];
    merged.chosen[jobs[k].contender] = chosen < 0 ? -1 : jobs[k].options.options[chosen].option;
  }
  merged.objective = 0;
  for (std::size_t i = 0; i < contenders.size(); ++i) {
    if (merged.chosen[i] >= 0) merged.objective += fair_input.jobs[i][merged.chosen[i]].weight;
  }
  return merged;
}

void keepFixed(const Snapshot& snapshot, Decision& decision) {
  for (const auto& job : snapshot.jobs) {
    if (isFixed(job)) decision.allocations[job.id] = JobDecision{*job.current, 0, 0, 0, std::nullopt};
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

void placeChosen(const Snapshot& snapshot, const std::vector<Holding>& fixed,
                 std::vector<Contender>& contenders, const MilpInput& input,
                 const MilpResult& result, Decision& decision) {
  std::vector<PlacementRequest> requests;
  std::vector<Contender*> requesters;
  for (std::size_t i = 0; i < contenders.size(); ++i) {
    if (result.chosen[i] < 0) continue;
    const Config& chosen = contenders[i].options[result.chosen[i]].config;
    const Job& job = *contenders[i].job;
    requests.push_back({chosen, job.current, smallerConfigs(contenders[i], chosen), job.demand,
                        allowedNodes(job, snapshot), budgetsOf(input, i), changesLive(job, chosen),
                        job.parts, job.moves_live, job.batch_hosts, job.restarts,
                        job.restart_cost_s, job.join_startup_s});
    requesters.push_back(&contenders[i]);
  }
  std::vector<Allocation> leaving;
  for (const Job& job : snapshot.jobs) {
    if (job.leaving) leaving.push_back(*job.leaving);
  }
  const PlacementResult placed = place(snapshot.nodes, fixed, requests, input.budgets, leaving);
  decision.stats.placement_fallbacks = placed.fallbacks;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (!placed.allocations[i]) continue;
    JobDecision& decided = decision.allocations[requesters[i]->job->id];
    decided = decide(*requesters[i], *placed.allocations[i]);
    if (placed.restarted_for[i])
      decided.restarted_for = requesters[*placed.restarted_for[i]]->job->id;
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
  const auto fixed = fixedHoldings(snapshot.jobs);
  std::deque<Job> roomless_copies;  // outlives the contenders, which point into it
  auto contenders = contendersOf(snapshot, cluster, fixed, roomless_copies);
  if (contenders.empty()) {
    decision.stats.solver_status = "no_jobs";
  } else {
    const SplitLimits limits{snapshot.params.exact_jobs, snapshot.params.partition_jobs};
    const MilpInput input = milpInput(contenders, cluster, snapshot, reserved);
    MilpResult result = solvePartitioned(input, limits);
    if (snapshot.params.objective == Objective::kJct && result.outcome.hasSolution()) {
      result = byCompletionTime(contenders, input, result, snapshot, limits);
    }
    decision.stats.solver_status = result.outcome.describe();
    decision.stats.candidate_configs = result.columns;
    decision.stats.partitions = result.partitions;
    decision.stats.exact = static_cast<int>(contenders.size()) <= limits.exact_jobs;
    decision.stats.fractional_jobs = result.fractional_jobs;
    decision.stats.failed_partitions = result.failed_partitions;
    decision.stats.kept_jobs = result.kept_jobs;
    decision.stats.work_limit_hits = result.work_limit_hits;
    decision.stats.time_limit_hits = result.time_limit_hits;
    if (result.outcome.status == SolveStatus::kOptimal ||
        result.outcome.status == SolveStatus::kFeasible) {
      placeChosen(snapshot, fixed, contenders, input, result, decision);
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
