// SPDX-License-Identifier: GPL-2.0-or-later
#include "sim_job.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace pollux::sim {
namespace {

class SimJobTest : public ::testing::Test {
 protected:
  Cluster cluster = Cluster::parse("t4:2x2");
  trace::Application app = trace::loadApplication(testing::makeToyProfiles(), "toy", {"t4"});
  trace::WorkloadJob spec{"toy-0", 0, "toy", 1, 10};

  static Assignment on(std::map<std::string, int> gpus, int local_bsz, int accum_steps = 0) {
    return {std::move(gpus), local_bsz, accum_steps};
  }
};

TEST_F(SimJobTest, ProgressesAtThroughputTimesEfficiencyAndCompletes) {
  SimJob job(spec, app, 5);
  job.assign(on({{"t4-0", 1}}, 10), cluster, 0);
  EXPECT_EQ(job.gpuType(), "t4");
  job.advance(0, 60);  // 5 s restart delay, then 1 initial-batch iteration per second
  EXPECT_DOUBLE_EQ(job.progress(), 55);
  EXPECT_FALSE(job.finished());
  EXPECT_DOUBLE_EQ(job.remainingTime(), 45);
  job.advance(60, 60);
  ASSERT_TRUE(job.finished());
  EXPECT_DOUBLE_EQ(*job.completionTime(), 105);
  EXPECT_DOUBLE_EQ(job.gpuSeconds(), 105);
  EXPECT_EQ(job.restarts(), 0);
}

TEST_F(SimJobTest, AccumulationAndReplicasChangeTheRate) {
  SimJob accumulating(spec, app, 0);
  accumulating.assign(on({{"t4-0", 1}}, 10, 1), cluster, 0);  // 2 s per step of batch 20
  accumulating.advance(0, 10);
  EXPECT_DOUBLE_EQ(accumulating.progress(), 5);  // grad_var = 0: batch 20 gains nothing
  SimJob spread(spec, app, 0);
  spread.assign(on({{"t4-0", 1}, {"t4-1", 1}}, 10), cluster, 0);  // "11": grid of "2"
  spread.advance(0, 10);
  EXPECT_DOUBLE_EQ(spread.progress(), 10);
  EXPECT_DOUBLE_EQ(spread.gpuSeconds(), 20);
}

TEST_F(SimJobTest, NewGpusCostARestartButNewBatchSizesDoNot) {
  SimJob job(spec, app, 10);
  job.assign(on({{"t4-0", 1}}, 10), cluster, 0);
  job.advance(0, 60);
  job.assign(on({{"t4-0", 1}}, 20), cluster, 60);  // same GPU, larger batch: no delay
  EXPECT_EQ(job.restarts(), 0);
  job.advance(60, 10);
  EXPECT_DOUBLE_EQ(job.progress(), 55);
  job.assign(on({{"t4-1", 2}}, 10), cluster, 70);
  EXPECT_EQ(job.restarts(), 1);
  EXPECT_DOUBLE_EQ(job.lastChangeTime(), 70);
  job.advance(70, 10);
  EXPECT_DOUBLE_EQ(job.progress(), 55);  // still restarting
  const auto samples = job.samples();
  ASSERT_EQ(samples.count("t4"), 1u);
  EXPECT_EQ(samples.at("t4").size(), 3u);
  EXPECT_EQ(job.maxReplicasSeen(), 2);
}

TEST_F(SimJobTest, LiveGrowthTrainsOnWhileJoinersStartAndShrinkStalls) {
  SimJob job(spec, app, 10, 1e7);
  ASSERT_TRUE(job.growsLive());
  job.assign(on({{"t4-0", 1}}, 10), cluster, 0);
  job.advance(0, 60);  // 10 s start-up, then 1 iteration per second
  EXPECT_DOUBLE_EQ(job.progress(), 50);
  // Growth keeping t4-0, a part on t4-1 with as many GPUs: 10 s at 1 GPU while the joiner
  // starts, then the growth's stall 0.25 + 2.5e-8 x 1e7 x log2(2) / 2 = 0.375 s, then 2 GPUs
  // at batch 20 (1 iteration/s).
  job.assign(on({{"t4-0", 1}, {"t4-1", 1}}, 10), cluster, 60);
  job.advance(60, 20);
  EXPECT_NEAR(job.progress(), 50 + 10 + (20 - 10 - 0.375), 1e-9);
  EXPECT_DOUBLE_EQ(job.gpuSeconds(), 60 + 20 * 2);  // the joiner's GPU is held meanwhile
  EXPECT_EQ(job.restarts(), 0);
  ASSERT_EQ(job.parts().size(), 1u);
  EXPECT_EQ(job.parts()[0].nodes, (std::map<std::string, int>{{"t4-1", 1}}));
  EXPECT_NEAR(*job.lastLiveStall(), 0.375, 1e-9);
  // Lost: the stall and the joiner's GPU idle for 10 s, half the allocation: 5 s.
  EXPECT_NEAR(job.lostSeconds(), 0.375 + 5, 1e-9);
  // Shrink back by dropping the part: 0.25 + 1.1e-8 x 1e7 = 0.36 s.
  job.assign(on({{"t4-0", 1}}, 10), cluster, 80);
  job.advance(80, 10);
  EXPECT_NEAR(job.progress(), 69.625 + 10 - 0.36, 1e-9);
  EXPECT_NEAR(job.pausedSeconds(), 0.375 + 0.36, 1e-9);
  EXPECT_TRUE(job.parts().empty());
  EXPECT_EQ(job.flipBacks(), 1);  // 1 GPU, 2 GPUs, 1 GPU in consecutive rounds
  // Onto another node: a checkpoint-restart.
  job.assign(on({{"t4-1", 1}}, 10), cluster, 90);
  EXPECT_EQ(job.restarts(), 1);
  EXPECT_NEAR(job.pausedSeconds(), 0.735 + 10, 1e-9);
  EXPECT_EQ(job.flipBacks(), 1);  // the same shape on another node is no flip
}

TEST_F(SimJobTest, JoinersTakeTheirOwnStartUpWhereGiven) {
  for (const double join_s : {4.0, 0.0}) {  // --join-startup toy=4, toy=0
    SimJob job(spec, app, 10, 1e7, false, join_s);
    job.assign(on({{"t4-0", 1}}, 10), cluster, 0);
    job.advance(0, 60);
    // join_s at 1 GPU while the joiner starts, then the stall (0.375 s), then 2 GPUs at
    // batch 20 (1 iteration/s).
    job.assign(on({{"t4-0", 1}, {"t4-1", 1}}, 10), cluster, 60);
    job.advance(60, 10);
    EXPECT_NEAR(job.progress(), 50 + 10 - 0.375, 1e-9) << join_s;
    EXPECT_TRUE(job.leavingGpus().empty());
    EXPECT_NEAR(job.lostSeconds(), 0.375 + join_s * 0.5, 1e-9);  // the new GPU idle meanwhile
    job.assign(on({{"t4-1", 1}}, 10), cluster, 70);              // a restart still takes 10 s
    job.advance(70, 10);
    EXPECT_NEAR(job.progress(), 59.625, 1e-9);
  }
}

TEST_F(SimJobTest, ChangesSlurmMakesOnlyByRequeueRestart) {
  SimJob job(spec, app, 10, 1e7);
  job.assign(on({{"t4-0", 1}}, 10), cluster, 0);
  // Twice its GPUs on its node: a part there (live); doubling again while it holds a part
  // (a second part on its node): by requeue.
  job.assign(on({{"t4-0", 2}}, 10), cluster, 60);
  EXPECT_EQ(job.restarts(), 0);
  EXPECT_EQ(job.parts()[0].nodes, (std::map<std::string, int>{{"t4-0", 1}}));
  job.assign(on({{"t4-0", 2}, {"t4-1", 2}}, 10), cluster, 120);  // a part on a new node: live
  job.assign(on({{"t4-0", 1}, {"t4-1", 1}}, 10), cluster, 180);  // fewer GPUs on each node
  EXPECT_EQ(job.restarts(), 1);
  EXPECT_TRUE(job.parts().empty());
  job.assign(on({{"t4-0", 2}, {"t4-1", 2}}, 10), cluster, 240);  // a part on each of its nodes
  EXPECT_EQ(job.restarts(), 1);
  // Dropping its part's GPU on its batch host (its first node) but not on t4-1: Slurm does
  // not take a job's batch host from it.
  job.assign(on({{"t4-0", 1}, {"t4-1", 2}}, 10), cluster, 300);
  EXPECT_EQ(job.restarts(), 2);
}

TEST_F(SimJobTest, APartShrinksLiveToSomeOfItsNodesKeepingItsBatchHost) {
  SimJob job(spec, app, 10, 1e7, true);
  job.assign(on({{"t4-0", 2}, {"t4-1", 2}}, 10), cluster, 0);  // one part on both nodes
  job.assign(on({{"t4-0", 2}}, 10), cluster, 60);              // its workers on t4-1 leave
  EXPECT_EQ(job.restarts(), 0);
  EXPECT_NEAR(job.pausedSeconds(), 0.36, 1e-9);  // the live shrink's stall
  ASSERT_EQ(job.parts().size(), 1u);
  EXPECT_EQ(job.parts()[0].nodes, (std::map<std::string, int>{{"t4-0", 2}}));
  SimJob other(spec, app, 10, 1e7, true);
  other.assign(on({{"t4-0", 1}, {"t4-1", 1}}, 10), cluster, 0);
  other.assign(on({{"t4-1", 1}}, 10), cluster, 60);  // without its batch host: a restart
  EXPECT_EQ(other.restarts(), 1);
}

TEST_F(SimJobTest, AJobHoldsSeveralPartsAndDropsTheNewestFirst) {
  SimJob job(spec, app, 10, 1e7);
  job.assign(on({{"t4-0", 1}}, 10), cluster, 0);
  job.assign(on({{"t4-0", 2}}, 10), cluster, 60);                // a part on its node
  job.assign(on({{"t4-0", 2}, {"t4-1", 2}}, 10), cluster, 120);  // a second, on a new node
  ASSERT_EQ(job.parts().size(), 2u);
  EXPECT_EQ(job.parts()[1].nodes, (std::map<std::string, int>{{"t4-1", 2}}));
  job.assign(on({{"t4-0", 2}}, 10), cluster, 180);  // drops the newest
  ASSERT_EQ(job.parts().size(), 1u);
  EXPECT_EQ(job.parts()[0].nodes, (std::map<std::string, int>{{"t4-0", 1}}));
  job.assign(on({{"t4-0", 1}}, 10), cluster, 240);  // then the other
  EXPECT_TRUE(job.parts().empty());
  EXPECT_EQ(job.restarts(), 0);
  // Stalls: growths to 2 and 4 GPUs, 0.25 + 0.25 x log2(2) / 2 and 0.25 + 0.25 x log2(4) / 2,
  // and two shrinks of 0.25 + 0.11 each.
  EXPECT_NEAR(job.pausedSeconds(), 0.375 + 0.5 + 2 * 0.36, 1e-9);
}

TEST_F(SimJobTest, AJobWhoseGpusAreAllInPartsMovesLiveBesideWhatItHolds) {
  SimJob job(spec, app, 10, 1e7, true);
  ASSERT_TRUE(job.movesLive());
  job.assign(on({{"t4-0", 1}}, 10), cluster, 0);
  ASSERT_EQ(job.parts().size(), 1u);  // its first allocation is a part
  job.advance(0, 60);
  EXPECT_DOUBLE_EQ(job.progress(), 50);
  // To t4-1: 10 s at 1 GPU on t4-0 while the joiner starts (holding both), then the join's
  // stall at 2 replicas, 0.375 s, and the leave's, 0.36 s; then 1 GPU on t4-1.
  job.assign(on({{"t4-1", 1}}, 10), cluster, 60);
  job.advance(60, 20);
  EXPECT_EQ(job.restarts(), 0);
  EXPECT_NEAR(job.progress(), 50 + 10 + (20 - 10 - 0.375 - 0.36), 1e-9);
  EXPECT_NEAR(job.pausedSeconds(), 0.375 + 0.36, 1e-9);
  EXPECT_DOUBLE_EQ(job.gpuSeconds(), 60 + 20 + 10);  // t4-0 held too while the joiner starts
  // Lost: the stalls and the joiner's GPU idle for 10 s, half of what it held: 5 s.
  EXPECT_NEAR(job.lostSeconds(), 0.375 + 0.36 + 5, 1e-9);
  ASSERT_EQ(job.parts().size(), 1u);
  EXPECT_EQ(job.parts()[0].nodes, (std::map<std::string, int>{{"t4-1", 1}}));
  // More GPUs on a node it holds: no part carries it beside what it holds, a restart.
  job.assign(on({{"t4-1", 2}, {"t4-0", 1}}, 10), cluster, 80);
  EXPECT_EQ(job.restarts(), 1);
  // A job that does not hold its GPUs in parts restarts to move.
  SimJob own(spec, app, 10, 1e7);
  own.assign(on({{"t4-0", 1}}, 10), cluster, 0);
  own.assign(on({{"t4-1", 1}}, 10), cluster, 60);
  EXPECT_EQ(own.restarts(), 1);
}

TEST_F(SimJobTest, AJobWhoseGpusAreAllInPartsMovesLiveToAnotherGpuType) {
  const Cluster two_types = Cluster::parse("t4:1x2,v100:1x2");
  const trace::Application both =
      trace::loadApplication(testing::makeToyProfiles(), "toy", {"t4", "v100"});
  SimJob job(spec, both, 10, 1e7, true);
  job.assign(on({{"t4-0", 1}}, 10), two_types, 0);
  job.advance(0, 60);
  // As a move on its type: 10 s on t4 while the joiner starts on v100, then two stalls.
  job.assign(on({{"v100-0", 1}}, 10), two_types, 60);
  job.advance(60, 20);
  EXPECT_EQ(job.restarts(), 0);
  EXPECT_EQ(job.gpuType(), "v100");
  EXPECT_NEAR(job.progress(), 50 + 10 + (20 - 10 - 0.375 - 0.36), 1e-9);
  ASSERT_EQ(job.parts().size(), 1u);
  EXPECT_EQ(job.parts()[0].gpu_type, "v100");
  // Onto both types at once: no one part carries it, a restart.
  job.assign(on({{"v100-0", 1}, {"t4-0", 1}}, 10), two_types, 80);
  EXPECT_EQ(job.restarts(), 1);
}

TEST_F(SimJobTest, AMoveThePolicyMakesARestartIsOne) {
  SimJob job(spec, app, 10, 1e7, true);
  job.assign(on({{"t4-0", 1}}, 10), cluster, 0);
  job.advance(0, 60);
  Assignment moved = on({{"t4-1", 1}}, 10);
  moved.restarted = true;  // a job starts on t4-0
  job.assign(moved, cluster, 60);
  EXPECT_TRUE(job.leavingGpus().empty());  // t4-0 is free at once
  job.advance(60, 20);
  EXPECT_EQ(job.restarts(), 1);
  EXPECT_DOUBLE_EQ(job.progress(), 50 + 10);  // 10 s restart, then 10 s on t4-1
  EXPECT_DOUBLE_EQ(job.pausedSeconds(), 10);
  ASSERT_EQ(job.parts().size(), 1u);
  EXPECT_EQ(job.parts()[0].nodes, (std::map<std::string, int>{{"t4-1", 1}}));
}

TEST_F(SimJobTest, PendingJobsDoNotProgress) {
  SimJob job(spec, app, 0);
  job.advance(0, 60);
  EXPECT_DOUBLE_EQ(job.progress(), 0);
  EXPECT_EQ(job.currentBatchSize(), 10);
  EXPECT_TRUE(std::isinf(job.remainingTime()));
}

}  // namespace
}  // namespace pollux::sim
