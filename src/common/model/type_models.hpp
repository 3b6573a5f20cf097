// SPDX-License-Identifier: GPL-2.0-or-later
// A job's throughput models, one per GPU type, measured or estimated from relative speeds.
#pragma once

#include <map>
#include <string>

#include "params.hpp"

namespace pollux::model {

struct TypeModel {
  PerfParams params;
  bool estimated;  // true until the job has run on this GPU type
};

// Admin-configured speed of each GPU type relative to the others (e.g. a100=3, v100=1).
using RelativeSpeeds = std::map<std::string, double>;

class TypeModels {
 public:
  // Records the model fitted from samples on `gpu_type`, replacing any earlier one.
  // Throws pollux::InvalidInput on an empty type name or invalid parameters.
  void setMeasured(const std::string& gpu_type, const PerfParams& params);

  bool hasMeasured(const std::string& gpu_type) const;
  const std::map<std::string, PerfParams>& measured() const { return measured_; }

  // The model for every type in `speeds`: measured where the job has run, otherwise estimated
  // from the measured types (compute terms scaled by relative speed, communication terms kept,
  // geometric mean over sources). Types without a speed get no estimate. Throws
  // pollux::InvalidInput if a speed is not finite and positive.
  std::map<std::string, TypeModel> complete(const RelativeSpeeds& speeds) const;

 private:
  std::map<std::string, PerfParams> measured_;
};

}  // namespace pollux::model
