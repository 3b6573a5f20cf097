// SPDX-License-Identifier: GPL-2.0-or-later
// pollux-emulate's run in wall time: the step loop of the job's first task and the wait of the
// others, talking to pollux-agent through <pollux/pollux_train.h>, checkpointing, and stopping
// when the agent or a signal asks.
#pragma once

#include <string>

#include "emulated_job.hpp"

namespace pollux::emulate {

struct RunSettings {
  std::string app;
  std::string checkpoint;
  double time_scale;
  double startup_s;
  double checkpoint_interval_s;
  double dataset_size;  // examples per epoch, for the reported epochs
  // Declares the job's length to the agent at the start: `declare_epochs` epochs of
  // dataset_size examples (when > 0), else the job's target in examples (when `declare`).
  double declare_epochs = 0;
  bool declare = false;
};

// Trains `job` (already restored from its checkpoint) to its target. Returns the exit status:
// 0 when done or stopped by the agent, 128 + the signal after SIGTERM or SIGINT.
int runFirstTask(EmulatedJob& job, const RunSettings& settings);
// Waits for the first task to finish (its checkpoint says done) or for a stop. Returns the exit
// status as above; throws what loadCheckpoint throws if the checkpoint is unusable.
int runOtherTask(const std::string& app, const std::string& checkpoint);

// SIGTERM and SIGINT make the run checkpoint and stop.
void installStopHandler();

}  // namespace pollux::emulate
