// SPDX-License-Identifier: GPL-2.0-or-later
// Goodput = throughput x statistical efficiency, and the best batch size for an allocation.
#pragma once

#include <optional>

#include "params.hpp"

namespace pollux::model {

// What the job allows for its batch size.
struct BatchLimits {
  long init_batch_size;  // M0: the batch size the job's hyper-parameters were tuned for
  long max_batch_size;   // largest total batch the job accepts
  int min_local_bsz;     // per-GPU micro-batch bounds (the upper one is GPU memory)
  int max_local_bsz;
  bool accumulation;     // whether gradient accumulation may be used
};

void validate(const BatchLimits& limits);

// A batch configuration chosen for a placement.
struct BatchChoice {
  int local_bsz;
  int accum_steps;
  long batch_size;  // num_replicas * local_bsz * (accum_steps + 1)
  double goodput;   // examples per second, weighted by statistical efficiency
};

class GoodputModel {
 public:
  // Throws pollux::InvalidInput if any argument is unusable.
  GoodputModel(const PerfParams& perf, const GradParams& grad, const BatchLimits& limits);

  double throughput(const Placement& placement, int local_bsz, int accum_steps) const;
  double efficiency(long batch_size) const;
  double goodput(const Placement& placement, int local_bsz, int accum_steps) const;

  // Best (local_bsz, accum_steps) for the placement within the limits; nullopt if none fits
  // (for example num_replicas * min_local_bsz above max_batch_size).
  std::optional<BatchChoice> bestBatch(const Placement& placement) const;

  // Best goodput at `placement` over best goodput at `baseline` (the job's minimum allocation).
  std::optional<double> speedup(const Placement& placement, const Placement& baseline) const;

  const PerfParams& perfParams() const { return perf_; }
  const GradParams& gradParams() const { return grad_; }
  const BatchLimits& limits() const { return limits_; }

 private:
  std::optional<BatchChoice> evaluateTotal(const Placement& placement, double total) const;

  PerfParams perf_;
  GradParams grad_;
  BatchLimits limits_;
};

}  // namespace pollux::model
