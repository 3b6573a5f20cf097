// SPDX-License-Identifier: GPL-2.0-or-later
// How well a throughput model fitted on small placements predicts larger ones.
#pragma once

#include <vector>

#include "common/model/params.hpp"
#include "profile.hpp"

namespace pollux::trace {

struct Prediction {
  ProfileRow measured;
  double predicted_step_time;
  double relative_error;  // |predicted - measured| / measured
};

struct FitCheck {
  model::PerfParams params;
  size_t fit_samples = 0;
  std::vector<Prediction> held_out;  // every row with more than max_fit_gpus GPUs
  double medianError() const;
  double quantileError(double q) const;
};

// Fits on the rows of `rows` with at most `max_fit_gpus` replicas (compute time taken as
// step_time - sync_time) and predicts the step time of all the others.
FitCheck checkFit(const std::vector<ProfileRow>& rows, int max_fit_gpus);

}  // namespace pollux::trace
