// SPDX-License-Identifier: GPL-2.0-or-later
// Parameters of a job's goodput model (docs/design.md section 4).
#pragma once

namespace pollux::model {

// Throughput model of one job on one GPU type. Times are in seconds.
//   T_grad(m)   = alpha_c + beta_c * m                  (one micro-batch of m examples per GPU)
//   T_sync(n,a) = 0 (a = 1) | alpha_r + beta_r*(a-2) (one node) | alpha_n + beta_n*(a-2) (several)
//   T_step      = s*T_grad + (T_grad^gamma + T_sync^gamma)^(1/gamma)
struct PerfParams {
  double alpha_c;
  double beta_c;
  double alpha_n;
  double beta_n;
  double alpha_r;
  double beta_r;
  double gamma;  // overlap of compute and communication, in [1, 10]
};

// Gradient noise statistics measured at the initial batch size: |g|^2 and tr(Sigma).
struct GradParams {
  double sqr;
  double var;
};

// Where a job's replicas run: `num_replicas` GPUs spread over `num_nodes` nodes.
struct Placement {
  int num_nodes;
  int num_replicas;
};

inline constexpr double kMinGamma = 1.0;
inline constexpr double kMaxGamma = 10.0;

// Each throws pollux::InvalidInput with a message naming the bad field.
void validate(const PerfParams& params);
void validate(const GradParams& params);
void validate(const Placement& placement);

}  // namespace pollux::model
