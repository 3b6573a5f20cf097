// SPDX-License-Identifier: GPL-2.0-or-later
// A site's QOS and association limits (Slurm's accounting, AccountingStorageEnforce=limits,qos)
// as the policy applies them ahead, so that Slurm starts every job it places: limits on running
// jobs keep a job back, a limit on one job's GPUs, CPUs, memory or nodes caps it, and limits
// that jobs share (a group's or a user's GPUs, CPUs, memory or nodes) become budgets that the
// policy's jobs divide among themselves. CPUs and memory are charged per GPU at the most one
// GPU of the job can bring (its per-node request counted in full for each GPU), so the
// policy never places beyond a limit, at the price of leaving some of it unused.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "slurm_view.hpp"

namespace pollux::service {

// The TRES a shared limit counts.
enum class Tres { kGpu, kCpu, kMemory, kNode };

// What one GPU of a job brings with it in Slurm's accounting, at most.
struct GpuCharge {
  std::int64_t cpus = 1;
  std::int64_t memory_mb = 1;
};

// A job's charge: its CPUs and memory for one GPU on a node; whole-node memory as the
// largest node's.
GpuCharge chargeOf(const policy::NodeDemand& demand, std::int64_t largest_node_memory_mb);

class SiteLimits {
 public:
  // `partition_qos`: partition -> its QOS, whose limits apply to its jobs beside their own
  // QOS's (the stricter of both counts: Slurm's OverPartQOS flag is not read).
  SiteLimits(const std::vector<SlurmQos>& qos, const std::vector<SlurmAssociation>& associations,
             const std::map<std::string, std::string>& partition_qos = {});

  // Why Slurm would not start one more job of the job's user and accounts now, as its Reason
  // names it (QOSGrpJobsLimit, QOSMaxJobsPerUserLimit, MaxJobsPerAccount, AssocMaxJobsLimit,
  // AssocGrpJobsLimit); empty if no limit on running jobs is reached.
  std::string runningJobsLimit(const SlurmJob& job) const;

  // The most GPUs the job may hold (MaxTRESPerJob of its QOS, MaxTRES of its association, on
  // GPUs, or on CPUs, memory or nodes turned into GPUs by `charge` and the most GPUs a node
  // has), with the Reason Slurm gives a job over it; none if unlimited.
  struct JobCap {
    int gpus = 0;
    std::string reason;
  };
  std::optional<JobCap> gpusPerJob(const SlurmJob& job, const GpuCharge& charge,
                                   int largest_node_gpus) const;

  // A limit that jobs share, with what Slurm charges running jobs under it.
  struct Budget {
    // "qos:NAME", "qos:NAME:uid:UID", "qos:NAME:acct:ACCOUNT", "assoc:ID:ACCOUNT[:USER]";
    // "/cpu", "/mem" or "/node" appended for a limit on CPUs, memory or nodes.
    std::string name;
    Tres tres = Tres::kGpu;
    std::int64_t limit = 0;  // GPUs, CPUs, MB or nodes
    std::int64_t used = 0;
    // What it leaves the policy's jobs: the limit less what is used, plus
    // `held_by_policy_jobs` (what the policy's running jobs hold under it, which it
    // re-decides), and never less than that.
    std::int64_t capacity(std::int64_t held_by_policy_jobs) const {
      return std::max(limit - used + held_by_policy_jobs, held_by_policy_jobs);
    }
    // What one GPU, and one node, of a job with `charge` take of it.
    std::int64_t perGpu(const GpuCharge& charge) const;
    std::int64_t perNode() const { return tres == Tres::kNode ? 1 : 0; }
  };

  // The budgets the job counts against: its QOS's (and its partition's QOS's) group limits and
  // limits for the job's user and account, and the group limits of its association and of
  // each account above it.
  std::vector<Budget> budgetsOf(const SlurmJob& job) const;

  // Slurm's Reason for a job over the budget of that name.
  static std::string reasonOf(const std::string& budget);

 private:
  // The job's QOS, then its partition's QOS where that is another.
  std::vector<const SlurmQos*> qosOf(const SlurmJob& job) const;
  // The account of the job's association; empty without one.
  std::string accountOf(const SlurmJob& job) const;
  // The job's association, then each parent up to the root.
  std::vector<const SlurmAssociation*> chainOf(const SlurmJob& job) const;

  std::map<std::string, SlurmQos> qos_;                  // by name
  std::map<uint32_t, SlurmAssociation> associations_;   // by id
  std::map<std::string, std::string> partition_qos_;    // partition -> QOS name
};

}  // namespace pollux::service
