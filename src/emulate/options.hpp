// SPDX-License-Identifier: GPL-2.0-or-later
// pollux-emulate's command line.
#pragma once

#include <map>
#include <string>

namespace pollux::emulate {

struct Options {
  std::string app;
  std::string profiles;                  // empty: the installed AdaptDL traces
  double time_scale = 1;                 // wall time = profile time / time_scale
  double target_fraction = 1;            // of the application's full training
  double startup_s = 0;                  // wall seconds of "loading" before the first step
  double checkpoint_interval_s = 2;      // wall seconds between periodic checkpoints
  std::string checkpoint;                // empty: pollux-emulate-APP-$SLURM_JOB_ID.ckpt
  std::map<std::string, double> speeds;  // GPU type -> speed over the profile's GPU
  int nodes = 0;                         // 0: from Slurm's environment
  int gpus_per_node = 0;                 // 0: from Slurm's environment
  double dataset_size = 0;               // examples per epoch; 0: the application's dataset
  // The job is this many epochs of the data set long (examples at the initial batch size,
  // as its progress counts them) instead of --target-fraction, and declares it; 0: not given.
  double epochs = 0;
  bool declare = false;                  // declare the length (implied by --epochs)
};

// Throws pollux::InvalidInput with a message for the user. Returns false for --help.
bool parseOptions(int argc, char** argv, Options& options);
const char* usage();

}  // namespace pollux::emulate
