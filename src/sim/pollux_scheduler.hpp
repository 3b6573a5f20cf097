// SPDX-License-Identifier: GPL-2.0-or-later
// The Pollux policy (pollux::policy::schedule) driven from the simulated cluster's state.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cluster.hpp"
#include "common/model/type_models.hpp"
#include "common/policy/policy.hpp"
#include "scheduler.hpp"

namespace pollux::sim {

// Each round builds the snapshot the plugin would: per job, throughput models fitted (per GPU
// type) to the step times it has measured so far, gradient statistics at its current progress
// and batch size, restarts and restart cost; then applies the decision.
//
// Heterogeneity-unaware mode (Sia's "Pollux" baseline): the policy sees a single GPU type and
// 8-GPU nodes as two 4-GPU nodes, and models pooled over every type; jobs still run at the
// speed of the GPUs they land on (the slowest, if an allocation spans types).
// Lengths the jobs declare, as their trainers would: the workload's target progress times
// `factor` (users misjudge), except the jobs named in `undeclared`.
struct Declarations {
  double factor = 1;
  std::set<std::string> undeclared;
};

// The jobs of `workload` (in order) that declare nothing: `share` of them, spread evenly.
std::set<std::string> undeclaredJobs(const std::vector<trace::WorkloadJob>& workload,
                                     double share);

// What the job declares, in the goodput model's unit (examples at the initial batch size,
// efficiency applied; the simulator's progress counts steps at the initial batch size).
std::optional<policy::DeclaredLength> declaredLength(const SimJob& job,
                                                     const Declarations& declarations);

// The GPUs a live move of an earlier round still holds beside the job's assignment, as the
// plugin sees its old parts (policy::Job::leaving); nullopt: none.
std::optional<policy::Allocation> leavingGpusOf(const SimJob& job, const Cluster& cluster);

class PolluxScheduler : public Scheduler {
 public:
  // `speeds`: relative speed per GPU type, given to the policy in aware mode (where `params`
  // names a type's speed, that wins). `params`: the policy settings of every round.
  PolluxScheduler(const Cluster& cluster, bool type_aware, model::RelativeSpeeds speeds,
                  policy::Params params = {}, Declarations declarations = {});
  std::map<std::string, Assignment> decide(double now,
                                           const std::vector<const SimJob*>& active) override;
  // What the policy is given at `now`: the snapshot the plugin would send.
  policy::Snapshot snapshot(double now, const std::vector<const SimJob*>& active);

  // The policy's node list (virtual 4-GPU halves in unaware mode).
  const std::vector<policy::Node>& policyNodes() const { return nodes_; }

 private:
  policy::Job snapshotJob(const SimJob& job);
  std::map<std::string, model::PerfParams> fittedModels(const SimJob& job);
  Assignment toAssignment(const SimJob& job, const policy::JobDecision& decision) const;
  // Records what each job whose allocation changes from current_ to `next` held before.
  void rememberPrevious(const std::vector<const SimJob*>& active,
                        const std::map<std::string, policy::Allocation>& next);

  const Cluster& cluster_;
  bool type_aware_;
  policy::Params params_;
  Declarations declarations_;
  std::vector<policy::Node> nodes_;
  std::map<std::string, std::string> simulated_node_;  // policy node -> simulated node
  std::map<std::string, policy::Allocation> current_;   // job -> allocation the policy gave it
  std::map<std::string, policy::Allocation> previous_;  // job -> what it held before its change
  // job -> model type -> (samples it was fitted on, fitted parameters)
  std::map<std::string, std::map<std::string, std::pair<size_t, model::PerfParams>>> fits_;
};

}  // namespace pollux::sim
