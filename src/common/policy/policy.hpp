// SPDX-License-Identifier: GPL-2.0-or-later
// One scheduling round: which jobs get how many GPUs of which type on which nodes, and with
// which batch size, to maximise fairness-weighted goodput speedups (docs/design.md section 5).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/model/goodput.hpp"
#include "common/model/params.hpp"
#include "common/model/type_models.hpp"

namespace pollux::policy {

struct Node {
  std::string name;
  std::string gpu_type;
  int gpus;
  // CPUs and memory the snapshot's jobs may use on the node (free plus what they hold there);
  // absent: not a constraint (memory is not a consumable resource, or unknown).
  std::optional<int> cpus = std::nullopt;
  std::optional<std::int64_t> memory_mb = std::nullopt;
};

// CPUs and memory a job needs on each of its nodes, as Slurm allocates them for `gpus` GPUs
// there. Memory per CPU counts the CPUs the job gets on the node.
struct NodeDemand {
  int cpus = 1;                       // at least (tasks per node x CPUs per task)
  int cpus_per_gpu = 0;               // --cpus-per-gpu
  std::int64_t memory_mb = 0;         // --mem
  std::int64_t memory_mb_per_cpu = 0; // --mem-per-cpu
  std::int64_t memory_mb_per_gpu = 0; // --mem-per-gpu
  bool whole_node_memory = false;     // no memory request where memory is consumable: all of it
  int cpusFor(int gpus) const;
  std::int64_t memoryFor(int gpus) const;  // excluding whole_node_memory
};

// What is left of a node as jobs take it: GPUs, and CPUs and memory where they are limits.
struct NodeRoom {
  int gpus = 0;
  std::optional<int> cpus;
  std::optional<std::int64_t> memory_mb;
  std::optional<std::int64_t> all_memory_mb;  // its memory when no job holds any
  bool takes(int wanted_gpus, const NodeDemand& demand) const;
  void take(int taken_gpus, const NodeDemand& demand);
};

// A job's use of one of the snapshot's budgets: the budget's units each GPU and each node of
// the job takes (1 per GPU for a limit on GPUs; its CPUs or MB of memory per GPU for a limit
// on those; 1 per node for a limit on nodes).
struct BudgetUse {
  std::string name;
  std::int64_t per_gpu = 1;
  std::int64_t per_node = 0;
  std::int64_t unitsFor(int gpus, int nodes) const { return gpus * per_gpu + nodes * per_node; }
  bool operator==(const BudgetUse& other) const {
    return name == other.name && per_gpu == other.per_gpu && per_node == other.per_node;
  }
};

// GPUs of one type held on concrete nodes.
struct Allocation {
  std::string gpu_type;
  std::map<std::string, int> nodes;  // node name -> GPUs on it (> 0)
  int totalGpus() const;
  bool operator==(const Allocation& other) const;
};

// How long a job declared it is, in the unit of the goodput model's work done: examples at the
// initial batch size, statistical efficiency applied (what goodput counts per second).
struct DeclaredLength {
  double progress = 0;  // done so far
  double target = 0;    // done at completion
  // Left to do. Past its target (the declaration was too short), the target doubles until it
  // lies ahead: a job that ran past its declared length is guessed to run as long again.
  double remaining() const {
    double ahead = target;
    while (ahead > 0 && ahead <= progress) ahead *= 2;
    return ahead - progress;
  }
};

struct Job {
  std::string id;
  double submit_time = 0;
  bool adaptive = true;  // rigid jobs take exactly min_gpus == max_gpus or wait
  int min_gpus = 1;
  int max_gpus = 1;
  std::optional<std::string> gpu_type;  // pinned by the user
  std::optional<std::string> partition; // it runs only on this partition's nodes (none: any)
  std::optional<Allocation> current;    // what it runs on now (nullopt: pending)
  NodeDemand demand;                    // CPUs and memory per node
  double last_change_time = 0;          // when `current` started (seconds, snapshot clock)
  int restarts = 0;
  double restart_cost_s = 0;                       // measured cost of one restart
  // Measured stall of a live change of the world size (pollux.elastic), known once the job
  // made one: a shrink to some of its nodes costs this instead of a restart.
  std::optional<double> live_resize_cost_s;
  // Its workers can join it live: a growth that keeps what it holds and adds as many GPUs on
  // each node it adds to is live (its part; the placement keeps its nodes), and so is a
  // shrink to some of its nodes (configurations.hpp, changesInPlace).
  bool grows_live = false;
  // What its running parts hold (its live growths through parts), oldest first, within
  // `current`: it shrinks live by dropping one of them, and grows live through another.
  std::vector<Allocation> parts;
  // Where its parts' batch scripts run (batchHostOf): a live shrink of a part to some of its
  // nodes keeps that one, as Slurm never takes a job's batch host from it.
  std::set<std::string> batch_hosts;
  // Its GPUs are all in its parts (adaptive:resize=live) and its workers join live: any
  // change is live, a move to other nodes or another GPU type too: a part with the target
  // joins while it trains on (the placement puts the target beside what it holds), then its
  // old parts leave.
  bool moves_live = false;
  // Whether each of its nodes has as many GPUs free as it holds there: a growth that doubles
  // it on its own nodes is live only then (else the placement moves it, a restart).
  // schedule() sets it from the snapshot's nodes less what every job holds.
  bool room_to_double = true;
  // Seconds the joiners of a live growth take to start; the job trains at its old size meanwhile.
  double join_startup_s = 0;
  // Seconds of its work lost to changes so far (restarts, stalls, joiners' start-up held idle);
  // absent: restarts x restart_cost_s.
  std::optional<double> lost_s;
  // GPUs a live move of an earlier round still holds beside `current` (its old parts, until
  // the target's joiners have started): free to the round, but a job placed on them starts
  // once they have left, so jobs placed prefer GPUs free at once.
  std::optional<Allocation> leaving;
  // What it held before its last change (nullopt: it was pending then).
  std::optional<Allocation> previous;
  std::map<std::string, model::PerfParams> models;  // measured throughput model per GPU type
  model::GradParams grad{0, 0};
  model::BatchLimits limits{1, 1, 1, 1, false};
  // Declared length; absent: undeclared. Progress at or beyond its target is scheduled with
  // the target doubled (DeclaredLength::remaining; validate() refuses negative or non-finite
  // values).
  std::optional<DeclaredLength> length;
  // The snapshot's budgets its GPUs count against, each once (empty: none).
  std::vector<BudgetUse> budgets;
  // Slurm's priority of the job (multifactor: fairshare, QOS, age, nice, partition), 0 if
  // unknown: see Params::priority_weight.
  double priority = 0;
};

// What the round maximises (docs/design.md section 5.4): the power mean of goodput speedups,
// or, for jobs that declared their length, the rate at which they complete (objective.hpp).
enum class Objective { kGoodput, kJct };

struct Params {
  Objective objective = Objective::kJct;
  // kJct: a declaring job keeps at least 1/jct_guard of the speedup the goodput objective
  // gives it (>= 1; 1: exactly its goodput share or more).
  double jct_guard = 2.0;
  double fairness_p = -1.0;             // power-mean exponent of speedups
  double restart_threshold = 0.05;      // a running job changes only for >= 5 % predicted gain
  // How much Slurm's priority weighs: a waiting adaptive job's weights are multiplied by
  // 1 + priority_weight x (its priority - the lowest) / the highest, over the snapshot's
  // waiting adaptive jobs, so the jobs Slurm ranks first get contended GPUs first and
  // near-equal priorities weigh near-equally; a running one's by the largest of those factors
  // (see PriorityScale); 0: goodput alone.
  double priority_weight = 1.0;
  // ... and not sooner than this after its last change. One round by default: the restart
  // penalty already charges each change its cost, and a longer interval would hold a new job
  // back from growing for as long.
  double min_change_interval_s = 60;
  // Wall-clock safety net per GLPK solve (MilpInput's work limits bound the search itself);
  // a solve it stops keeps its jobs' current allocations.
  double time_limit_s = 10.0;
  // Up to this many contending jobs the MILP is solved exactly; above, by LP-guided rounding,
  // which keeps large rounds fast at a small loss (see partition.hpp).
  int exact_jobs = 50;
  // Rounding above exact_jobs works on ceil(jobs / partition_jobs) sub-problems of the jobs
  // (POP, see partition.hpp); 0 never splits.
  int partition_jobs = 250;
  model::RelativeSpeeds relative_speeds;  // per GPU type; a type missing here counts as 1.0
};

using NodeSet = std::set<std::string>;

struct Snapshot {
  double time = 0;
  std::vector<Node> nodes;
  std::vector<Job> jobs;
  Params params;
  std::map<std::string, NodeSet> partitions;  // name -> the nodes its jobs may run on
  // Site limits that groups of jobs share (a QOS's GrpTRES or MaxTRESPerUser, an
  // association's GrpTRES, on GPUs, CPUs or memory): name -> the units (GPUs, CPUs, MB) the
  // snapshot's jobs naming it may hold together, their current allocations included.
  std::map<std::string, std::int64_t> budgets;
};

struct JobDecision {
  Allocation allocation;
  long batch_size = 0;  // rigid jobs and jobs without a usable model: 0 (job keeps its own)
  int local_bsz = 0;
  int accum_steps = 0;
  // Jobs with a declared length and a model: estimated seconds to completion at this
  // allocation's goodput (a restart it needs included).
  std::optional<double> remaining_s;
  // A live move (Job::moves_live) made by restart instead: the job that starts on the GPUs
  // it leaves (empty: none).
  std::string restarted_for = {};
};

struct Stats {
  double solve_ms = 0;        // wall time of the whole round
  // "optimal", "feasible", "work_limit", "time_limit", "infeasible", "failed: ...", "no_jobs"
  std::string solver_status;
  bool kept_current = false;  // the solver failed or timed out: current allocations kept
  int candidate_configs = 0;  // binary variables in the MILP
  int partitions = 0;         // MILP sub-problems solved: 1 exact or rounded, more split, 0 none
  bool exact = false;         // solved by the exact MILP (else by LP-guided rounding)
  int fractional_jobs = 0;    // jobs the LP relaxation left fractional (rounding only)
  int failed_partitions = 0;  // sub-problems that failed or timed out ...
  int kept_jobs = 0;          // ... whose jobs kept their current allocation (others proceed)
  double objective = 0;       // sum of the chosen options' weights (0 when kept_current)
  int work_limit_hits = 0;    // GLPK solves stopped by their work limits (deterministic)
  int time_limit_hits = 0;    // GLPK solves stopped by time_limit_s: the round then depends on
                              // how fast the host was
  int placement_fallbacks = 0;  // jobs the nodes could not take as the MILP chose (kept their
                                // current allocation, got a smaller one, or none)
};

struct Decision {
  std::map<std::string, JobDecision> allocations;  // job id -> decision; absent = no GPUs
  Stats stats;
};

// Runs one round. Throws pollux::InvalidInput if the snapshot is inconsistent (unknown node
// in a current allocation, more GPUs than a node has, min > max, duplicate ids, a budget the
// snapshot lacks...). Running rigid jobs count against their budgets as they are; the others
// get allocations within what those leave. A solver failure or timeout never throws: the
// decision keeps every current allocation (budgets or not) and says so.
Decision schedule(const Snapshot& snapshot);

}  // namespace pollux::policy
