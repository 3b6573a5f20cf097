// SPDX-License-Identifier: GPL-2.0-or-later
#include "type_models.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/invalid_input.hpp"

namespace pollux::model {

namespace {

// Throughput model of `source` (speed s) moved to a type of speed t: compute is s/t as long.
PerfParams scaledCompute(const PerfParams& source, double source_speed, double target_speed) {
  PerfParams scaled = source;
  const double factor = source_speed / target_speed;
  scaled.alpha_c *= factor;
  scaled.beta_c *= factor;
  return scaled;
}

PerfParams geometricMean(const std::vector<PerfParams>& models) {
  double log_sum[7] = {};
  for (const auto& m : models) {
    const double values[7] = {m.alpha_c, m.beta_c, m.alpha_n, m.beta_n, m.alpha_r, m.beta_r, m.gamma};
    for (int i = 0; i < 7; ++i) log_sum[i] += std::log(values[i]);
  }
  double mean[7];
  for (int i = 0; i < 7; ++i) mean[i] = std::exp(log_sum[i] / models.size());
  // exp(log(10)) rounds to just above 10: a gamma at its bound must stay within it.
  const double gamma = std::clamp(mean[6], kMinGamma, kMaxGamma);
  return {mean[0], mean[1], mean[2], mean[3], mean[4], mean[5], gamma};
}

}  // namespace

void TypeModels::setMeasured(const std::string& gpu_type, const PerfParams& params) {
  if (gpu_type.empty()) throw InvalidInput("gpu_type must not be empty");
  validate(params);
  measured_[gpu_type] = params;
}

bool TypeModels::hasMeasured(const std::string& gpu_type) const {
  return measured_.count(gpu_type) > 0;
}

std::map<std::string, TypeModel> TypeModels::complete(const RelativeSpeeds& speeds) const {
  for (const auto& [type, speed] : speeds) {
    requirePositive(speed, ("relative speed of GPU type " + type).c_str());
  }
  std::map<std::string, TypeModel> models;
  for (const auto& [type, params] : measured_) models[type] = {params, false};
  for (const auto& [target, target_speed] : speeds) {
    if (models.count(target)) continue;
    std::vector<PerfParams> estimates;
    for (const auto& [source, params] : measured_) {
      const auto source_speed = speeds.find(source);
      if (source_speed != speeds.end()) {
        estimates.push_back(scaledCompute(params, source_speed->second, target_speed));
      }
    }
    if (!estimates.empty()) models[target] = {geometricMean(estimates), true};
  }
  return models;
}

}  // namespace pollux::model
