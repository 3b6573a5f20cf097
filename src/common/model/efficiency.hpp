// SPDX-License-Identifier: GPL-2.0-or-later
// Statistical efficiency from the gradient noise scale, and learning-rate scaling rules.
#pragma once

#include <string_view>

#include "params.hpp"

namespace pollux::model {

// Progress per example at total batch `batch_size` relative to `init_batch_size`:
// with r = M/M0, E = (var + sqr) / (var/r + sqr) / r. E = 1 at M0 and falls as M grows.
double efficiency(const GradParams& grad, double init_batch_size, double batch_size);

enum class LrScaling { kAdaScale, kSquareRoot, kLinear };

// Parses "adascale", "sqrt" or "linear"; throws pollux::InvalidInput otherwise.
LrScaling parseLrScaling(std::string_view name);
const char* toString(LrScaling rule);

// Factor applied to the initial learning rate when training at `batch_size`:
// AdaScale's gain (var + sqr) / (var/r + sqr), sqrt(r), or r.
double lrScale(LrScaling rule, const GradParams& grad, double init_batch_size, double batch_size);

}  // namespace pollux::model
