// SPDX-License-Identifier: GPL-2.0-or-later
#include "site_limits.hpp"

#include <set>

namespace pollux::service {

namespace {

// Associations nest a few levels deep; a longer chain is a loop in what Slurm sent.
constexpr std::size_t kMaxDepth = 64;

bool reached(const std::optional<int>& limit, int used) { return limit && used >= *limit; }

// Slurm's Reasons for a group (QOS or association) limit and a QOS's limit per user, by TRES.
struct TresReasons {
  const char* qos_group;
  const char* qos_user;
  const char* qos_account;
  const char* association_group;
  const char* suffix;  // of the budget's name
};
const TresReasons& reasonsOf(Tres tres) {
  static const TresReasons kGpu{"QOSGrpGRES", "QOSMaxGRESPerUser", "MaxGRESPerAccount",
                                "AssocGrpGRES", ""};
  static const TresReasons kCpu{"QOSGrpCpuLimit", "QOSMaxCpuPerUserLimit", "MaxCpuPerAccount",
                                "AssocGrpCpuLimit", "/cpu"};
  static const TresReasons kMemory{"QOSGrpMemLimit", "QOSMaxMemoryPerUser",
                                   "MaxMemoryPerAccount", "AssocGrpMemLimit", "/mem"};
  static const TresReasons kNode{"QOSGrpNodeLimit", "QOSMaxNodePerUserLimit",
                                 "MaxNodePerAccount", "AssocGrpNodeLimit", "/node"};
  switch (tres) {
    case Tres::kCpu: return kCpu;
    case Tres::kMemory: return kMemory;
    case Tres::kNode: return kNode;
    case Tres::kGpu: break;
  }
  return kGpu;
}

bool endsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A shared limit's budget for each TRES it sets.
void addBudgets(const std::string& name, const std::optional<int>& gpus, int gpus_used,
                const SharedTresLimits& limits, const SharedTresUsed& used,
                std::vector<SiteLimits::Budget>& budgets) {
  if (gpus) budgets.push_back({name, Tres::kGpu, *gpus, gpus_used});
  const auto add = [&](Tres tres, const std::optional<std::int64_t>& limit, std::int64_t taken) {
    if (limit) budgets.push_back({name + reasonsOf(tres).suffix, tres, *limit, taken});
  };
  add(Tres::kCpu, limits.cpus, used.cpus);
  add(Tres::kMemory, limits.memory_mb, used.memory_mb);
  add(Tres::kNode, limits.nodes, used.nodes);
}

}  // namespace

GpuCharge chargeOf(const policy::NodeDemand& demand, std::int64_t largest_node_memory_mb) {
  const std::int64_t memory =
      demand.whole_node_memory ? largest_node_memory_mb : demand.memoryFor(1);
  return {std::max<std::int64_t>(demand.cpusFor(1), 1), std::max<std::int64_t>(memory, 1)};
}

std::int64_t SiteLimits::Budget::perGpu(const GpuCharge& charge) const {
  switch (tres) {
    case Tres::kCpu: return charge.cpus;
    case Tres::kMemory: return charge.memory_mb;
    case Tres::kNode: return 0;
    case Tres::kGpu: break;
  }
  return 1;
}

SiteLimits::SiteLimits(const std::vector<SlurmQos>& qos,
                       const std::vector<SlurmAssociation>& associations,
                       const std::map<std::string, std::string>& partition_qos)
    : partition_qos_(partition_qos) {
  for (const auto& entry : qos) qos_[entry.name] = entry;
  for (const auto& entry : associations) associations_[entry.id] = entry;
}

std::vector<const SlurmQos*> SiteLimits::qosOf(const SlurmJob& job) const {
  std::vector<const SlurmQos*> found;
  const auto add = [&](const std::string& name) {
    const auto qos = qos_.find(name);
    if (qos != qos_.end() && (found.empty() || found.front() != &qos->second)) {
      found.push_back(&qos->second);
    }
  };
  add(job.qos);
  if (!job.partitions.empty()) {
    const auto partition = partition_qos_.find(job.partitions.front());
    if (partition != partition_qos_.end()) add(partition->second);
  }
  return found;
}

std::string SiteLimits::accountOf(const SlurmJob& job) const {
  const auto association = associations_.find(job.association_id);
  return association == associations_.end() ? "" : association->second.account;
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
  const std::string account = accountOf(job);
  for (const SlurmQos* qos : qosOf(job)) {
    if (reached(qos->grp_jobs, qos->jobs_used)) return "QOSGrpJobsLimit";
    const auto user = qos->users.find(job.uid);
    const int user_jobs = user == qos->users.end() ? 0 : user->second.jobs;
    if (reached(qos->max_jobs_per_user, user_jobs)) return "QOSMaxJobsPerUserLimit";
    const auto of_account = qos->accounts.find(account);
    const int account_jobs = of_account == qos->accounts.end() ? 0 : of_account->second.jobs;
    if (!account.empty() && reached(qos->max_jobs_per_account, account_jobs)) {
      return "MaxJobsPerAccount";
    }
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

std::optional<SiteLimits::JobCap> SiteLimits::gpusPerJob(const SlurmJob& job,
                                                         const GpuCharge& charge,
                                                         int largest_node_gpus) const {
  std::optional<JobCap> cap;
  const auto lower = [&](std::optional<std::int64_t> gpus, const char* reason) {
    if (gpus && (!cap || *gpus < cap->gpus)) cap = JobCap{int(*gpus), reason};
  };
  const auto per = [](const std::optional<std::int64_t>& limit, std::int64_t each) {
    return limit ? std::optional<std::int64_t>(*limit / each) : std::nullopt;
  };
  const auto lowerBy = [&](const std::optional<int>& gpus, const JobTresLimits& limits,
                           const char* const reasons[4]) {
    if (gpus) lower(*gpus, reasons[0]);
    lower(per(limits.cpus, charge.cpus), reasons[1]);
    lower(per(limits.memory_mb, charge.memory_mb), reasons[2]);
    if (limits.nodes) lower(std::int64_t(*limits.nodes) * largest_node_gpus, reasons[3]);
  };
  static const char* const kQosReasons[4] = {"QOSMaxGRESPerJob", "QOSMaxCpuPerJobLimit",
                                             "QOSMaxMemoryPerJob", "QOSMaxNodePerJobLimit"};
  static const char* const kAssociationReasons[4] = {
      "AssocMaxGRESPerJob", "AssocMaxCpuPerJobLimit", "AssocMaxMemPerJob",
      "AssocMaxNodePerJobLimit"};
  for (const SlurmQos* qos : qosOf(job)) lowerBy(qos->max_gpus_per_job, qos->per_job, kQosReasons);
  const auto chain = chainOf(job);
  if (!chain.empty()) {
    lowerBy(chain.front()->max_gpus_per_job, chain.front()->per_job, kAssociationReasons);
  }
  return cap;
}

std::string SiteLimits::reasonOf(const std::string& budget) {
  Tres tres = Tres::kGpu;
  for (Tres other : {Tres::kCpu, Tres::kMemory, Tres::kNode}) {
    if (endsWith(budget, reasonsOf(other).suffix)) tres = other;
  }
  const TresReasons& reasons = reasonsOf(tres);
  if (budget.rfind("assoc:", 0) == 0) return reasons.association_group;
  if (budget.find(":uid:") != std::string::npos) return reasons.qos_user;
  return budget.find(":acct:") != std::string::npos ? reasons.qos_account : reasons.qos_group;
}

std::vector<SiteLimits::Budget> SiteLimits::budgetsOf(const SlurmJob& job) const {
  std::vector<Budget> budgets;
  const std::string account = accountOf(job);
  for (const SlurmQos* qos : qosOf(job)) {
    addBudgets("qos:" + qos->name, qos->grp_gpus, qos->gpus_used, qos->grp_tres,
               qos->tres_used, budgets);
    const auto found = qos->users.find(job.uid);
    const UserUsage user = found == qos->users.end() ? UserUsage{} : found->second;
    addBudgets("qos:" + qos->name + ":uid:" + std::to_string(job.uid), qos->max_gpus_per_user,
               user.gpus, qos->per_user_tres, user.tres, budgets);
    if (account.empty()) continue;
    const auto of_account = qos->accounts.find(account);
    const UserUsage used = of_account == qos->accounts.end() ? UserUsage{} : of_account->second;
    addBudgets("qos:" + qos->name + ":acct:" + account, qos->max_gpus_per_account, used.gpus,
               qos->per_account_tres, used.tres, budgets);
  }
  for (const SlurmAssociation* association : chainOf(job)) {
    addBudgets("assoc:" + std::to_string(association->id) + ":" + association->account +
                   (association->user.empty() ? "" : ":" + association->user),
               association->grp_gpus, association->gpus_used, association->grp_tres,
               association->tres_used, budgets);
  }
  return budgets;
}

}  // namespace pollux::service
