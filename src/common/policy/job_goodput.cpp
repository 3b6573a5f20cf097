// SPDX-License-Identifier: GPL-2.0-or-later
#include "job_goodput.hpp"

namespace pollux::policy {

namespace {

model::RelativeSpeeds speedsWithDefaults(const Job& job, model::RelativeSpeeds speeds,
                                         const ClusterShape& cluster) {
  for (const auto& [type, shape] : cluster) speeds.emplace(type, 1.0);
  for (const auto& [type, params] : job.models) speeds.emplace(type, 1.0);
  return speeds;
}

}  // namespace

JobGoodput::JobGoodput(const Job& job, const model::RelativeSpeeds& speeds,
                       const ClusterShape& cluster) {
  model::TypeModels measured;
  for (const auto& [type, params] : job.models) measured.setMeasured(type, params);
  for (const auto& [type, type_model] :
       measured.complete(speedsWithDefaults(job, speeds, cluster))) {
    if (cluster.count(type)) {
      models_.emplace(type, model::GoodputModel(type_model.params, job.grad, job.limits));
    }
  }
  baseline_goodput_ = bestBaselineGoodput(job, cluster);
}

std::optional<double> JobGoodput::bestBaselineGoodput(const Job& job,
                                                      const ClusterShape& cluster) {
  std::optional<double> best_goodput;
  for (const auto& [type, shape] : cluster) {
    if (job.gpu_type && *job.gpu_type != type) continue;
    const Config baseline = layout(type, job.min_gpus, shape);
    if (baseline.nodes == 0) continue;
    const auto choice = best(baseline);
    if (choice && (!best_goodput || choice->goodput > *best_goodput)) {
      best_goodput = choice->goodput;
    }
  }
  return best_goodput;
}

std::optional<model::BatchChoice> JobGoodput::best(const Config& config) {
  const auto key = std::make_tuple(config.gpu_type, config.gpus, config.nodes);
  const auto cached = cache_.find(key);
  if (cached != cache_.end()) return cached->second;
  std::optional<model::BatchChoice> choice;
  const auto type_model = models_.find(config.gpu_type);
  if (type_model != models_.end() && config.nodes >= 1 && config.gpus >= config.nodes) {
    choice = type_model->second.bestBatch({config.nodes, config.gpus});
  }
  cache_.emplace(key, choice);
  return choice;
}

std::optional<double> JobGoodput::speedup(const Config& config) {
  const auto choice = best(config);
  if (!choice || !baseline_goodput_ || *baseline_goodput_ <= 0) return std::nullopt;
  return choice->goodput / *baseline_goodput_;
}

}  // namespace pollux::policy
