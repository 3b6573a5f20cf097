// SPDX-License-Identifier: GPL-2.0-or-later
// The emulator's checkpoint file: its training state, written atomically.
#pragma once

#include <optional>
#include <string>

#include "emulated_job.hpp"

namespace pollux::emulate {

// Throws std::runtime_error naming the path if it cannot be written.
void saveCheckpoint(const std::string& path, const std::string& app, const TrainingState& state);
// nullopt if there is no file. Throws pollux::InvalidInput (corrupt, or another app's) or
// std::runtime_error (unreadable), naming the path.
std::optional<TrainingState> loadCheckpoint(const std::string& path, const std::string& app);

}  // namespace pollux::emulate
