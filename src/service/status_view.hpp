// What one caller may read of the published status (GET /v1/status, /v1/jobs/<id>). Root,
// SlurmUser and a job's owner see the job in full; other users see only what Slurm itself shows
// every user of it (squeue, and scontrol show job with the AdminComment the plugin writes), and
// nothing of it under PrivateData=jobs, as squeue would.
#pragma once

#include <cstdint>
#include <optional>

#include <json/json.h>

namespace pollux::service {

struct Viewer {
  uint32_t uid;
  bool is_operator;        // root or SlurmUser
  bool private_jobs;       // slurm.conf PrivateData=jobs
};

// The job entry of the status document as `viewer` may see it; nullopt if it is hidden.
std::optional<Json::Value> jobFor(const Json::Value& job, const Viewer& viewer);

// The whole status document as `viewer` may see it.
Json::Value statusFor(const Json::Value& status, const Viewer& viewer);

}  // namespace pollux::service
