// SPDX-License-Identifier: GPL-2.0-or-later
// Options offered to the MILP per job, and their weights (docs/design.md section 5.2).
//
// Utility of a speedup s with fairness exponent p: -s^p (p < 0), s^p (p > 0), log s (p = 0);
// the MILP maximises the sum. A job left without GPUs counts as if its speedup were
// kUnallocatedFraction x the lowest of 1 (its baseline), its speedups at every candidate
// configuration and the speedups it is offered, so any allocation beats none and preempting a
// running job costs at least as much as not starting it. A running job's unallocated speedup
// is further divided by (1 + restart_threshold): preempting it must beat keeping it by that
// margin, as its own moves must gain restart_threshold. An option's weight is its utility
// minus the unallocated one. A running job moving to another configuration has its speedup
// multiplied by the change factor
//   clamp((age - seconds lost so far) / (age + what the change costs), kMinRestartFactor, 1)
// with age = time - submit_time (Pollux's restart penalty, in seconds lost: a restart costs
// restart_cost_s, a live change its stall and, for a growth, its joiners' start-up).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "configurations.hpp"
#include "job_goodput.hpp"
#include "policy.hpp"

namespace pollux::policy {

inline constexpr double kUnallocatedFraction = 0.5;
inline constexpr double kMinRestartFactor = 0.01;
// The stall of a live change until the job measured one: a growth of a 1e8-parameter model,
// the largest bench/live-stall measured.
inline constexpr double kUnmeasuredLiveStallS = 3.0;

struct JobOption {
  Config config;
  double speedup = 1;  // after the restart factor
  double weight = 0;
};

double utility(double speedup, double fairness_p);

// What moving the job to `config` costs it, in seconds: nothing at its current config. Live
// (changesLive): a shrink, its stall; a growth, its stall plus the joiners' start-up times
// the share of the new GPUs held idle meanwhile; a move (moves_live), two stalls plus the
// joiners' whole start-up (its old GPUs are kept from other jobs that long). Else its
// restart cost (a pending job's start too).
double changeCost(const Job& job, const Config& config);

// Whether moving the running job to `config` is a live change, as changeCost prices it and
// as the placement makes it where the job's nodes still have the room (configurations.hpp,
// changesInPlace): with as many GPUs per node as it has on each now, more nodes (grows_live);
// twice its GPUs on as many nodes (grows_live and room_to_double: a part on its own nodes);
// with parts, dropping one of them; without, fewer nodes (grows_live or a live change
// measured); for a job whose GPUs are all in parts (moves_live), any config, of any type.
bool changesLive(const Job& job, const Config& config);

// Whether `config` would undo the job's last change in the round after it: what it held
// before, less than two minimum change intervals ago. The jct objective does not offer it, in
// either pass.
bool undoesLastChange(const Job& job, const Config& config, const Params& params, double time);

// Whether `config` would restart a job that can change live (grows_live or moves_live) but not
// to `config` (changesLive) before it has run, since its last change, as long as it lost to
// changes so far (secondsLost): anti-thrashing in seconds lost, the more a job has lost, the
// longer it trains before its next restart. The jct objective does not offer it, in either
// pass, except to a job out of its bounds. A job whose every change is a restart is spaced by
// the change factor alone: a wait would hold back the growth it has no other way to make.
bool restartsTooSoon(const Job& job, const Config& config, const Params& params, double time);

// Seconds the job lost to changes so far (lost_s, else restarts x restart_cost_s).
double secondsLost(const Job& job);

double changeFactor(const Job& job, const Config& config, double time);

// Options of an adaptive job. Pending: every candidate (a job without a model: its min_gpus
// on each allowed type, its speedup there the type's relative speed over the fastest's).
// Running, with a model or without: its current configuration, plus, once
// min_change_interval_s has passed since its last change, every candidate that either gains
// more than restart_threshold in speedup or, for a job with a model, uses fewer GPUs (to let
// others grow). When a rigid job waits for its GPU type, a running job may always shrink (GPUs
// above its minimum are opportunistic).
// GPU types waiting rigid jobs ask for; "" stands for a rigid job that takes any type.
using WaitingRigidTypes = std::set<std::string>;
std::vector<JobOption> adaptiveOptions(const Job& job, const std::vector<Config>& candidates,
                                       JobGoodput& goodput, const Snapshot& snapshot,
                                       const WaitingRigidTypes& rigid_waiting);

// Slurm's priority of each adaptive job as a factor on its options' weights (see
// Params::priority_weight). Slurm recomputes the priorities of pending jobs only; a running
// job's is the one it started with, not comparable with theirs. So priority ranks the waiting
// jobs (1 for the lowest, and where all are equal or unknown), and a running job counts as
// ranking with the first of them: priority decides which waiting job starts, never that a
// running one stops (Slurm's own preemption does that where the site configures it). Rigid
// jobs are started by Slurm itself in its priority order, so they keep theirs.
class PriorityScale {
 public:
  explicit PriorityScale(const Snapshot& snapshot);
  double factor(const Job& job) const;

 private:
  double waitingFactor(double priority) const;

  double lowest_ = 0;
  double highest_ = 0;
  double weight_ = 0;
};

// Rigid waiting jobs are served before adaptive jobs get GPUs above their minimum, but after
// every adaptive job got its minimum: adaptive options gain a bonus larger than all rigid
// weights together, and each rigid option weighs more than all adaptive speedup weights.
// Does nothing if no rigid job waits.
void prioritise(std::vector<std::vector<JobOption>>& adaptive,
                std::vector<std::vector<JobOption>>& rigid_waiting);

}  // namespace pollux::policy
