// pollux-emulate's run: the step loop in wall time, talking to pollux-agent through
// <pollux/pollux_train.h>, checkpointing, resuming, and stopping when asked.
#pragma once

#include <string>

#include "emulated_job.hpp"
#include "options.hpp"

namespace pollux::emulate {

// Returns the process exit status.
int runFirstTask(EmulatedJob& job, const Options& options, const std::string& checkpoint);
// Tasks other than the first wait for the first to finish (or for Slurm to stop them).
int runOtherTask(const std::string& app, const std::string& checkpoint);

// Set by the SIGTERM handler.
void installStopHandler();

}  // namespace pollux::emulate
