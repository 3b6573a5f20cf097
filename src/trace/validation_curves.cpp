// SPDX-License-Identifier: GPL-2.0-or-later
#include "validation_curves.hpp"

#include <stdexcept>

#include "interpolate.hpp"

namespace pollux::trace {

ValidationCurves::ValidationCurves(std::map<long, std::vector<ValidationRow>> runs) {
  if (runs.empty()) throw std::invalid_argument("no validation curves");
  for (const auto& [batch_size, rows] : runs) {
    if (rows.empty()) throw std::invalid_argument("empty validation curve");
    batch_sizes_.push_back(batch_size);
    batch_keys_.push_back(static_cast<double>(batch_size));
    progress_.emplace_back();
    grads_.emplace_back();
    for (const auto& row : rows) {
      progress_.back().push_back(row.progress);
      grads_.back().push_back({row.grad_sqr, row.grad_var});
    }
  }
}

model::GradParams ValidationCurves::gradParams(double batch_size, double progress) const {
  const auto along = [&](size_t run) {
    const Bracket b = bracket(progress_[run], progress);
    const auto& grads = grads_[run];
    return model::GradParams{blend(grads[b.lo].sqr, grads[b.hi].sqr, b.weight),
                             blend(grads[b.lo].var, grads[b.hi].var, b.weight)};
  };
  const Bracket b = bracket(batch_keys_, batch_size);
  const model::GradParams lo = along(b.lo);
  const model::GradParams hi = along(b.hi);
  return {blend(lo.sqr, hi.sqr, b.weight), blend(lo.var, hi.var, b.weight)};
}

double ValidationCurves::gain(double batch_size, double progress) const {
  const model::GradParams grad = gradParams(batch_size, progress);
  const double scale = batch_size / static_cast<double>(initBatchSize());
  const double denominator = grad.var / scale + grad.sqr;
  // Without any gradient signal the run gives no evidence of scaling: one step, one step.
  if (denominator <= 0) return 1.0;
  return (grad.var + grad.sqr) / denominator;
}

}  // namespace pollux::trace
