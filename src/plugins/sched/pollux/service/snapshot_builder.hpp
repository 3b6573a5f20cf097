// Turns Slurm's jobs and nodes plus what the store knows into a policy snapshot.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "job_store.hpp"
#include "policy/policy.hpp"
#include "slurm_view.hpp"

namespace pollux::service {

// GPU type name for nodes and jobs whose GRES has no type.
inline constexpr const char* kUntypedGpu = "gpu";

// The configured speed of every GPU type the nodes have; default_speed for the others.
model::RelativeSpeeds relativeSpeeds(const std::vector<SlurmNode>& nodes,
                                     const config::Config& config);

// Nodes with GPUs; an unusable node offers only the GPUs its running jobs hold; each node's
// CPUs (and memory, where consumable) are what no job holds plus what its GPU jobs hold.
// Adaptive jobs (pending or running; not those waiting for a --begin time) with their models
// and limits; rigid jobs that use or wait for GPUs; each with its CPUs and memory per node.
// Relative speeds: the configured ones, default_speed for every other type present.
policy::Snapshot buildSnapshot(double now, const std::vector<SlurmNode>& nodes,
                               const std::vector<SlurmJob>& jobs,
                               const std::map<std::string, JobRecord>& records,
                               const config::Config& config);

}  // namespace pollux::service
