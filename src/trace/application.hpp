// SPDX-License-Identifier: GPL-2.0-or-later
// An application's profiles: step times per GPU type and its validation curves.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/model/type_models.hpp"
#include "throughput_profile.hpp"
#include "validation_curves.hpp"

namespace pollux::trace {

struct Application {
  std::string name;
  std::map<std::string, ThroughputProfile> by_type;  // one per GPU type of the cluster
  ValidationCurves curves;

  const ThroughputProfile& on(const std::string& gpu_type) const { return by_type.at(gpu_type); }
  // Largest per-GPU batch every GPU type can hold (the tightest memory limit).
  int commonMaxLocalBsz() const;
  int minLocalBsz() const;
};

// Reads DIR/NAME: for each GPU type, placements-TYPE.csv (else placements.csv) and optional
// scalability-TYPE.csv (else scalability.csv), plus every validation-B.csv. Throws
// std::invalid_argument if the folder or a type's profile is missing, TraceError if a
// file is malformed.
Application loadApplication(const std::string& profiles_dir, const std::string& name,
                            const std::vector<std::string>& gpu_types);

// Speed of each GPU type relative to the first: the mean over applications of the ratio of
// single-GPU step times at each application's smallest per-GPU batch.
model::RelativeSpeeds estimateRelativeSpeeds(const std::map<std::string, Application>& apps,
                                             const std::vector<std::string>& gpu_types);

}  // namespace pollux::trace
