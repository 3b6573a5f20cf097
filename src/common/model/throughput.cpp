// SPDX-License-Identifier: GPL-2.0-or-later
#include "throughput.hpp"

#include <cmath>

namespace pollux::model {

double computeTime(const PerfParams& params, double local_bsz) {
  return params.alpha_c + params.beta_c * local_bsz;
}

double syncTime(const PerfParams& params, const Placement& placement) {
  if (placement.num_replicas <= 1) return 0.0;
  const double extra_replicas = placement.num_replicas - 2;
  if (placement.num_nodes > 1) return params.alpha_n + params.beta_n * extra_replicas;
  return params.alpha_r + params.beta_r * extra_replicas;
}

double stepTime(const PerfParams& params, const Placement& placement, double local_bsz,
                int accum_steps) {
  const double compute = computeTime(params, local_bsz);
  const double sync = syncTime(params, placement);
  const double gamma = params.gamma;
  // The last micro-batch overlaps its backward pass with the all-reduce (a gamma-norm).
  const double overlapped =
      std::pow(std::pow(compute, gamma) + std::pow(sync, gamma), 1.0 / gamma);
  return accum_steps * compute + overlapped;
}

double throughput(const PerfParams& params, const Placement& placement, double local_bsz,
                  int accum_steps) {
  const double examples = placement.num_replicas * local_bsz * (accum_steps + 1);
  return examples / stepTime(params, placement, local_bsz, accum_steps);
}

}  // namespace pollux::model
