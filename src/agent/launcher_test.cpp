// SPDX-License-Identifier: GPL-2.0-or-later
#include "launcher.hpp"

#include <gtest/gtest.h>

#include "child_process.hpp"
#include "slurm_env.hpp"

namespace pollux::agent {
namespace {

using Nodes = std::vector<std::string>;

TEST(Launcher, ShrinksOnlyToSomeOfItsNodesKeepingTheBatchHost) {
  const Nodes current = {"n1", "n2", "n3"};
  const auto decided = [](std::map<std::string, int> nodes) {
    return std::optional<policy::Allocation>(policy::Allocation{"a100", nodes});
  };
  EXPECT_EQ(shrinkTarget(current, decided({{"n1", 4}, {"n3", 4}}), "n1"), (Nodes{"n1", "n3"}));
  EXPECT_FALSE(shrinkTarget(current, decided({{"n2", 4}}), "n1"));  // the batch host would go
  EXPECT_FALSE(shrinkTarget(current, decided({{"n1", 4}, {"n4", 4}}), "n1"));  // a new node
  EXPECT_FALSE(shrinkTarget(current, decided({{"n1", 4}, {"n2", 4}, {"n3", 4}}), "n1"));
  EXPECT_FALSE(shrinkTarget(current, std::nullopt, "n1"));  // no GPUs: a requeue, not a shrink
}

TEST(Launcher, StepOfOneAgentPerTaskWithTheAgentsOptions) {
  Options options;
  options.agent_arguments = {"--grace", "10"};
  options.command = {"python3", "train.py"};
  EXPECT_EQ(stepCommand("/usr/bin/pollux-agent", options, 2, 1),
            (Nodes{"srun", "--nodes=2", "--ntasks=2", "--ntasks-per-node=1",
                   "--kill-on-bad-exit=0", "--no-kill", "/usr/bin/pollux-agent", "--grace", "10", "--", "python3", "train.py"}));
}

TEST(Launcher, StepSeesTheShrunkJobAndKnowsItIsLaunched) {
  const auto env = stepEnvironment({"n1", "n3"}, 2);
  EXPECT_EQ(env.at("SLURM_JOB_NODELIST"), "n1,n3");
  EXPECT_EQ(env.at("SLURM_NNODES"), "2");
  EXPECT_EQ(env.at("SLURM_NTASKS"), "4");
  EXPECT_EQ(env.at("SLURM_TASKS_PER_NODE"), "2(x2)");
  EXPECT_EQ(env.at(kLaunchedVariable), "1");
  EXPECT_EQ(env.count("POLLUX_JOIN_TOKEN"), 0u);
  EXPECT_EQ(env.count("POLLUX_MIN_REPLICAS"), 0u);
  EXPECT_EQ(env.count(kStepStatusVariable), 0u);
  EXPECT_EQ(env.count("MASTER_PORT"), 0u);  // the job script's, else the one derived on each node
  EXPECT_EQ(env.count("POLLUX_STORE_HOSTED"), 0u);  // rank 0 hosts the store
  const auto with_settings = stepEnvironment({"n1"}, 1, {"abc", 4, "/tmp/pollux-step-x", 20043});
  EXPECT_EQ(with_settings.at("MASTER_PORT"), "20043");
  EXPECT_EQ(stepEnvironment({"n1"}, 1, {"", 0, "", 20043, true}).at("POLLUX_STORE_HOSTED"), "1");
  EXPECT_EQ(with_settings.at("POLLUX_JOIN_TOKEN"), "abc");
  EXPECT_EQ(with_settings.at("POLLUX_MIN_REPLICAS"), "4");
  EXPECT_EQ(with_settings.at(kStepStatusVariable), "/tmp/pollux-step-x");
}

TEST(Launcher, ResizeLivePutsTheJobsGpusInItsParts) {
  EXPECT_TRUE(gpusInPartsOf("adaptive:resize=live,max_gpus=8"));
  EXPECT_FALSE(gpusInPartsOf("adaptive:max_gpus=8"));
  EXPECT_FALSE(gpusInPartsOf("adaptive:resize=sometimes"));
  EXPECT_FALSE(gpusInPartsOf("a rigid job"));
}

TEST(Launcher, TheFewestWorkersAreTheJobsMinGpus) {
  EXPECT_EQ(minReplicasOf("adaptive:min_gpus=4,max_gpus=8"), 4);
  EXPECT_EQ(minReplicasOf("adaptive"), 1);
  EXPECT_EQ(minReplicasOf("a rigid job"), std::nullopt);
  EXPECT_EQ(minReplicasOf("adaptive:min_gpus=x"), std::nullopt);
}

// A step that lost a node ends in error from srun; its rank 0 having trained to the end, the
// job completed.
TEST(Launcher, TheStepsStatusIsRank0sWhereItCompleted) {
  EXPECT_EQ(stepStatus(0, std::nullopt), 0);
  EXPECT_EQ(stepStatus(137, 0), 0);
  EXPECT_EQ(stepStatus(137, std::nullopt), 137);  // rank 0 did not finish (or elsewhere)
  EXPECT_EQ(stepStatus(1, 143), 1);
  EXPECT_EQ(stepStatus(0, 1), 0);
}

TEST(Launcher, JoinTokensAreLongAndNew) {
  const std::string token = newJoinToken();
  EXPECT_EQ(token.size(), 64u);
  EXPECT_EQ(token.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(newJoinToken(), token);
}

TEST(Launcher, CommandOutputAndStatus) {
  const CommandOutput ok = runCommand({"sh", "-c", "echo n1; echo n2"});
  EXPECT_EQ(ok.status, 0);
  EXPECT_EQ(ok.output, "n1\nn2\n");
  EXPECT_EQ(ok.text(), "n1\nn2");  // without the trailing newline
  EXPECT_EQ((CommandOutput{0, " \n\t"}).text(), "");
  EXPECT_EQ(runCommand({"sh", "-c", "exit 3"}).status, 3);
  EXPECT_THROW(runCommand({"/nonexistent/scontrol"}), std::system_error);
}

}  // namespace
}  // namespace pollux::agent
