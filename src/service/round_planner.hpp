// SPDX-License-Identifier: GPL-2.0-or-later
// One scheduling round as a function, free of Slurm: what Slurm runs and what the job store
// knows go in; the actions that bring Slurm to the policy's decision come out.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "actions.hpp"
#include "settings/policy_config.hpp"
#include "job_store.hpp"
#include "log.hpp"
#include "common/policy/policy.hpp"
#include "slurm_view.hpp"

namespace pollux::service {

// Slurm's nodes, partitions (name -> nodes), jobs and what limits them at one time.
struct Round {
  double now = 0;
  std::vector<SlurmNode> nodes;
  std::map<std::string, policy::NodeSet> partitions;
  std::map<std::string, int> partition_max_nodes;     // where MaxNodes is set
  std::map<std::string, int> partition_max_time_min;  // where MaxTime is set
  std::vector<SlurmJob> jobs;
  std::vector<SlurmReservation> reservations;
  std::vector<SlurmLicense> licenses;
  std::vector<SlurmQos> qos;  // where Slurm enforces QOS and association limits
  std::map<std::string, std::string> partition_qos;  // partition -> its QOS, where it has one
  std::vector<SlurmAssociation> associations;
};

// An action with the strings Slurm is given for it.
struct PlannedAction {
  Action action;
  std::string tres_per_node;  // "gres:gpu:N"; empty for a hold or a requeue without nodes
  std::string node_list;      // "n1,n2"
  int num_tasks = 0;          // on those nodes, with min_cpus; 0: left as Slurm has them
  int min_cpus = 0;
  std::string admin_comment;  // "pollux: WHY[ batch_size=N]", for scontrol show job
  bool release = false;       // also release Slurm's BadConstraints hold of an earlier placement
  int time_limit_min = 0;     // requeue: the limit of its next run (0: left as it is)
};

struct RoundPlan {
  std::vector<PlannedAction> actions;
  policy::Stats stats;
  std::vector<std::string> problems;  // each also logged as an error
  std::map<std::string, std::string> waiting;  // adaptive jobs Slurm would not start: Reason
};

// The policy could not decide: nothing changes this round.
class PolicyFailed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Plans one round. Brings `store` up to date first (jobs new and gone, in-place shrinks done
// or given up, each adaptive job's decision). `settling`: slurmctld started with jobs less
// than kSettleAfterStartS ago (see Treatment::kDecideNoStop). Throws PolicyFailed, the store
// then only synchronised with Slurm. `seen`, if given, receives the snapshot the policy was
// given (pollux-replay --snapshot).
RoundPlan planRound(JobStore& store, const Round& round, const config::PolicyConfig& config,
                    bool settling, const Log& log, policy::Snapshot* seen = nullptr);

// Logs what went wrong in the policy's solver this round, one line each: current allocations
// kept (error), the wall-clock safety net hit (error: the decision depended on the host's
// speed), the deterministic work limit hit (info).
void logSolverTrouble(const policy::Stats& stats, const Log& log);

}  // namespace pollux::service
