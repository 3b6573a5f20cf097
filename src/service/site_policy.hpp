// SPDX-License-Identifier: GPL-2.0-or-later
// What a site's Slurm policy allows a job: whether Slurm would start it at all, and on which
// nodes (partitions, reservations, constraints, excluded nodes, the user's node list). The
// policy places jobs only where these allow, so that Slurm starts what Pollux decides.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/policy/policy.hpp"
#include "slurm_view.hpp"

namespace pollux::service {

// A begin time at or after this is Pollux's hold (POLLUX_HOLD_TIME of pollux_service.h).
inline constexpr double kPolluxHoldTime = 4102444800;  // 2100-01-01

// Pollux keeps the job from starting until it places it (its begin time).
bool heldByPollux(const SlurmJob& job);

// Held by Slurm because an earlier placement of Pollux's did not fit the job
// (Reason=BadConstraints): Pollux releases it with its next placement.
bool heldForBadPlacement(const SlurmJob& job);

// Why Slurm would not start the pending job on any nodes now, as squeue's Reason names it:
// held by its user or an admin, a dependency not met, its user's begin time (`user_begin_time`,
// 0 if none) ahead. Empty if nothing stops it.
std::string whyCannotStart(const SlurmJob& job, double now, double user_begin_time);

// Whether Slurm's Reason for a pending job it was given nodes for says Slurm refuses to start
// it so (a QOS, association or partition limit, licenses, a reservation, a constraint, a hold,
// a dependency), rather than that the nodes are not free yet.
bool refusesPlacement(const std::string& reason);

// Whether such a refusal depends on the job's size (a limit on GPUs, CPUs, memory or nodes),
// so a smaller placement may start.
bool refusalDependsOnSize(const std::string& reason);

// "ib,nvlink" as {"ib", "nvlink"}.
std::vector<std::string> splitFeatures(const std::string& list);

// Whether a node with `features` satisfies a job's --constraint expression: feature names
// joined by & (and) and | (or, weaker), grouped by () or [] (matching OR taken as OR), with
// counts (name*N) read as the name. An empty expression is satisfied by every node.
bool featuresMatch(const std::string& expression, const std::vector<std::string>& features);

// How far ahead a running job must keep off a reservation's nodes: its restart cost plus this
// (two rounds at the default interval), so it is moved off in time.
inline constexpr double kReservationLeadS = 120;

// The nodes a job may be placed on, or none if it may run on any of `nodes`. `partitions`: those
// of the job's partitions it may run in. `until`: when the job would end (its time limit; for a
// running job, when it could be moved off), so that no reservation it does not belong to
// starts on its nodes before then. `user_nodes`: the node list its user asked for (kept from
// submission), empty if none.
struct NodeRules {
  const SlurmJob& job;
  const std::vector<std::string>& partitions;
  const std::vector<std::string>& user_nodes;
  double until;
};
std::optional<policy::NodeSet> allowedNodes(const NodeRules& rules, double now,
                                            const std::vector<SlurmNode>& nodes,
                                            const std::map<std::string, policy::NodeSet>& partitions,
                                            const std::vector<SlurmReservation>& reservations);

// The job's partitions whose MaxTime (`max_time_min`, by partition, where set) its time limit
// is within: Slurm starts a pending job only in those (else PartitionTimeLimit). A running job
// keeps its partition.
std::vector<std::string> partitionsWithinMaxTime(const SlurmJob& job,
                                                 const std::map<std::string, int>& max_time_min);

// The licenses jobs may still take in a round. Each job given its licenses takes them, so that
// jobs placed together do not count on the same ones.
class LicensePool {
 public:
  // `reservations`: those that start after `now` hold their licenses from their start.
  LicensePool(const std::vector<SlurmLicense>& licenses,
              const std::vector<SlurmReservation>& reservations, double now);

  // Takes the job's licenses (all of "a:1,b:2", any one of "a:1|b:1"; a name alone is one) if
  // they are free for it: those no job uses, less those reservations hold now or will hold
  // before the job's time limit ends, unless the job has a reservation. False, taking
  // nothing, where they are not. A license Slurm did not list is left to Slurm.
  bool take(const SlurmJob& job);

 private:
  struct Count {
    int available = 0;
    int reserved = 0;
  };
  struct HeldAhead {
    double start_time = 0;
    std::vector<std::pair<std::string, int>> licenses;
  };
  bool fits(const std::string& name, int count, const SlurmJob& job) const;
  int heldAhead(const std::string& name, const SlurmJob& job) const;

  std::map<std::string, Count> free_;
  std::vector<HeldAhead> ahead_;
  double now_;
};

}  // namespace pollux::service
