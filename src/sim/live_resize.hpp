// SPDX-License-Identifier: GPL-2.0-or-later
// What a live change of a job's workers costs in pollux-sim --resize live.
//
// The stall model is fitted to bench/live-stall (bench/RESULTS.md, "Live change stall against
// model size"): pollux.elastic on CPU with gloo, an MLP of P parameters, 2 -> 4 workers grew
// in about 0.26 s at 1e6 parameters, 0.6-0.8 s at 1e7 and 2.5-2.9 s at 1e8, and 4 -> 3 shrank
// in 0.26, 0.53 and 1.34 s. A growth sends the state to the joiners (a broadcast, which takes
// log2(replicas) steps of a tree), a shrink only re-forms the group:
//   growth: kStallBaseS + kGrowthStallPerParameterS x P x log2(replicas after) / 2
//   shrink: kStallBaseS + kShrinkStallPerParameterS x P
// (log2(4) / 2 = 1: the measured 2 -> 4 growth).
#pragma once

#include <optional>
#include <string>

namespace pollux::sim {

inline constexpr double kStallBaseS = 0.25;
inline constexpr double kGrowthStallPerParameterS = 2.5e-8;
inline constexpr double kShrinkStallPerParameterS = 1.1e-8;

// Parameters of each application's model. The traces do not record them: these are the
// published sizes of the models the Pollux artifact trained (ResNet-18 for cifar10, ResNet-50
// for imagenet, BERT-base for bert, DeepSpeech2 (about, as its layers vary), YOLOv3, NeuMF on
// MovieLens-1M for ncf).
// nullopt for other applications: their changes are restarts.
std::optional<double> modelParameters(const std::string& application);

double liveGrowthStall(double parameters, int replicas_after);
double liveShrinkStall(double parameters);

}  // namespace pollux::sim
