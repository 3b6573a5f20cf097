// SPDX-License-Identifier: GPL-2.0-or-later
#include "service.hpp"

#include <gtest/gtest.h>

#include <stdlib.h>

#include <filesystem>

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

  std::unique_ptr<Service> makeService() const {
    ServiceSettings settings;
    settings.scheduler_parameters = "pollux_interval=60";
    settings.state_dir = dir_;
    settings.log = [](LogLevel, const std::string&) {};
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

  std::string dir_;
};

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
