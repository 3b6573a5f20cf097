// SPDX-License-Identifier: GPL-2.0-or-later
#include "slurm_env.hpp"

#include <gtest/gtest.h>

#include <map>

#include "common/invalid_input.hpp"
#include "test_env.hpp"

namespace pollux::agent {
namespace {

using testing::fakeEnv;

TEST(SlurmEnv, PlacementFromStepNodesAndGpusOnNode) {
  const StepEnvironment step = readStepEnvironment(
      fakeEnv({{"SLURM_JOB_ID", "42"}, {"SLURM_PROCID", "1"}, {"SLURMD_NODENAME", "n2"},
               {"SLURM_JOB_NUM_NODES", "3"}, {"SLURM_STEP_NUM_NODES", "2"},
               {"SLURM_GPUS_ON_NODE", "4"},
               {"SLURM_SUBMIT_DIR", "/home/u"}}),
      0);
  EXPECT_EQ(step.job_id, "42");
  EXPECT_EQ(step.rank, 1);
  EXPECT_EQ(step.node_name, "n2");
  EXPECT_EQ(step.placement.num_nodes, 2);
  EXPECT_EQ(step.placement.num_replicas, 8);
  EXPECT_EQ(step.submit_dir, "/home/u");
  EXPECT_FALSE(step.launched);
}

TEST(SlurmEnv, StepStartedByTheLauncher) {
  EXPECT_TRUE(readStepEnvironment(fakeEnv({{"SLURM_JOB_ID", "1"}, {kLaunchedVariable, "1"}}), 0)
                  .launched);
  EXPECT_FALSE(readStepEnvironment(fakeEnv({{"SLURM_JOB_ID", "1"}, {kLaunchedVariable, ""}}), 0)
                   .launched);
}

TEST(SlurmEnv, RankZeroOfItsOwnStepOrOfAPartsStepThatStartsTheTrainingLeads) {
  const auto step = [](std::map<std::string, std::string> env) {
    env["SLURM_JOB_ID"] = "12";
    return readStepEnvironment(fakeEnv(env), 0);
  };
  EXPECT_TRUE(step({}).leadsJob());
  EXPECT_FALSE(step({{"SLURM_PROCID", "1"}}).leadsJob());
  const StepEnvironment joiner = step({{kPartOfVariable, "7"}});
  EXPECT_FALSE(joiner.leadsJob());
  EXPECT_EQ(joiner.trainingJob(), "7");
  const StepEnvironment first = step({{kPartOfVariable, "7"}, {kPartLeadsVariable, "1"}});
  EXPECT_TRUE(first.part_leads);
  EXPECT_TRUE(first.leadsJob());
  EXPECT_EQ(first.trainingJob(), "7");
  EXPECT_FALSE(step({{kPartOfVariable, "7"}, {kPartLeadsVariable, "1"}, {"SLURM_PROCID", "2"}})
                   .leadsJob());
  EXPECT_FALSE(step({{kPartLeadsVariable, "1"}}).part_leads);  // only in a part
}

TEST(SlurmEnv, FallsBackToVisibleDevicesThenOneGpu) {
  EXPECT_EQ(readStepEnvironment(fakeEnv({{"SLURM_JOB_ID", "1"}, {"CUDA_VISIBLE_DEVICES", "0,1,2"}}), 0)
                .placement.num_replicas,
            3);
  const StepEnvironment bare = readStepEnvironment(fakeEnv({{"SLURM_JOB_ID", "1"}}), 0);
  EXPECT_EQ(bare.placement.num_nodes, 1);
  EXPECT_EQ(bare.placement.num_replicas, 1);
  EXPECT_EQ(bare.rank, 0);
  EXPECT_EQ(readStepEnvironment(fakeEnv({{"SLURM_JOB_ID", "1"}}), 6).placement.num_replicas, 6);
}

TEST(SlurmEnv, OutsideAJobOrMalformedIsAnError) {
  EXPECT_THROW(readStepEnvironment(fakeEnv({}), 0), InvalidInput);
  EXPECT_THROW(readStepEnvironment(fakeEnv({{"SLURM_JOB_ID", "1"}, {"SLURM_PROCID", "x"}}), 0),
               InvalidInput);
  EXPECT_THROW(
      readStepEnvironment(fakeEnv({{"SLURM_JOB_ID", "1"}, {"SLURM_GPUS_ON_NODE", "-2"}}), 0),
      InvalidInput);
}

}  // namespace
}  // namespace pollux::agent
