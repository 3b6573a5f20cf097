// SPDX-License-Identifier: GPL-2.0-or-later
#include "job_environment.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "common/invalid_input.hpp"

namespace pollux::emulate {
namespace {

using Variables = std::map<std::string, std::string>;

JobEnvironment read(const Variables& variables, Options options = {}) {
  if (options.app.empty()) options.app = "cifar10";
  return readJobEnvironment(options, [&variables](const char* name) -> const char* {
    const auto found = variables.find(name);
    return found == variables.end() ? nullptr : found->second.c_str();
  });
}

TEST(JobEnvironment, OutsideSlurmOneGpuFirstTaskLocalCheckpoint) {
  const JobEnvironment environment = read({});
  EXPECT_EQ(environment.placement, trace::GpusPerNode({1}));
  EXPECT_EQ(environment.speed, 1);
  EXPECT_EQ(environment.checkpoint, "pollux-emulate-cifar10-local.ckpt");
  EXPECT_TRUE(environment.first_task);
}

TEST(JobEnvironment, PlacementFromTheStepThenTheJob) {
  EXPECT_EQ(read({{"SLURM_STEP_NUM_NODES", "2"}, {"SLURM_JOB_NUM_NODES", "3"},
                  {"SLURM_GPUS_ON_NODE", "4"}}).placement,
            trace::GpusPerNode({4, 4}));
  EXPECT_EQ(read({{"SLURM_JOB_NUM_NODES", "3"}, {"SLURM_GPUS_ON_NODE", "2"}}).placement,
            trace::GpusPerNode({2, 2, 2}));
}

TEST(JobEnvironment, GpusFromCudaVisibleDevicesWithoutSlurmsCount) {
  EXPECT_EQ(read({{"CUDA_VISIBLE_DEVICES", "0,1,3"}}).placement, trace::GpusPerNode({3}));
  EXPECT_EQ(read({{"CUDA_VISIBLE_DEVICES", "0,1"}, {"SLURM_GPUS_ON_NODE", "0"}}).placement,
            trace::GpusPerNode({2}));
  EXPECT_EQ(read({{"CUDA_VISIBLE_DEVICES", ""}}).placement, trace::GpusPerNode({1}));
}

TEST(JobEnvironment, OptionsOverrideTheEnvironment) {
  Options options;
  options.nodes = 3;
  options.gpus_per_node = 2;
  options.checkpoint = "mine.ckpt";
  const JobEnvironment environment =
      read({{"SLURM_JOB_NUM_NODES", "1"}, {"SLURM_GPUS_ON_NODE", "4"}, {"SLURM_JOB_ID", "7"}},
           options);
  EXPECT_EQ(environment.placement, trace::GpusPerNode({2, 2, 2}));
  EXPECT_EQ(environment.checkpoint, "mine.ckpt");
}

TEST(JobEnvironment, SpeedOfTheGpuTypeTheAgentNames) {
  Options options;
  options.speeds = {{"a100", 3}, {"v100", 2}};
  EXPECT_EQ(read({{"POLLUX_GPU_TYPE", "a100"}}, options).speed, 3);
  EXPECT_EQ(read({{"POLLUX_GPU_TYPE", "t4"}}, options).speed, 1);
  EXPECT_EQ(read({}, options).speed, 1);
}

TEST(JobEnvironment, CheckpointNamedAfterTheJob) {
  EXPECT_EQ(read({{"SLURM_JOB_ID", "4242"}}).checkpoint, "pollux-emulate-cifar10-4242.ckpt");
}

TEST(JobEnvironment, OnlyTheFirstTaskTrains) {
  EXPECT_TRUE(read({{"SLURM_PROCID", "0"}}).first_task);
  EXPECT_FALSE(read({{"SLURM_PROCID", "1"}}).first_task);
  EXPECT_FALSE(read({{"SLURM_PROCID", "7"}}).first_task);
}

TEST(JobEnvironment, MalformedVariablesAreErrors) {
  EXPECT_THROW(read({{"SLURM_PROCID", "one"}}), InvalidInput);
  EXPECT_THROW(read({{"SLURM_JOB_NUM_NODES", "-2"}}), InvalidInput);
  EXPECT_THROW(read({{"SLURM_GPUS_ON_NODE", "4x"}}), InvalidInput);
}

}  // namespace
}  // namespace pollux::emulate
