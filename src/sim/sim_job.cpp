// SPDX-License-Identifier: GPL-2.0-or-later
#include "sim_job.hpp"

#include <algorithm>
#include <limits>

namespace pollux::sim {

int Assignment::totalGpus() const {
  int total = 0;
  for (const auto& [node, gpus] : gpus_by_node) total += gpus;
  return total;
}

SimJob::SimJob(trace::WorkloadJob spec, const trace::Application& app, double restart_cost_s)
    : spec_(std::move(spec)), app_(&app), restart_cost_s_(restart_cost_s) {}

long SimJob::currentBatchSize() const {
  return assignment_ ? assignment_->batchSize() : app_->curves.initBatchSize();
}

void SimJob::assign(const std::optional<Assignment>& next, const Cluster& cluster, double now) {
  const bool same_gpus = assignment_.has_value() == next.has_value() &&
                         (!next || assignment_->gpus_by_node == next->gpus_by_node);
  if (!same_gpus) {
    if (next) {
      if (started_) ++restarts_;
      started_ = true;
      delay_left_ = restart_cost_s_;
    }
    last_change_time_ = now;
  }
  assignment_ = next;
  gpu_type_.clear();
  if (!next) return;
  trace::GpusPerNode placement;
  std::vector<std::string> types;
  for (const auto& [node, gpus] : next->gpus_by_node) {
    placement.push_back(gpus);
    const std::string& type = cluster.node(node).gpu_type;
    if (std::find(types.begin(), types.end(), type) == types.end()) types.push_back(type);
  }
  timing_ = {0, 0};
  for (const auto& type : types) {
    gpu_type_ += (gpu_type_.empty() ? "" : "+") + type;
    const trace::StepTiming timing = app_->on(type).timing(placement, next->local_bsz);
    if (timing.step_time > timing_.step_time) timing_ = timing;
  }
  max_replicas_seen_ = std::max(max_replicas_seen_, next->totalGpus());
  recordSample();
}

void SimJob::recordSample() {
  const Assignment& a = *assignment_;
  const int nodes = static_cast<int>(a.gpus_by_node.size());
  const int replicas = a.totalGpus();
  model::StepSample sample{nodes, replicas, a.local_bsz, a.accum_steps,
                           trace::optimizerStepTime(timing_, a.accum_steps),
                           std::max(timing_.step_time - timing_.sync_time, 1e-6)};
  samples_[gpu_type_][{nodes, replicas, a.local_bsz, a.accum_steps}] = sample;
}

std::map<std::string, std::vector<model::StepSample>> SimJob::samples() const {
  std::map<std::string, std::vector<model::StepSample>> by_type;
  for (const auto& [type, distinct] : samples_) {
    for (const auto& [key, sample] : distinct) by_type[type].push_back(sample);
  }
  return by_type;
}

double SimJob::progressRate() const {
  const double batch = static_cast<double>(assignment_->batchSize());
  return app_->curves.gain(batch, progress_) /
         trace::optimizerStepTime(timing_, assignment_->accum_steps);
}

void SimJob::advance(double now, double seconds) {
  if (finished() || !assignment_) return;
  gpu_seconds_ += seconds * assignment_->totalGpus();
  const double waited = std::min(delay_left_, seconds);
  delay_left_ -= waited;
  double time = now + waited;
  double left = seconds - waited;
  const auto& knots = app_->curves.progressKnots();
  const double target = app_->curves.targetProgress();
  // Efficiency changes along progress: step from knot to knot of the reference curve.
  while (left > 0 && progress_ < target) {
    const double next_knot = *std::upper_bound(knots.begin(), knots.end() - 1, progress_);
    const double rate = progressRate();
    const double to_knot = (next_knot - progress_) / rate;
    if (to_knot >= left) {
      progress_ += rate * left;
      time += left;
      left = 0;
    } else {
      progress_ = next_knot;
      time += to_knot;
      left -= to_knot;
    }
  }
  if (progress_ >= target) {
    progress_ = target;
    completion_time_ = time;
    gpu_seconds_ -= left * assignment_->totalGpus();  // GPUs are released on completion
  }
}

double SimJob::remainingTime() const {
  if (finished()) return 0;
  if (!assignment_) return std::numeric_limits<double>::infinity();
  SimJob copy = *this;
  copy.advance(0, std::numeric_limits<double>::max());
  return *copy.completion_time_;
}

}  // namespace pollux::sim
