// SPDX-License-Identifier: GPL-2.0-or-later
// GPUs in Slurm's GRES strings ("gpu:a100:4", "gres/gpu:a100=2", "gpu:(null):2(IDX:0-1)"),
// as job requests, node definitions and GPUs in use show them. Shared by sched/pollux and
// job_submit/pollux.
#pragma once

#include <optional>
#include <string>

namespace pollux::schema {

// GPUs per node of one type, as in a GRES string.
struct GpuGres {
  std::string type;  // empty when untyped
  int count = 0;
};

// Reads "gpu:a100:4", "gpu:a100:4(S:0-1)", "gres:gpu:a100:2", "gres/gpu:a100=2", "gpu:2",
// also inside comma or semicolon separated lists. nullopt when there is no GPU entry.
std::optional<GpuGres> parseGpuGres(const std::string& gres);

// The GPUs of every GPU entry of a GRES string as Slurm prints what a job was allocated on a
// node or what a node's jobs use: "gpu:a100:2(IDX:0-1)", "gpu:(null):2(IDX:0-1)",
// "gpu:a100(CNT:2)", "gpu:2", "gpu:a100:2,gpu:v100:1" (3). 0 without a GPU entry.
int countGpus(const std::string& gres);

}  // namespace pollux::schema
