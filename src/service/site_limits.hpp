// SPDX-License-Identifier: GPL-2.0-or-later
// A site's QOS and association limits (Slurm's accounting, AccountingStorageEnforce=limits,qos)
// as the policy applies them ahead, so that Slurm starts every job it places: limits on running
// jobs keep a job back, a limit on one job's GPUs caps it, and limits that jobs share (a group's
// or a user's GPUs) become budgets that the policy's jobs divide among themselves.
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "slurm_view.hpp"

namespace pollux::service {

class SiteLimits {
 public:
  SiteLimits(const std::vector<SlurmQos>& qos, const std::vector<SlurmAssociation>& associations);

  // Why Slurm would not start one more job of the job's user and accounts now, as its Reason
  // names it (QOSGrpJobsLimit, QOSMaxJobsPerUserLimit, AssocMaxJobsLimit, AssocGrpJobsLimit);
  // empty if no limit on running jobs is reached.
  std::string runningJobsLimit(const SlurmJob& job) const;

  // The most GPUs the job may hold (MaxTRESPerJob of its QOS, MaxTRES of its association),
  // with the Reason Slurm gives a job over it; none if unlimited.
  struct JobCap {
    int gpus = 0;
    std::string reason;
  };
  std::optional<JobCap> gpusPerJob(const SlurmJob& job) const;

  // A limit on GPUs that jobs share, with what Slurm charges running jobs under it.
  struct Budget {
    std::string name;    // "qos:NAME", "qos:NAME:uid:UID", "assoc:ID:ACCOUNT[:USER]"
    int limit = 0;
    int used = 0;
    // The GPUs it leaves the policy's jobs: the limit less what is used, plus
    // `held_by_policy_jobs` (what the policy's running jobs hold under it, which it
    // re-decides), and never less than that.
    int capacity(int held_by_policy_jobs) const {
      return std::max(limit - used + held_by_policy_jobs, held_by_policy_jobs);
    }
  };

  // The budgets the job's GPUs count against: its QOS's group limit and its limit for the
  // job's user, and the group limit of its association and of each account above it.
  std::vector<Budget> budgetsOf(const SlurmJob& job) const;

  // Slurm's Reason for a job over the budget of that name.
  static std::string reasonOf(const std::string& budget);

 private:
  const SlurmQos* qosOf(const SlurmJob& job) const;
  // The job's association, then each parent up to the root.
  std::vector<const SlurmAssociation*> chainOf(const SlurmJob& job) const;

  std::map<std::string, SlurmQos> qos_;                  // by name
  std::map<uint32_t, SlurmAssociation> associations_;   // by id
};

}  // namespace pollux::service
