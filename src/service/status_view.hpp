// SPDX-License-Identifier: GPL-2.0-or-later
// What one caller may read of the published status (GET /v1/status, /v1/jobs/<id>). Root,
// SlurmUser and a job's owner see the job in full; other users see only what Slurm itself shows
// every user of it (squeue, and scontrol show job with the AdminComment the plugin writes), and
// nothing of it under PrivateData=jobs, as squeue would.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <json/json.h>

#include "common/policy/policy.hpp"

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

// A declaring job's "length" entry of the status: {"progress": P, "target_progress": T,
// "remaining_s": S or null}, P and T in the goodput model's unit (examples at the initial
// batch size, statistical efficiency applied), S the last round's estimate of the seconds
// left (null: unknown; no estimate yet, no allocation, or the declared work is done).
// Owner and operators only, as the job's progress.
Json::Value lengthStatus(const policy::DeclaredLength& length, std::optional<double> remaining_s);

}  // namespace pollux::service
