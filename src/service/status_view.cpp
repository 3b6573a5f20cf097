// SPDX-License-Identifier: GPL-2.0-or-later
#include "status_view.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace pollux::service {

namespace {

// Job fields any user can already read from Slurm: squeue (id, user, state, comment, nodes,
// GPUs, Reason), scontrol show job (restarts, AdminComment "pollux: <why> batch_size=N").
constexpr const char* kPublicJobFields[] = {
    "job_id",   "user_id",    "state",    "phase",  "adaptive", "comment_error", "min_gpus",
    "max_gpus", "gpu_type",   "allocation", "restarts", "status", "waiting",     "batch_size"};

Json::Value publicFields(const Json::Value& job) {
  Json::Value visible(Json::objectValue);
  for (const char* field : kPublicJobFields) {
    if (job.isMember(field)) visible[field] = job[field];
  }
  visible["redacted"] = true;  // models, progress, length, local batch, restart cost: owner only
  return visible;
}

}  // namespace

std::optional<Json::Value> jobFor(const Json::Value& job, const Viewer& viewer) {
  if (viewer.is_operator || job["user_id"].asUInt() == viewer.uid) return job;
  if (viewer.private_jobs) return std::nullopt;
  return publicFields(job);
}

Json::Value statusFor(const Json::Value& status, const Viewer& viewer) {
  if (viewer.is_operator) return status;
  Json::Value visible = status;
  visible["last_round"].removeMember("problems");  // action failures name other users' jobs
  visible["jobs"] = Json::Value(Json::arrayValue);
  for (const auto& job : status["jobs"]) {
    if (auto shown = jobFor(job, viewer)) visible["jobs"].append(*shown);
  }
  return visible;
}

Json::Value lengthStatus(const policy::DeclaredLength& length, std::optional<double> remaining_s) {
  Json::Value out(Json::objectValue);
  out["progress"] = length.progress;
  out["target_progress"] = length.target;
  const bool usable = remaining_s && std::isfinite(*remaining_s) && *remaining_s >= 0;
  out["remaining_s"] = usable ? Json::Value(*remaining_s) : Json::Value(Json::nullValue);
  return out;
}

}  // namespace pollux::service
