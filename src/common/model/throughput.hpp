// SPDX-License-Identifier: GPL-2.0-or-later
// Pollux's throughput model: predicted step time and examples per second.
#pragma once

#include "params.hpp"

namespace pollux::model {

// Time of one forward/backward pass of `local_bsz` examples on one GPU (T_grad).
double computeTime(const PerfParams& params, double local_bsz);

// Time of the gradient all-reduce for a placement (T_sync); 0 for a single replica.
double syncTime(const PerfParams& params, const Placement& placement);

// Time of one optimizer step with `accum_steps` extra accumulation micro-batches.
double stepTime(const PerfParams& params, const Placement& placement, double local_bsz,
                int accum_steps);

// Examples per second: num_replicas * local_bsz * (accum_steps + 1) / stepTime.
double throughput(const PerfParams& params, const Placement& placement, double local_bsz,
                  int accum_steps);

}  // namespace pollux::model
