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
                   "--kill-on-bad-exit=1", "/usr/bin/pollux-agent", "--grace", "10", "--", "python3", "train.py"}));
}

TEST(Launcher, StepSeesTheShrunkJobAndKnowsItIsLaunched) {
  const auto env = stepEnvironment({"n1", "n3"}, 2);
  EXPECT_EQ(env.at("SLURM_JOB_NODELIST"), "n1,n3");
  EXPECT_EQ(env.at("SLURM_NNODES"), "2");
  EXPECT_EQ(env.at("SLURM_NTASKS"), "4");
  EXPECT_EQ(env.at("SLURM_TASKS_PER_NODE"), "2(x2)");
  EXPECT_EQ(env.at(kLaunchedVariable), "1");
  EXPECT_EQ(env.count("POLLUX_JOIN_TOKEN"), 0u);
  EXPECT_EQ(stepEnvironment({"n1"}, 1, "abc").at("POLLUX_JOIN_TOKEN"), "abc");
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
  EXPECT_EQ(runCommand({"sh", "-c", "exit 3"}).status, 3);
  EXPECT_THROW(runCommand({"/nonexistent/scontrol"}), std::system_error);
}

}  // namespace
}  // namespace pollux::agent
