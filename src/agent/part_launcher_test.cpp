// SPDX-License-Identifier: GPL-2.0-or-later
#include "part_launcher.hpp"

#include <gtest/gtest.h>

#include "test_env.hpp"
#include "workers.hpp"

namespace pollux::agent {
namespace {

using testing::fakeEnv;
using Words = std::vector<std::string>;

TEST(PartLauncher, PartIsSubmittedAsTheJobWasWithItsTimeLeft) {
  const GetEnv env = fakeEnv({{"SLURM_JOB_NAME", "train"},
                              {"SLURM_JOB_PARTITION", "gpu"},
                              {"SLURM_JOB_ACCOUNT", "acct1"},
                              {"SLURM_JOB_QOS", "normal"},
                              {"SLURM_NTASKS_PER_NODE", "2"},
                              {"SLURM_GPUS_ON_NODE", "2"}});
  EXPECT_EQ(partSubmitCommand("7", env, "1:02:03"),
            (Words{"sbatch", "--parsable", "--comment=adaptive:part_of=7", "--job-name=train",
                   "--partition=gpu", "--account=acct1", "--qos=normal", "--time=1:02:03",
                   "--nodes=1", "--ntasks-per-node=2", "--gres=gpu:2", "--no-requeue",
                   "--output=/dev/null", "--wrap=exec sleep infinity"}));
  EXPECT_EQ(partSubmitCommand("7", fakeEnv({}), ""),
            (Words{"sbatch", "--parsable", "--comment=adaptive:part_of=7", "--job-name=part-of-7",
                   "--nodes=1", "--ntasks-per-node=1", "--gres=gpu:1", "--no-requeue",
                   "--output=/dev/null", "--wrap=exec sleep infinity"}));
}

TEST(PartLauncher, WorkersStartInThePartWithTheJobsCommand) {
  Options options;
  options.command = {"python3", "train.py"};
  EXPECT_EQ(partStepCommand("/usr/bin/pollux-agent", options, 12, 2, 1),
            (Words{"srun", "--jobid=12", "--nodes=2", "--ntasks=2", "--ntasks-per-node=1",
                   "--kill-on-bad-exit=0", "--no-kill", "/usr/bin/pollux-agent", "--", "python3",
                   "train.py"}));
}

TEST(PartLauncher, WorkersInThePartJoinTheJobsRendezvous) {
  StepSettings settings{"token", 2, "/tmp/status"};
  const auto env =
      partStepEnvironment("7", 12, {"n2"}, 2, {"n1", "n3"}, settings, fakeEnv({}));
  EXPECT_EQ(env.at("SLURM_JOB_ID"), "12");
  EXPECT_EQ(env.at("SLURM_JOB_NODELIST"), "n2");
  EXPECT_EQ(env.at("SLURM_NTASKS"), "2");
  EXPECT_EQ(env.at("MASTER_ADDR"), "n1");
  EXPECT_EQ(env.at("MASTER_PORT"), std::to_string(masterPort("7")));
  EXPECT_EQ(env.at("POLLUX_JOIN"), "1");
  EXPECT_EQ(env.at("POLLUX_JOIN_TOKEN"), "token");
  EXPECT_EQ(env.at("POLLUX_PART_OF"), "7");
  EXPECT_EQ(env.count(kStepStatusVariable), 0u);  // the job's rank 0 writes it
  const auto given = partStepEnvironment("7", 12, {"n2"}, 2, {"n1"}, settings,
                                         fakeEnv({{"MASTER_ADDR", "head"}, {"MASTER_PORT", "29500"}}));
  EXPECT_EQ(given.at("MASTER_ADDR"), "head");
  EXPECT_EQ(given.at("MASTER_PORT"), "29500");
}

}  // namespace
}  // namespace pollux::agent
