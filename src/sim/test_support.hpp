// SPDX-License-Identifier: GPL-2.0-or-later
// Helpers for the simulator's unit tests: temporary files and a tiny synthetic application.
#pragma once

#include <string>

#include "testing/shipped_traces.hpp"

namespace pollux::sim::testing {

using pollux::testing::shippedTraces;

// A fresh temporary directory (all of them are removed when the test program exits).
std::string makeTempDir();
// Writes `text` to DIR/NAME (creating DIR's missing parents) and returns the path.
std::string writeFile(const std::string& dir, const std::string& name, const std::string& text);

// Creates DIR/toy: one GPU takes 1 s per step of local_bsz 10 (up to 20 per GPU, 2 s), two
// GPUs 1 s with 0.5 s of sync; runs at B=10 and B=40 with grad_var = 0 (no gain from larger
// batches) reaching progress 100. Returns DIR.
std::string makeToyProfiles();

}  // namespace pollux::sim::testing
