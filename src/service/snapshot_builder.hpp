// SPDX-License-Identifier: GPL-2.0-or-later
// Turns Slurm's jobs and nodes plus what the store knows into a policy snapshot.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "settings/policy_config.hpp"
#include "job_store.hpp"
#include "site_limits.hpp"
#include "common/policy/policy.hpp"
#include "slurm_view.hpp"

namespace pollux::service {

// What of Slurm's configuration and accounting decides where and whether jobs may run.
struct SiteRules {
  std::map<std::string, policy::NodeSet> partitions;  // name -> its nodes
  std::map<std::string, int> partition_max_nodes;     // name -> MaxNodes, where limited
  std::map<std::string, int> partition_max_time_min;  // name -> MaxTime, where limited
  std::vector<SlurmReservation> reservations;
  std::vector<SlurmLicense> licenses;
  std::optional<SiteLimits> limits;                   // where Slurm enforces them
};

// The configured speed of every GPU type the nodes have; default_speed for the others.
model::RelativeSpeeds relativeSpeeds(const std::vector<SlurmNode>& nodes,
                                     const config::PolicyConfig& config);

// Nodes with GPUs, each with the GPUs its running adaptive jobs hold plus, if it takes jobs,
// those no job holds; its CPUs (and memory, where consumable) likewise. Adaptive jobs
// (running, and pending ones Slurm would start: not held by their user or an admin, their
// dependencies met, their user's begin time passed, no refusal of Slurm's standing) with their
// models and limits; rigid jobs Slurm would start once GPUs are free (in any form they
// asked); each with its CPUs and memory per node. Running rigid jobs are not decided on: what
// they hold is simply not free. By the site's rules: each job may run only on the nodes its
// partitions, its reservation or the others', its constraint, excluded nodes and its user's
// node list allow (site_policy.hpp), only in its partitions whose MaxTime its time limit fits,
// and on at most its partition's MaxNodes; a pending job whose licenses are not free (taken in
// the order Slurm would start jobs) is left out; under QOS and association limits a pending
// job over a limit on running jobs, or whose per-job cap or a budget leaves less than its
// minimum, is left out, others are capped and name their budgets, whose capacities the
// snapshot carries (site_limits.hpp). A pending job no node is allowed to is left out too.
// `waiting`, if given, receives why each adaptive job left out waits, as Slurm's Reason names
// it.
// Relative speeds: the configured ones, default_speed for every other type present. A job's
// declared length comes from its latest report, left out once its progress reached the target.
policy::Snapshot buildSnapshot(double now, const std::vector<SlurmNode>& nodes,
                               const std::vector<SlurmJob>& jobs,
                               const std::map<std::string, JobRecord>& records,
                               const config::PolicyConfig& config, const SiteRules& site = {},
                               std::map<std::string, std::string>* waiting = nullptr);

}  // namespace pollux::service
