// SPDX-License-Identifier: GPL-2.0-or-later
// What pollux-emulate takes from Slurm's and pollux-agent's environment (options override).
#pragma once

#include <functional>
#include <string>

#include "options.hpp"
#include "trace/throughput_profile.hpp"

namespace pollux::emulate {

using Getenv = std::function<const char*(const char*)>;

struct JobEnvironment {
  trace::GpusPerNode placement;
  double speed;            // this GPU type over the profile's (--speed), 1 if not given
  std::string checkpoint;  // the checkpoint file
  bool first_task;         // only the job's first task trains
};

// Nodes: --nodes, SLURM_STEP_NUM_NODES, SLURM_JOB_NUM_NODES, else 1. GPUs per node:
// --gpus-per-node, SLURM_GPUS_ON_NODE, the entries of CUDA_VISIBLE_DEVICES, else 1. GPU type:
// POLLUX_GPU_TYPE. Checkpoint: --checkpoint, else pollux-emulate-APP-$SLURM_JOB_ID.ckpt
// ("local" without a job). First task: SLURM_PROCID unset or 0. Throws pollux::InvalidInput
// if one of these variables is set but not a whole number.
JobEnvironment readJobEnvironment(const Options& options, const Getenv& getenv);

}  // namespace pollux::emulate
