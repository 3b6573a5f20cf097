// SPDX-License-Identifier: GPL-2.0-or-later
#include "endpoint.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace pollux::client {
namespace {

TEST(Endpoint, LastSchedulerParametersWinsAndCommentsAreIgnored) {
  const std::string text =
      "SchedulerParameters=pollux_rest_port=1\n"
      "  schedulerparameters=pollux_rest_port=2,pollux_interval=5 # trailing\n"
      "#SchedulerParameters=pollux_rest_port=3\n";
  EXPECT_EQ(schedulerParameters(text), "pollux_rest_port=2,pollux_interval=5");
}

TEST(Endpoint, MungeSocketFromAuthInfo) {
  EXPECT_EQ(mungeSocketFromAuthInfo("AuthInfo=cred_expire=30,socket=/run/m.sock\n"), "/run/m.sock");
  EXPECT_EQ(mungeSocketFromAuthInfo("AuthType=auth/munge\n"), "");
}

TEST(Endpoint, ReadsTheSlurmConfNamedBySlurmConf) {
  const auto dir = std::filesystem::temp_directory_path() / "pollux-endpoint-test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "slurm.conf") << "SchedulerParameters=pollux_rest_addr=10.0.0.5,"
                                       "pollux_rest_port=7001\nAuthInfo=socket=/tmp/x.sock\n";
  std::ofstream(dir / "pollux.conf") << "";
  setenv("SLURM_CONF", (dir / "slurm.conf").c_str(), 1);
  const SlurmSettings settings = readSlurmSettings();
  EXPECT_EQ(settings.rest_url, "http://10.0.0.5:7001");
  EXPECT_EQ(settings.munge_socket, "/tmp/x.sock");
  std::filesystem::remove_all(dir);
}

TEST(Endpoint, DefaultsWithoutAConfigFile) {
  setenv("SLURM_CONF", "/nonexistent/slurm.conf", 1);
  EXPECT_EQ(readSlurmSettings().rest_url, "http://127.0.0.1:6830");
}

}  // namespace
}  // namespace pollux::client
