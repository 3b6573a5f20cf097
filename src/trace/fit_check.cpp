// SPDX-License-Identifier: GPL-2.0-or-later
#include "fit_check.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "common/model/fit.hpp"
#include "common/model/throughput.hpp"

namespace pollux::trace {

double FitCheck::quantileError(double q) const {
  if (held_out.empty()) return 0.0;
  std::vector<double> errors;
  for (const auto& p : held_out) errors.push_back(p.relative_error);
  const size_t index = std::min(errors.size() - 1, static_cast<size_t>(q * errors.size()));
  std::nth_element(errors.begin(), errors.begin() + index, errors.end());
  return errors[index];
}

double FitCheck::medianError() const { return quantileError(0.5); }

FitCheck checkFit(const std::vector<ProfileRow>& rows, int max_fit_gpus) {
  std::vector<model::StepSample> samples;
  for (const auto& row : rows) {
    if (row.placement.num_replicas > max_fit_gpus) continue;
    std::optional<double> compute;
    if (row.step_time > row.sync_time) compute = row.step_time - row.sync_time;
    samples.push_back({row.placement.num_nodes, row.placement.num_replicas, row.local_bsz, 0,
                       row.step_time, compute});
  }
  if (samples.empty()) {
    throw std::invalid_argument("no profile row has at most " + std::to_string(max_fit_gpus) +
                                " GPUs to fit on");
  }
  FitCheck check;
  check.params = model::fitPerfParams(samples);
  check.fit_samples = samples.size();
  for (const auto& row : rows) {
    if (row.placement.num_replicas <= max_fit_gpus) continue;
    const double predicted = model::stepTime(check.params, row.placement, row.local_bsz, 0);
    check.held_out.push_back(
        {row, predicted, std::abs(predicted - row.step_time) / row.step_time});
  }
  return check;
}

}  // namespace pollux::trace
