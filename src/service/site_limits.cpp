// SPDX-License-Identifier: GPL-2.0-or-later
#include "site_limits.hpp"

#include <set>

namespace pollux::service {

namespace {

// Associations nest a few levels deep; a longer chain is a loop in what Slurm sent.
constexpr std::size_t kMaxDepth = 64;

bool reached(const std::optional<int>& limit, int used) { return limit && used >= *limit; }

}  // namespace

SiteLimits::SiteLimits(const std::vector<SlurmQos>& qos,
                       const std::vector<SlurmAssociation>& associations) {
  for (const auto& entry : qos) qos_[entry.name] = entry;
  for (const auto& entry : associations) associations_[entry.id] = entry;
}

const SlurmQos* SiteLimits::qosOf(const SlurmJob& job) const {
  const auto found = qos_.find(job.qos);
  return found == qos_.end() ? nullptr : &found->second;
}

std::vector<const SlurmAssociation*> SiteLimits::chainOf(const SlurmJob& job) const {
  std::vector<const SlurmAssociation*> chain;
  std::set<uint32_t> seen;
  for (uint32_t id = job.association_id; id != 0 && chain.size() < kMaxDepth;) {
    const auto found = associations_.find(id);
    if (found == associations_.end() || !seen.insert(id).second) break;
    chain.push_back(&found->second);
    id = found->second.parent_id;
  }
  return chain;
}

std::string SiteLimits::runningJobsLimit(const SlurmJob& job) const {
  if (const SlurmQos* qos = qosOf(job)) {
    if (reached(qos->grp_jobs, qos->jobs_used)) return "QOSGrpJobsLimit";
    const auto user = qos->users.find(job.uid);
    const int user_jobs = user == qos->users.end() ? 0 : user->second.jobs;
    if (reached(qos->max_jobs_per_user, user_jobs)) return "QOSMaxJobsPerUserLimit";
  }
  const auto chain = chainOf(job);
  if (!chain.empty() && reached(chain.front()->max_jobs, chain.front()->jobs_used)) {
    return "AssocMaxJobsLimit";
  }
  for (const SlurmAssociation* association : chain) {
    if (reached(association->grp_jobs, association->jobs_used)) return "AssocGrpJobsLimit";
  }
  return "";
}

std::optional<SiteLimits::JobCap> SiteLimits::gpusPerJob(const SlurmJob& job) const {
  std::optional<JobCap> cap;
  const auto lower = [&](const std::optional<int>& limit, const char* reason) {
    if (limit && (!cap || *limit < cap->gpus)) cap = JobCap{*limit, reason};
  };
  if (const SlurmQos* qos = qosOf(job)) lower(qos->max_gpus_per_job, "QOSMaxGRESPerJob");
  const auto chain = chainOf(job);
  if (!chain.empty()) lower(chain.front()->max_gpus_per_job, "AssocMaxGRESPerJob");
  return cap;
}

std::string SiteLimits::reasonOf(const std::string& budget) {
  if (budget.rfind("assoc:", 0) == 0) return "AssocGrpGRES";
  return budget.find(":uid:") != std::string::npos ? "QOSMaxGRESPerUser" : "QOSGrpGRES";
}

std::vector<SiteLimits::Budget> SiteLimits::budgetsOf(const SlurmJob& job) const {
  std::vector<Budget> budgets;
  if (const SlurmQos* qos = qosOf(job)) {
    if (qos->grp_gpus) {
      budgets.push_back({"qos:" + qos->name, *qos->grp_gpus, qos->gpus_used});
    }
    if (qos->max_gpus_per_user) {
      const auto user = qos->users.find(job.uid);
      budgets.push_back({"qos:" + qos->name + ":uid:" + std::to_string(job.uid),
                         *qos->max_gpus_per_user,
                         user == qos->users.end() ? 0 : user->second.gpus});
    }
  }
  for (const SlurmAssociation* association : chainOf(job)) {
    if (!association->grp_gpus) continue;
    budgets.push_back({"assoc:" + std::to_string(association->id) + ":" + association->account +
                           (association->user.empty() ? "" : ":" + association->user),
                       *association->grp_gpus, association->gpus_used});
  }
  return budgets;
}

}  // namespace pollux::service
