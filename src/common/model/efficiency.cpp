// SPDX-License-Identifier: GPL-2.0-or-later
#include "efficiency.hpp"

#include <cmath>
#include <string>

#include "common/invalid_input.hpp"

namespace pollux::model {

namespace {

// AdaScale gain: how many initial-batch steps one step at scale r is worth (1 <= gain <= r).
double adaScaleGain(const GradParams& grad, double scale) {
  const double denominator = grad.var / scale + grad.sqr;
  if (denominator <= 0.0) return 1.0;  // no gradient statistics yet: assume no gain
  return (grad.var + grad.sqr) / denominator;
}

}  // namespace

double efficiency(const GradParams& grad, double init_batch_size, double batch_size) {
  const double scale = batch_size / init_batch_size;
  return adaScaleGain(grad, scale) / scale;
}

LrScaling parseLrScaling(std::string_view name) {
  if (name == "adascale") return LrScaling::kAdaScale;
  if (name == "sqrt") return LrScaling::kSquareRoot;
  if (name == "linear") return LrScaling::kLinear;
  throw InvalidInput("learning-rate scaling must be adascale, sqrt or linear, got '" +
                     std::string(name) + "'");
}

const char* toString(LrScaling rule) {
  switch (rule) {
    case LrScaling::kAdaScale: return "adascale";
    case LrScaling::kSquareRoot: return "sqrt";
    case LrScaling::kLinear: return "linear";
  }
  return "unknown";
}

double lrScale(LrScaling rule, const GradParams& grad, double init_batch_size, double batch_size) {
  const double scale = batch_size / init_batch_size;
  switch (rule) {
    case LrScaling::kAdaScale: return adaScaleGain(grad, scale);
    case LrScaling::kSquareRoot: return std::sqrt(scale);
    case LrScaling::kLinear: return scale;
  }
  return 1.0;
}

}  // namespace pollux::model
