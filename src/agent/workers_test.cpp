// SPDX-License-Identifier: GPL-2.0-or-later
#include "workers.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "common/invalid_input.hpp"
#include "test_env.hpp"

namespace pollux::agent {
namespace {

using testing::fakeEnv;

TEST(WorkersTest, FirstHostOfSlurmsHostLists) {
  EXPECT_EQ(firstHost("n1"), "n1");
  EXPECT_EQ(firstHost("n1,n2"), "n1");
  EXPECT_EQ(firstHost("n[1-3],g7"), "n1");
  EXPECT_EQ(firstHost("gpu[07-09,12]"), "gpu07");
  EXPECT_EQ(firstHost("rack1-node[4]"), "rack1-node4");
  EXPECT_THROW(firstHost(""), InvalidInput);
  EXPECT_THROW(firstHost("n[x-3]"), InvalidInput);
  EXPECT_THROW(firstHost("n["), InvalidInput);
}

TEST(WorkersTest, EveryNodeDerivesTheSamePortFromTheJobId) {
  EXPECT_EQ(masterPort("42"), 20042);
  EXPECT_EQ(masterPort("123456"), 23456);
  EXPECT_THROW(masterPort(""), InvalidInput);
  EXPECT_THROW(masterPort("42.1"), InvalidInput);
}

TEST(WorkersTest, TheLauncherTakesTheFirstFreePortFromTheJobsOwn) {
  const std::set<int> busy = {20042, 20043, 29999};
  const auto is_free = [&busy](int port) { return busy.count(port) == 0; };
  EXPECT_EQ(firstFreeMasterPort(20041, is_free), 20041);
  EXPECT_EQ(firstFreeMasterPort(20042, is_free), 20044);
  EXPECT_EQ(firstFreeMasterPort(29999, is_free), 20000);  // wraps within the range
  EXPECT_EQ(firstFreeMasterPort(20042, [](int) { return false; }), 20042);
}

TEST(WorkersTest, AutoStartsOneWorkerPerGpuWithTorchrunsEnvironment) {
  const NodeWorkers workers = readNodeWorkers(
      fakeEnv({{"SLURM_JOB_ID", "42"}, {"SLURM_GPUS_ON_NODE", "4"},
               {"CUDA_VISIBLE_DEVICES", "0,1,2,3"}, {"SLURM_NODEID", "1"},
               {"SLURM_JOB_NUM_NODES", "2"}, {"SLURM_JOB_NODELIST", "n[1-2]"}}),
      0);
  EXPECT_EQ(workers.per_node, 4);
  const auto env = workerEnvironment(workers, 2);
  EXPECT_EQ(env.at("RANK"), "6");  // node 1 of 2, local rank 2 of 4
  EXPECT_EQ(env.at("LOCAL_RANK"), "2");
  EXPECT_EQ(env.at("WORLD_SIZE"), "8");
  EXPECT_EQ(env.at("LOCAL_WORLD_SIZE"), "4");
  EXPECT_EQ(env.at("GROUP_RANK"), "1");
  EXPECT_EQ(env.at("MASTER_ADDR"), "n1");
  EXPECT_EQ(env.at("MASTER_PORT"), "20042");
  EXPECT_EQ(env.at("CUDA_VISIBLE_DEVICES"), "2");  // its own GPU only
}

TEST(WorkersTest, FewerWorkersThanGpusSeeThemAllAndNoGpusMeansOneWorker) {
  const auto env = fakeEnv({{"SLURM_JOB_ID", "7"}, {"CUDA_VISIBLE_DEVICES", "0,1"}});
  const NodeWorkers one = readNodeWorkers(env, 1);
  EXPECT_EQ(workerEnvironment(one, 0).count("CUDA_VISIBLE_DEVICES"), 0u);
  EXPECT_EQ(readNodeWorkers(env, 0).per_node, 2);  // auto from CUDA_VISIBLE_DEVICES
  const NodeWorkers cpu = readNodeWorkers(fakeEnv({{"SLURM_JOB_ID", "7"}}), 0);
  EXPECT_EQ(cpu.per_node, 1);
  EXPECT_EQ(cpu.master_addr, "127.0.0.1");  // outside a job's node list: this host
  EXPECT_EQ(workerEnvironment(cpu, 0).at("WORLD_SIZE"), "1");
  const NodeWorkers three = readNodeWorkers(fakeEnv({{"SLURM_JOB_ID", "7"}}), 3);  // CPU workers
  EXPECT_EQ(workerEnvironment(three, 2).at("RANK"), "2");
}

TEST(WorkersTest, TheJobsOwnMasterAddressAndPortAreKept) {
  const NodeWorkers workers = readNodeWorkers(
      fakeEnv({{"SLURM_JOB_ID", "7"}, {"SLURM_JOB_NODELIST", "n[1-2]"},
               {"MASTER_ADDR", "10.0.0.5"}, {"MASTER_PORT", "29500"}}),
      1);
  EXPECT_EQ(workerEnvironment(workers, 0).at("MASTER_ADDR"), "10.0.0.5");
  EXPECT_EQ(workerEnvironment(workers, 0).at("MASTER_PORT"), "29500");
  EXPECT_THROW(readNodeWorkers(fakeEnv({{"SLURM_JOB_ID", "7"}, {"MASTER_PORT", "70000"}}), 1),
               InvalidInput);
}

TEST(WorkersTest, SeveralWorkersOfANodeGetOneOpenMpThreadUnlessTheJobSetsIt) {
  const auto env = fakeEnv({{"SLURM_JOB_ID", "7"}, {"CUDA_VISIBLE_DEVICES", "0,1"}});
  EXPECT_EQ(workerEnvironment(readNodeWorkers(env, 0), 1).at("OMP_NUM_THREADS"), "1");
  EXPECT_EQ(workerEnvironment(readNodeWorkers(env, 1), 0).count("OMP_NUM_THREADS"), 0u);
  const NodeWorkers own = readNodeWorkers(
      fakeEnv({{"SLURM_JOB_ID", "7"}, {"CUDA_VISIBLE_DEVICES", "0,1"}, {"OMP_NUM_THREADS", "6"}}),
      0);
  EXPECT_EQ(workerEnvironment(own, 0).count("OMP_NUM_THREADS"), 0u);  // the job's 6, inherited
}

TEST(WorkersTest, MoreWorkersThanListedGpusOrMalformedVariablesAreRefused) {
  EXPECT_THROW(readNodeWorkers(fakeEnv({{"SLURM_JOB_ID", "7"}, {"CUDA_VISIBLE_DEVICES", "0"}}), 2),
               InvalidInput);
  EXPECT_THROW(readNodeWorkers(fakeEnv({{"SLURM_JOB_ID", "7"}, {"SLURM_NODEID", "-1"}}), 1),
               InvalidInput);
  EXPECT_THROW(readNodeWorkers(fakeEnv({{"SLURM_JOB_ID", "x"}}), 1), InvalidInput);
}

}  // namespace
}  // namespace pollux::agent
