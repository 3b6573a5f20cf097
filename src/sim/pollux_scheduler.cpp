// SPDX-License-Identifier: GPL-2.0-or-later
#include "pollux_scheduler.hpp"

#include <algorithm>
#include <cmath>

#include "common/model/fit.hpp"
#include "rigid.hpp"

namespace pollux::sim {

namespace {

constexpr const char* kUnawareType = "gpu";
constexpr int kUnawareNodeGpus = 4;

}  // namespace

std::set<std::string> undeclaredJobs(const std::vector<trace::WorkloadJob>& workload,
                                     double share) {
  std::set<std::string> undeclared;
  for (size_t i = 0; i < workload.size(); ++i) {
    if (std::floor(double(i + 1) * share) > std::floor(double(i) * share)) {
      undeclared.insert(workload[i].name);
    }
  }
  return undeclared;
}

PolluxScheduler::PolluxScheduler(const Cluster& cluster, bool type_aware,
                                 model::RelativeSpeeds speeds, policy::Params params,
                                 Declarations declarations)
    : cluster_(cluster),
      type_aware_(type_aware),
      params_(std::move(params)),
      declarations_(std::move(declarations)) {
  if (type_aware_) {
    params_.relative_speeds.insert(speeds.begin(), speeds.end());  // keeps the given ones
  } else {
    params_.relative_speeds.clear();  // one type
  }
  for (const auto& node : cluster.nodes()) {
    if (type_aware_) {
      nodes_.push_back({node.name, node.gpu_type, node.gpus});
      simulated_node_[node.name] = node.name;
      continue;
    }
    const int parts = (node.gpus + kUnawareNodeGpus - 1) / kUnawareNodeGpus;
    for (int part = 0; part < parts; ++part) {
      const std::string name = parts == 1 ? node.name : node.name + "/" + std::to_string(part);
      nodes_.push_back({name, kUnawareType,
                        std::min(kUnawareNodeGpus, node.gpus - part * kUnawareNodeGpus)});
      simulated_node_[name] = node.name;
    }
  }
}

std::map<std::string, model::PerfParams> PolluxScheduler::fittedModels(const SimJob& job) {
  std::map<std::string, std::vector<model::StepSample>> by_type = job.samples();
  if (!type_aware_) {
    std::vector<model::StepSample> pooled;
    for (const auto& [type, samples] : by_type) {
      pooled.insert(pooled.end(), samples.begin(), samples.end());
    }
    by_type.clear();
    if (!pooled.empty()) by_type[kUnawareType] = pooled;
  }
  std::map<std::string, model::PerfParams> models;
  auto& fits = fits_[job.name()];
  for (const auto& [type, samples] : by_type) {
    if (type.find('+') != std::string::npos) continue;  // spans types: no per-type model
    auto fit = fits.find(type);
    // Samples only accumulate, so an unchanged count means an unchanged sample set.
    if (fit == fits.end() || fit->second.first != samples.size()) {
      fit = fits.insert_or_assign(type, std::make_pair(samples.size(), model::fitPerfParams(samples)))
                .first;
    }
    models[type] = fit->second.second;
  }
  return models;
}

std::optional<policy::DeclaredLength> declaredLength(const SimJob& job,
                                                     const Declarations& declarations) {
  if (declarations.undeclared.count(job.name())) return std::nullopt;
  const auto& curves = job.app().curves;
  const double examples_per_step = static_cast<double>(curves.initBatchSize());
  return policy::DeclaredLength{
      job.progress() * examples_per_step,
      curves.targetProgress() * examples_per_step * declarations.factor};
}

std::optional<policy::Allocation> leavingGpusOf(const SimJob& job, const Cluster& cluster) {
  const auto leaving = job.leavingGpus();
  if (leaving.empty()) return std::nullopt;
  policy::Allocation allocation{cluster.node(leaving.begin()->first).gpu_type, {}};
  for (const auto& [node, gpus] : leaving) allocation.nodes[node] = gpus;
  return allocation;
}

policy::Job PolluxScheduler::snapshotJob(const SimJob& job) {
  const trace::Application& app = job.app();
  policy::Job snapshot_job;
  snapshot_job.id = job.name();
  snapshot_job.submit_time = job.spec().submit_time;
  snapshot_job.adaptive = true;
  snapshot_job.min_gpus = 1;
  // As in Pollux, a job may grow to at most twice the GPUs it has been measured on.
  snapshot_job.max_gpus = std::min(cluster_.totalGpus(), std::max(1, 2 * job.maxReplicasSeen()));
  if (job.assignment()) snapshot_job.current = current_.at(job.name());
  snapshot_job.last_change_time = job.lastChangeTime();
  snapshot_job.restarts = job.restarts();
  // As the plugin knows it: from the job's first report, its agent having timed its start.
  snapshot_job.restart_cost_s = job.maxReplicasSeen() > 0 ? job.restartCost() : 0.0;
  snapshot_job.lost_s = job.lostSeconds();
  // As the plugin fills them for a job whose workers join live: the joiners' start-up and
  // the stall it measured at its last live change.
  snapshot_job.grows_live = job.growsLive();
  if (job.growsLive()) snapshot_job.join_startup_s = job.joinStartup();
  snapshot_job.live_resize_cost_s = job.lastLiveStall();
  snapshot_job.parts = job.parts();
  snapshot_job.moves_live = job.movesLive();
  // Jobs of the unaware baseline never move live.
  if (type_aware_) snapshot_job.leaving = leavingGpusOf(job, cluster_);
  const auto previous = previous_.find(job.name());
  if (previous != previous_.end()) snapshot_job.previous = previous->second;
  snapshot_job.models = fittedModels(job);
  snapshot_job.grad = app.curves.gradParams(static_cast<double>(job.currentBatchSize()),
                                            job.progress());
  snapshot_job.limits = {app.curves.initBatchSize(), app.curves.maxBatchSize(), app.minLocalBsz(),
                         app.commonMaxLocalBsz(), true};
  snapshot_job.length = declaredLength(job, declarations_);
  return snapshot_job;
}

Assignment PolluxScheduler::toAssignment(const SimJob& job,
                                         const policy::JobDecision& decision) const {
  std::map<std::string, int> gpus_by_node;
  for (const auto& [node, gpus] : decision.allocation.nodes) {
    gpus_by_node[simulated_node_.at(node)] += gpus;
  }
  const int gpus = decision.allocation.totalGpus();
  // Without a usable model the policy leaves the batch to the job: its initial batch size.
  Assignment assignment =
      decision.batch_size > 0
          ? Assignment{{}, decision.local_bsz, decision.accum_steps}
          : splitBatch(job.app().curves.initBatchSize(), gpus, job.app().commonMaxLocalBsz());
  assignment.gpus_by_node = std::move(gpus_by_node);
  assignment.restarted = !decision.restarted_for.empty();
  return assignment;
}

void PolluxScheduler::rememberPrevious(const std::vector<const SimJob*>& active,
                                       const std::map<std::string, policy::Allocation>& next) {
  for (const SimJob* job : active) {
    const auto before = current_.find(job->name());
    const auto after = next.find(job->name());
    const bool held = before != current_.end(), holds = after != next.end();
    if (held == holds && (!held || before->second == after->second)) continue;
    if (held) {
      previous_[job->name()] = before->second;
    } else {
      previous_.erase(job->name());
    }
  }
}

policy::Snapshot PolluxScheduler::snapshot(double now, const std::vector<const SimJob*>& active) {
  policy::Snapshot snapshot;
  snapshot.time = now;
  snapshot.nodes = nodes_;
  snapshot.params = params_;
  for (const SimJob* job : active) {
    snapshot.jobs.push_back(snapshotJob(*job));
    // Slurm's multifactor priority with its age factor alone: the longer a job has waited or
    // run since its submission, the higher.
    snapshot.jobs.back().priority = now - job->spec().submit_time;
  }
  return snapshot;
}

std::map<std::string, Assignment> PolluxScheduler::decide(
    double now, const std::vector<const SimJob*>& active) {
  const policy::Decision decision = policy::schedule(snapshot(now, active));
  std::map<std::string, Assignment> assignments;
  std::map<std::string, policy::Allocation> current;
  for (const SimJob* job : active) {
    const auto found = decision.allocations.find(job->name());
    if (found == decision.allocations.end() || found->second.allocation.totalGpus() == 0) continue;
    assignments[job->name()] = toAssignment(*job, found->second);
    current[job->name()] = found->second.allocation;
  }
  rememberPrevious(active, current);
  current_ = std::move(current);
  return assignments;
}

}  // namespace pollux::sim
