// SPDX-License-Identifier: GPL-2.0-or-later
// Statistical efficiency over training: gradient statistics from validation-B.csv runs.
#pragma once

#include <map>
#include <vector>

#include "common/model/params.hpp"
#include "profile.hpp"

namespace pollux::trace {

class ValidationCurves {
 public:
  // One run per total batch size B. Throws std::invalid_argument if `runs` is empty.
  explicit ValidationCurves(std::map<long, std::vector<ValidationRow>> runs);

  // Gradient statistics at `progress`, interpolated along progress within each run and
  // linearly between the runs of the nearest batch sizes (clamped at the ends).
  model::GradParams gradParams(double batch_size, double progress) const;

  // Progress per optimizer step at `batch_size` relative to one step at the initial batch:
  // (var + sqr) / (var/r + sqr) with r = batch_size / init (AdaScale's gain).
  double gain(double batch_size, double progress) const;

  long initBatchSize() const { return batch_sizes_.front(); }
  long maxBatchSize() const { return batch_sizes_.back(); }
  // The job is complete at the final progress of the smallest-batch run.
  double targetProgress() const { return progress_.front().back(); }
  // Progress points of the smallest-batch run (where efficiency may change).
  const std::vector<double>& progressKnots() const { return progress_.front(); }

 private:
  std::vector<long> batch_sizes_;                 // ascending
  std::vector<double> batch_keys_;                // the same, as interpolation keys
  std::vector<std::vector<double>> progress_;     // per run
  std::vector<std::vector<model::GradParams>> grads_;  // per run
};

}  // namespace pollux::trace
