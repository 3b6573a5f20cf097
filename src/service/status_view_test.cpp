// SPDX-License-Identifier: GPL-2.0-or-later
#include "status_view.hpp"

#include <gtest/gtest.h>

namespace pollux::service {
namespace {

Json::Value sampleJob(uint32_t owner) {
  Json::Value job;
  job["job_id"] = "42";
  job["user_id"] = owner;
  job["state"] = "running";
  job["adaptive"] = true;
  job["min_gpus"] = 1;
  job["allocation"]["gpu_type"] = "a100";
  job["batch_size"] = 512;
  job["local_bsz"] = 128;
  job["accum_steps"] = 0;
  job["lr_scale"] = 2.0;
  job["restarts"] = 1;
  job["status"] = "grown";
  job["models"]["a100"]["alpha_c"] = 0.1;
  job["progress"]["examples"] = 1000;
  job["restart_cost_s"] = 30;
  job["length"] = lengthStatus({25000, 100000}, 5400.0);
  return job;
}

TEST(StatusViewTest, OwnerAndOperatorsSeeEverything) {
  const Json::Value job = sampleJob(1000);
  EXPECT_EQ(*jobFor(job, {1000, false, true}), job);
  EXPECT_EQ(*jobFor(job, {0, true, true}), job);
}

TEST(StatusViewTest, OtherUsersSeeOnlyWhatSlurmShowsThem) {
  const auto shown = jobFor(sampleJob(1000), {2000, false, false});
  ASSERT_TRUE(shown);
  for (const char* hidden : {"models", "progress", "length", "local_bsz", "accum_steps",
                             "lr_scale", "restart_cost_s"}) {
    EXPECT_FALSE(shown->isMember(hidden)) << hidden;
  }
  for (const char* kept : {"job_id", "user_id", "state", "adaptive", "min_gpus", "allocation",
                           "batch_size", "restarts", "status"}) {
    EXPECT_TRUE(shown->isMember(kept)) << kept;
  }
  EXPECT_TRUE((*shown)["redacted"].asBool());
}

TEST(StatusViewTest, PrivateDataJobsHidesOtherUsersJobs) {
  EXPECT_FALSE(jobFor(sampleJob(1000), {2000, false, true}));
}

TEST(StatusViewTest, StatusFiltersEveryJobAndTheRoundsProblems) {
  Json::Value status;
  status["nodes"][0]["name"] = "n1";
  status["last_round"]["problems"][0] = "JobId=42 requeue failed";
  status["jobs"][0] = sampleJob(1000);
  status["jobs"][1] = sampleJob(2000);
  status["jobs"][1]["job_id"] = "43";

  const Json::Value mine = statusFor(status, {2000, false, true});
  EXPECT_EQ(mine["nodes"], status["nodes"]);
  EXPECT_FALSE(mine["last_round"].isMember("problems"));
  ASSERT_EQ(mine["jobs"].size(), 1u);
  EXPECT_EQ(mine["jobs"][0], status["jobs"][1]);

  const Json::Value shared = statusFor(status, {2000, false, false});
  ASSERT_EQ(shared["jobs"].size(), 2u);
  EXPECT_FALSE(shared["jobs"][0].isMember("progress"));
  EXPECT_EQ(statusFor(status, {0, true, true}), status);
}

TEST(StatusViewTest, LengthEntryCarriesTheRoundsEstimateOrNull) {
  const Json::Value estimated = lengthStatus({25000, 100000}, 5400.0);
  EXPECT_DOUBLE_EQ(estimated["progress"].asDouble(), 25000);
  EXPECT_DOUBLE_EQ(estimated["target_progress"].asDouble(), 100000);
  EXPECT_DOUBLE_EQ(estimated["remaining_s"].asDouble(), 5400);
  // No estimate yet (the policy gave none, or the job holds no GPUs): null, shown as unknown.
  const Json::Value unknown = lengthStatus({25000, 100000}, std::nullopt);
  ASSERT_TRUE(unknown.isMember("remaining_s"));
  EXPECT_TRUE(unknown["remaining_s"].isNull());
  // Past the declared length: the policy's guess (the length doubled).
  EXPECT_DOUBLE_EQ(lengthStatus({150000, 100000}, 10.0)["remaining_s"].asDouble(), 10);
}

}  // namespace
}  // namespace pollux::service
