// SPDX-License-Identifier: GPL-2.0-or-later
// Fitting a job's throughput model (PerfParams) to measured step times.
#pragma once

#include <optional>
#include <vector>

#include "params.hpp"

namespace pollux::model {

// One measurement of a training step.
struct StepSample {
  int num_nodes;
  int num_replicas;
  int local_bsz;
  int accum_steps;
  double step_time;                    // seconds per optimizer step, all micro-batches included
  std::optional<double> compute_time;  // seconds of one micro-batch forward/backward, if measured
};

// Throws pollux::InvalidInput naming the bad field (NaN, infinite, zero or negative values).
void validate(const StepSample& sample);

// Priors for what the samples cannot show, as fractions of the mean measured compute time.
// They make unexplored scale-out predictions finite and pessimistic rather than free.
struct FitPriors {
  double intra_node_sync = 0.2;  // alpha_r when no multi-GPU single-node sample exists
  double inter_node_sync = 1.0;  // alpha_n when no multi-node sample exists
  double retrogression = 0.25;   // beta/alpha when no sample has more than 2 replicas
};

// Fits the seven parameters by bounded non-linear least squares (Eigen's Levenberg-Marquardt)
// on the log of step and compute times, with the regularisers of docs/design.md section 4.4.
// Throws pollux::InvalidInput on an empty or invalid sample set.
PerfParams fitPerfParams(const std::vector<StepSample>& samples, const FitPriors& priors = {});

}  // namespace pollux::model
