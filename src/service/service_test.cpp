// SPDX-License-Identifier: GPL-2.0-or-later
#include "service.hpp"
#include "site_policy.hpp"

#include "io/state_file.hpp"

#include <gtest/gtest.h>

#include <stdlib.h>

#include <filesystem>
#include <fstream>

namespace pollux::service {
namespace {

namespace fs = std::filesystem;

// A service saving its state in a fresh folder, removed afterwards.
class ServiceTest : public ::testing::Test {
 protected:
  ServiceTest() {
    char pattern[] = "/tmp/pollux-service-XXXXXX";
    dir_ = mkdtemp(pattern);
  }
  ~ServiceTest() override { fs::remove_all(dir_); }

  std::unique_ptr<Service> makeService(double slurmctld_started = 0) {
    ServiceSettings settings;
    settings.slurmctld_started = slurmctld_started;
    settings.scheduler_parameters = "pollux_interval=60";
    settings.state_dir = dir_;
    settings.log = [this](LogLevel, const std::string& line) { log_.push_back(line); };
    return std::make_unique<Service>(settings);
  }
  // One round with no job: the policy has nothing to do.
  static void runEmptyRound(Service& service, double now) {
    Round round;
    round.now = now;
    const auto actions = service.plan(round);
    ASSERT_TRUE(actions && actions->empty());
    service.finish({});
  }
  fs::path stateFile() const { return fs::path(dir_) / "pollux_state.json"; }

  // The log lines that contain `text`.
  std::vector<std::string> logged(const std::string& text) const {
    std::vector<std::string> found;
    for (const auto& line : log_) {
      if (line.find(text) != std::string::npos) found.push_back(line);
    }
    return found;
  }

  std::string dir_;
  std::vector<std::string> log_;
};

// One node of 2 GPUs and a pending adaptive job, 7, that Pollux holds: a round starts it.
Round roundWithHeldJob(double now) {
  Round round;
  round.now = now;
  SlurmNode node;
  node.name = "n1";
  node.gpus = GpuGres{"a100", 2};
  node.free_cpus = 4;
  round.nodes.push_back(node);
  round.partitions["gpu"] = {"n1"};
  SlurmJob job;
  job.id = 7;
  job.state = JobState::kPending;
  job.eligible_time = kPolluxHoldTime;
  job.submit_time = now - 10;
  job.comment = "adaptive:max_gpus=2";
  job.partitions = {"gpu"};
  job.num_nodes = 1;
  job.gpu_request.per_node = "gres:gpu:1";
  job.gpu_request.nodes = 1;
  readRequests(job);
  round.jobs.push_back(job);
  return round;
}

// A start the shim deferred is neither done nor failed: one line saying so, and the next
// round starts the job again.
TEST_F(ServiceTest, ADeferredStartIsLoggedAndDecidedAgainByTheNextRound) {
  auto service = makeService();
  auto actions = service->plan(roundWithHeldJob(1000));
  ASSERT_TRUE(actions && actions->size() == 1);
  ASSERT_EQ(actions->front().action.kind, ActionKind::kStart);
  service->finish({{0, "", true}});
  ASSERT_EQ(logged("JobId=7 start deferred to the next round").size(), 1u);
  EXPECT_TRUE(logged("failed").empty());
  EXPECT_TRUE(logged("JobId=7 start: ").empty());
  actions = service->plan(roundWithHeldJob(1002));
  ASSERT_TRUE(actions && actions->size() == 1);
  EXPECT_EQ(actions->front().action.kind, ActionKind::kStart);
  service->finish({{}});
  EXPECT_EQ(logged("JobId=7 start: ").size(), 1u);
}

// For 30 s after slurmctld starts with jobs from before (whether or not the plugin's state
// file had them), no job starts; a slurmctld started with none has nothing to settle.
TEST_F(ServiceTest, NoJobStartsWhileSlurmctldSettlesAfterAStartWithJobs) {
  auto restarted = makeService(995);  // job 7 was submitted at 990
  auto actions = restarted->plan(roundWithHeldJob(1000));
  ASSERT_TRUE(actions);
  EXPECT_TRUE(actions->empty());
  restarted->finish({});
  EXPECT_EQ(logged("JobId=7: start waits until slurmctld has settled after its start").size(),
            1u);
  Round settled = roundWithHeldJob(1025);
  settled.jobs.front().submit_time = 990;
  actions = restarted->plan(settled);
  ASSERT_TRUE(actions && actions->size() == 1);
  EXPECT_EQ(actions->front().action.kind, ActionKind::kStart);
  restarted->finish({{}});

  fs::remove(stateFile());
  auto fresh = makeService(985);  // no state file, and job 7 came after the start
  actions = fresh->plan(roundWithHeldJob(1000));
  ASSERT_TRUE(actions && actions->size() == 1);
  EXPECT_EQ(actions->front().action.kind, ActionKind::kStart);
  fresh->finish({{}});
}

// A slurmctld started with an unusable state file of the plugin's may have had jobs, whose
// requeue made their submit times later than its start: it settles all the same.
TEST_F(ServiceTest, AnUnusableStateFileMakesSlurmctldSettle) {
  std::ofstream(stateFile()) << "{\"version\": 1, \"jobs\": [truncated";
  auto restarted = makeService(995);
  Round round = roundWithHeldJob(1000);
  round.jobs.front().submit_time = 998;  // its requeue ended after the start
  auto actions = restarted->plan(round);
  ASSERT_TRUE(actions);
  EXPECT_TRUE(actions->empty());
  restarted->finish({});
  restarted.reset();  // a reconfigure re-creates the service, which reads the state file saved
  auto reconfigured = makeService(995);
  actions = reconfigured->plan(round);
  ASSERT_TRUE(actions);
  EXPECT_TRUE(actions->empty());
  reconfigured->finish({});
}

// Job 7 of roundWithHeldJob, which Pollux requeued at 900 before slurmctld restarted from
// state saved before that requeue: Slurm shows the stopped run RUNNING on n1.
Round roundWithStoppedRunShown(double now) {
  Round round = roundWithHeldJob(now);
  SlurmJob& job = round.jobs.front();
  job.state = JobState::kRunning;
  job.eligible_time = 700;
  job.start_time = 800;
  job.nodes = {"n1"};
  job.gpus_per_node = GpuGres{"a100", 1};
  round.nodes.front().gpus_used = 1;
  return round;
}

// A requeue is saved before Slurm takes it: a slurmctld killed right after it restarts with
// a plugin that knows the run was stopped, whatever state Slurm saved.
TEST_F(ServiceTest, SavesARequeueBeforeSlurmTakesIt) {
  Json::Value state;
  state["version"] = 1;
  Json::Value& job = state["jobs"]["7"];
  job["owner_uid"] = 0;
  job["adaptive"] = true;
  job["restarts"] = 1;
  job["last_change_time"] = 900;
  job["phase"] = "requeued";
  job["phase_since"] = 900;
  io::saveState(stateFile(), state);
  auto service = makeService();
  const auto actions = service->plan(roundWithStoppedRunShown(1000));
  ASSERT_TRUE(actions && actions->size() == 1);
  ASSERT_EQ(actions->front().action.kind, ActionKind::kRequeue);
  const auto saved = io::loadState(stateFile());
  ASSERT_TRUE(saved);
  EXPECT_EQ((*saved)["jobs"]["7"]["phase"].asString(), "requeued_again");
  EXPECT_EQ((*saved)["jobs"]["7"]["phase_since"].asDouble(), 1000);
  EXPECT_EQ((*saved)["jobs"]["7"]["restarts"].asInt(), 2);
  // Slurm refused it: the state saved at the round's end has the job as it was.
  service->finish({{1, "Job is not running", false}});
  EXPECT_EQ((*io::loadState(stateFile()))["jobs"]["7"]["phase"].asString(), "requeued");
}

TEST_F(ServiceTest, SavesItsFirstRoundThenNoRoundWithoutActionsWithinAnInterval) {
  auto service = makeService();
  runEmptyRound(*service, 1000);
  EXPECT_TRUE(fs::exists(stateFile()));
  EXPECT_GT(service->lastRoundCosts().state_bytes, 0u);
  runEmptyRound(*service, 1001);  // no action, saved less than pollux_interval ago
  EXPECT_EQ(service->lastRoundCosts().state_bytes, 0u);
}

TEST_F(ServiceTest, StatusShowsTheLastRoundOnceItEnded) {
  auto service = makeService();
  EXPECT_EQ(service->status()["time"].asDouble(), 0);
  runEmptyRound(*service, 1000);
  const Json::Value first = service->status();
  EXPECT_EQ(first["time"].asDouble(), 1000);
  EXPECT_TRUE(first["last_round"].isMember("duration_ms"));
  EXPECT_EQ(first["last_round"]["actions"].asUInt64(), 0u);
  runEmptyRound(*service, 1030);
  EXPECT_EQ(service->status()["time"].asDouble(), 1030);
}

}  // namespace
}  // namespace pollux::service
