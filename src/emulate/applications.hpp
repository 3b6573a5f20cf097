// SPDX-License-Identifier: GPL-2.0-or-later
// The applications pollux-emulate replays: their measured profiles and their datasets.
#pragma once

#include <string>

#include "trace/application.hpp"

namespace pollux::emulate {

// The GPU type name the single-type AdaptDL profiles are loaded under.
inline const char* const kProfileGpuType = "profile";

// DIR/NAME's profile. Throws pollux::InvalidInput naming the applications DIR has if it has
// no NAME; what trace::loadApplication throws if the profile is unusable.
trace::Application loadProfile(const std::string& profiles_dir, const std::string& name);

// Examples in one epoch of the application's training set (the datasets of the Pollux paper;
// for other applications, one epoch of the trace: its first validation point).
double datasetSize(const trace::Application& app);

}  // namespace pollux::emulate
