// SPDX-License-Identifier: GPL-2.0-or-later
#include "status_text.hpp"

#include <gtest/gtest.h>

namespace pollux::client {
namespace {

Json::Value jobWithLength(double progress, double target, Json::Value remaining_s) {
  Json::Value job;
  job["job_id"] = "42";
  job["length"]["progress"] = progress;
  job["length"]["target_progress"] = target;
  job["length"]["remaining_s"] = remaining_s;
  return job;
}

TEST(StatusTextTest, LengthLineShowsProgressTargetAndRemainingTime) {
  EXPECT_EQ(lengthText(jobWithLength(25000, 100000, 5400)),
            "Progress=25000 TargetProgress=100000 (25.0 %) Remaining=01:30:00");
  EXPECT_EQ(lengthText(jobWithLength(25000, 100000, Json::Value())),
            "Progress=25000 TargetProgress=100000 (25.0 %) Remaining=unknown");
  EXPECT_EQ(lengthText(jobWithLength(1.5e6, 1.28e6, Json::Value())),
            "Progress=1.5e+06 TargetProgress=1.28e+06 (117.2 %) Remaining=unknown (target reached)");
  EXPECT_EQ(lengthText(jobWithLength(1, 3, 2 * 86400 + 3 * 3600 + 4 * 60 + 5.4)),
            "Progress=1 TargetProgress=3 (33.3 %) Remaining=2-03:04:05");
  Json::Value undeclared = jobWithLength(1, 3, 1);
  undeclared.removeMember("length");
  EXPECT_EQ(lengthText(undeclared), "");  // no line
  Json::Value malformed = jobWithLength(1, 3, 1);
  malformed["length"]["progress"] = "much";
  EXPECT_EQ(lengthText(malformed), "");
}

TEST(StatusTextTest, DurationsAsSlurmWritesThem) {
  EXPECT_EQ(durationText(0), "00:00:00");
  EXPECT_EQ(durationText(59.6), "00:01:00");
  EXPECT_EQ(durationText(3599), "00:59:59");
  EXPECT_EQ(durationText(86399), "23:59:59");
  EXPECT_EQ(durationText(86400), "1-00:00:00");
  EXPECT_EQ(durationText(-5), "00:00:00");
}

Json::Value adaptiveJob() {
  Json::Value job;
  job["job_id"] = "7";
  job["user_id"] = 1000;
  job["state"] = "running";
  job["phase"] = "running";
  job["adaptive"] = true;
  job["min_gpus"] = 1;
  job["allocation"]["gpus"] = 4;
  job["allocation"]["gpu_type"] = "a100";
  job["allocation"]["nodes"]["n1"] = 4;
  job["batch_size"] = 512;
  job["local_bsz"] = 128;
  job["accum_steps"] = 0;
  job["lr_scale"] = 15.999335113507874;
  job["restarts"] = 1;
  job["restart_cost_s"] = 31.25;
  job["reported"] = true;
  job["status"] = "grown to 4 GPUs";
  job["models"]["a100"]["alpha_c"] = 0.0123456789;
  job["models"]["a100"]["gamma"] = 1.5;
  return job;
}

TEST(StatusTextTest, AJobIsWrittenInScontrolsManner) {
  EXPECT_EQ(jobText(adaptiveJob()),
            "JobId=7 UserId=1000 State=running Phase=running Adaptive=yes MinGpus=1\n"
            "   Allocation=4xa100(n1:4) BatchSize=512 LocalBsz=128 AccumSteps=0 LrScale=16.00\n"
            "   Restarts=1 RestartCostS=31.2 Reported=yes Status=\"grown to 4 GPUs\"\n"
            "   Model[a100] AlphaC=0.01235 Gamma=1.5\n"
            "\n");
}

TEST(StatusTextTest, WhatIsNotKnownYetIsNotApplicable) {
  Json::Value job = adaptiveJob();
  job["reported"] = false;
  job["batch_size"] = 0;
  job["allocation"] = Json::Value();
  job["status"] = "";
  job.removeMember("restart_cost_s");
  job.removeMember("models");
  EXPECT_EQ(jobText(job),
            "JobId=7 UserId=1000 State=running Phase=running Adaptive=yes MinGpus=1\n"
            "   Allocation=(none) BatchSize=N/A LocalBsz=N/A AccumSteps=N/A LrScale=N/A\n"
            "   Restarts=1 Reported=no Status=(null)\n"
            "\n");
}

TEST(StatusTextTest, ALiveChangesStallIsShownBesideTheRestartCost) {
  Json::Value job = adaptiveJob();
  job["resize_stall_s"] = 0.375;
  EXPECT_NE(jobText(job).find(" RestartCostS=31.2 ResizeStallS=0.38 Reported=yes"),
            std::string::npos)
      << jobText(job);
  job["join_startup_s"] = 3.5;  // and its joiners' start-up, once some joined
  EXPECT_NE(jobText(job).find(" ResizeStallS=0.38 JoinStartupS=3.5 Reported=yes"),
            std::string::npos)
      << jobText(job);
}

TEST(StatusTextTest, AJobsPartIsShownUnderItsAllocation) {
  Json::Value job = adaptiveJob();
  job["part"]["state"] = "wanted";
  EXPECT_NE(jobText(job).find("LrScale=16.00\n   Part JobId=(none) State=wanted\n"),
            std::string::npos)
      << jobText(job);
  job["part"]["state"] = "running";
  job["part"]["job_id"] = 12;
  job["part"]["nodes"].append("n2");
  job["part"]["nodes"].append("n3");
  EXPECT_NE(jobText(job).find("\n   Part JobId=12 State=running Nodes=n2,n3\n"), std::string::npos)
      << jobText(job);
  // The job shrinks to some of the part's nodes: the workers on the others leave.
  job["part"]["state"] = "leaving";
  job["part"]["leaving_nodes"].append("n3");
  EXPECT_NE(jobText(job).find("\n   Part JobId=12 State=leaving Nodes=n2,n3 LeavingNodes=n3\n"),
            std::string::npos)
      << jobText(job);
}

TEST(StatusTextTest, ARigidJobShowsOnlyItsRequest) {
  Json::Value job;
  job["job_id"] = "8";
  job["user_id"] = 1000;
  job["state"] = "pending";
  job["adaptive"] = false;
  job["min_gpus"] = job["max_gpus"] = 8;
  job["gpu_type"] = "a100";
  job["allocation"] = Json::Value();
  job["batch_size"] = 0;
  job["lr_scale"] = 1.0;
  EXPECT_EQ(jobText(job),
            "JobId=8 UserId=1000 State=pending Adaptive=no MinGpus=8 MaxGpus=8 GpuType=a100\n\n");
}

TEST(StatusTextTest, TheStatusHasTheRoundTheNodesAndTheJobs) {
  Json::Value status;
  status["time"] = 0.0;
  status["interval_s"] = 60;
  status["rest"] = "http://10.0.0.1:6820";
  status["last_round"]["duration_ms"] = 12.3456;
  status["last_round"]["solver_status"] = "optimal";
  status["last_round"]["problems"].append("JobId=7: requeue waits until its nodes register");
  Json::Value node;
  node["name"] = "n1";
  node["gpu_type"] = "a100";
  node["gpus"] = 4;
  node["free_gpus"] = 0;
  node["usable"] = true;
  node["free_cpus"] = 2;
  node["free_memory_mb"] = 1900;
  status["nodes"].append(node);
  status["jobs"].append(adaptiveJob());
  const std::string text = statusText(status);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "Pollux Time=" + timeText(0) + " Interval=60 Rest=http://10.0.0.1:6820");
  EXPECT_NE(text.find("\n   LastRound DurationMs=12.3 SolverStatus=optimal\n"
                      "   Problem=\"JobId=7: requeue waits until its nodes register\"\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\nNodeName=n1 GpuType=a100 Gpus=4 FreeGpus=0 Usable=yes FreeCpus=2 "
                      "FreeMem=1900\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\nJobId=7 UserId=1000"), std::string::npos) << text;
}

TEST(StatusTextTest, TimesAreWrittenAsScontrolWritesThem) {
  const std::string text = timeText(1764187514.6);
  ASSERT_EQ(text.size(), 19u) << text;
  EXPECT_EQ(text[4], '-');
  EXPECT_EQ(text[10], 'T');
  EXPECT_EQ(text.substr(0, 4), "2025");
}

}  // namespace
}  // namespace pollux::client
