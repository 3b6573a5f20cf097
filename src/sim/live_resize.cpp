// SPDX-License-Identifier: GPL-2.0-or-later
#include "live_resize.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace pollux::sim {

std::optional<double> modelParameters(const std::string& application) {
  static const std::map<std::string, double> kParameters = {
      {"cifar10", 11e6},  {"imagenet", 25e6}, {"bert", 110e6},
      {"deepspeech2", 38e6}, {"yolov3", 62e6}, {"ncf", 0.4e6}};
  const auto found = kParameters.find(application);
  if (found == kParameters.end()) return std::nullopt;
  return found->second;
}

double liveGrowthStall(double parameters, int replicas_after) {
  const double broadcast_steps = std::log2(std::max(2, replicas_after)) / 2;
  return kStallBaseS + kGrowthStallPerParameterS * parameters * broadcast_steps;
}

double liveShrinkStall(double parameters) {
  return kStallBaseS + kShrinkStallPerParameterS * parameters;
}

}  // namespace pollux::sim
