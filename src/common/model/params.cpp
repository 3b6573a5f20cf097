// SPDX-License-Identifier: GPL-2.0-or-later
#include "params.hpp"

#include <cmath>
#include <sstream>

#include "common/invalid_input.hpp"

namespace pollux::model {

void validate(const PerfParams& params) {
  requirePositive(params.alpha_c, "perf_params.alpha_c");
  requirePositive(params.beta_c, "perf_params.beta_c");
  requirePositive(params.alpha_n, "perf_params.alpha_n");
  requirePositive(params.beta_n, "perf_params.beta_n");
  requirePositive(params.alpha_r, "perf_params.alpha_r");
  requirePositive(params.beta_r, "perf_params.beta_r");
  if (!std::isfinite(params.gamma) || params.gamma < kMinGamma || params.gamma > kMaxGamma) {
    std::ostringstream message;
    message << "perf_params.gamma must be in [" << kMinGamma << ", " << kMaxGamma << "], got "
            << params.gamma;
    throw InvalidInput(message.str());
  }
}

void validate(const GradParams& params) {
  requireNonNegative(params.sqr, "grad_params.sqr");
  requireNonNegative(params.var, "grad_params.var");
}

void validate(const Placement& placement) {
  if (placement.num_nodes < 1 || placement.num_replicas < placement.num_nodes) {
    std::ostringstream message;
    message << "placement needs 1 <= num_nodes <= num_replicas, got num_nodes="
            << placement.num_nodes << " num_replicas=" << placement.num_replicas;
    throw InvalidInput(message.str());
  }
}

}  // namespace pollux::model
