// SPDX-License-Identifier: GPL-2.0-or-later
#include "goodput.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "common/invalid_input.hpp"
#include "efficiency.hpp"
#include "throughput.hpp"

namespace pollux::model {

namespace {

// Total batch sizes tried per placement, spaced geometrically between the feasible bounds.
constexpr int kBatchCandidates = 64;

}  // namespace

void validate(const BatchLimits& limits) {
  std::ostringstream problem;
  if (limits.init_batch_size < 1) {
    problem << "init_batch_size must be >= 1, got " << limits.init_batch_size;
  } else if (limits.max_batch_size < limits.init_batch_size) {
    problem << "max_batch_size (" << limits.max_batch_size << ") must be >= init_batch_size ("
            << limits.init_batch_size << ")";
  } else if (limits.min_local_bsz < 1 || limits.max_local_bsz < limits.min_local_bsz) {
    problem << "local_bsz_bounds must satisfy 1 <= min <= max, got [" << limits.min_local_bsz
            << ", " << limits.max_local_bsz << "]";
  }
  if (!problem.str().empty()) throw InvalidInput(problem.str());
}

GoodputModel::GoodputModel(const PerfParams& perf, const GradParams& grad,
                           const BatchLimits& limits)
    : perf_(perf), grad_(grad), limits_(limits) {
  validate(perf_);
  validate(grad_);
  validate(limits_);
}

double GoodputModel::throughput(const Placement& placement, int local_bsz,
                                int accum_steps) const {
  return model::throughput(perf_, placement, local_bsz, accum_steps);
}

double GoodputModel::efficiency(long batch_size) const {
  return model::efficiency(grad_, static_cast<double>(limits_.init_batch_size),
                           static_cast<double>(batch_size));
}

double GoodputModel::goodput(const Placement& placement, int local_bsz, int accum_steps) const {
  const long batch = static_cast<long>(placement.num_replicas) * local_bsz * (accum_steps + 1);
  return throughput(placement, local_bsz, accum_steps) * efficiency(batch);
}

// Splits a target total batch into (local_bsz, accum_steps) and scores it.
std::optional<BatchChoice> GoodputModel::evaluateTotal(const Placement& placement,
                                                       double total) const {
  const double per_replica = total / placement.num_replicas;
  int accum_steps = 0;
  if (limits_.accumulation) {
    accum_steps = std::max(0, static_cast<int>(std::ceil(per_replica / limits_.max_local_bsz)) - 1);
  }
  int local_bsz = static_cast<int>(std::ceil(per_replica / (accum_steps + 1)));
  local_bsz = std::min(local_bsz, limits_.max_local_bsz);
  const auto batch_of = [&](int local) {
    return static_cast<long>(placement.num_replicas) * local * (accum_steps + 1);
  };
  if (batch_of(local_bsz) > limits_.max_batch_size) --local_bsz;
  if (local_bsz < limits_.min_local_bsz || batch_of(local_bsz) < limits_.init_batch_size ||
      batch_of(local_bsz) > limits_.max_batch_size) {
    return std::nullopt;
  }
  return BatchChoice{local_bsz, accum_steps, batch_of(local_bsz),
                     goodput(placement, local_bsz, accum_steps)};
}

std::optional<BatchChoice> GoodputModel::bestBatch(const Placement& placement) const {
  validate(placement);
  const double replicas = placement.num_replicas;
  const double lowest = std::max<double>(limits_.init_batch_size, replicas * limits_.min_local_bsz);
  double highest = static_cast<double>(limits_.max_batch_size);
  if (!limits_.accumulation) highest = std::min(highest, replicas * limits_.max_local_bsz);
  if (lowest > highest) return std::nullopt;

  std::optional<BatchChoice> best;
  const double ratio = highest / lowest;
  for (int i = 0; i < kBatchCandidates; ++i) {
    const double total = lowest * std::pow(ratio, i / double(kBatchCandidates - 1));
    const auto choice = evaluateTotal(placement, total);
    if (choice && (!best || choice->goodput > best->goodput)) best = choice;
  }
  return best;
}

std::optional<double> GoodputModel::speedup(const Placement& placement,
                                            const Placement& baseline) const {
  const auto at_placement = bestBatch(placement);
  const auto at_baseline = bestBatch(baseline);
  if (!at_placement || !at_baseline) return std::nullopt;
  return at_placement->goodput / at_baseline->goodput;
}

}  // namespace pollux::model
