// SPDX-License-Identifier: GPL-2.0-or-later
// FIFO with backfill and Tiresias on tiny workloads of the synthetic application.
#include <gtest/gtest.h>

#include "fifo.hpp"
#include "pollux_scheduler.hpp"
#include "rigid.hpp"
#include "simulation.hpp"
#include "test_support.hpp"
#include "tiresias.hpp"

namespace pollux::sim {
namespace {

class BaselinesTest : public ::testing::Test {
 protected:
  trace::Application app = trace::loadApplication(testing::makeToyProfiles(), "toy", {"t4"});

  // Jobs of the toy application with no restart delay.
  std::vector<SimJob> jobs(const std::vector<trace::WorkloadJob>& specs) const {
    std::vector<SimJob> result;
    for (const auto& spec : specs) result.emplace_back(spec, app, 0);
    return result;
  }
  static std::map<std::string, double> completions(const SimulationResult& result) {
    std::map<std::string, double> times;
    for (const auto& job : result.jobs) times[job.name] = job.completion_time;
    return times;
  }
};

TEST_F(BaselinesTest, RigidBatchUsesAccumulationBeyondTheMemoryLimit) {
  SimJob job({"j", 0, "toy", 2, 100}, app, 0);
  const Assignment assignment = rigidBatch(job, "t4", 2);  // 50 per GPU, at most 20 at once
  EXPECT_EQ(assignment.accum_steps, 2);
  EXPECT_EQ(assignment.local_bsz, 17);
  EXPECT_EQ(splitBatch(20, 2, 20).local_bsz, 10);
  EXPECT_EQ(splitBatch(20, 2, 20).accum_steps, 0);
}

TEST_F(BaselinesTest, FifoBackfillsOnlyJobsThatDoNotDelayTheHead) {
  const Cluster cluster = Cluster::parse("t4:1x2");
  FifoScheduler fifo(cluster);
  const auto result = simulate(cluster,
                               jobs({{"a", 0, "toy", 1, 10},    // 100 s on 1 GPU
                                     {"b", 0, "toy", 2, 20},    // waits for a: reserved at 100
                                     {"c", 0, "toy", 1, 20},    // 200 s: would delay b
                                     {"d", 0, "toy", 1, 10}}),  // 100 s: ends in time, backfills
                               fifo, {});
  const auto done = completions(result);
  EXPECT_DOUBLE_EQ(done.at("a"), 100);
  EXPECT_DOUBLE_EQ(done.at("d"), 100);
  EXPECT_DOUBLE_EQ(done.at("b"), 220);  // starts at the round after a and d end
  EXPECT_DOUBLE_EQ(done.at("c"), 440);
  for (const auto& job : result.jobs) EXPECT_EQ(job.restarts, 0);
  EXPECT_EQ(result.round_ms.size(), 8u);
}

TEST_F(BaselinesTest, TiresiasPreemptsJobsWithMoreAttainedService) {
  const Cluster cluster = Cluster::parse("t4:1x1");
  TiresiasScheduler tiresias(cluster, {50});  // second queue after 50 GPU-seconds
  SimulationOptions options;
  options.record_timeline = true;
  const auto result =
      simulate(cluster, jobs({{"a", 0, "toy", 1, 10}, {"b", 60, "toy", 1, 10}}), tiresias, options);
  const auto done = completions(result);
  // a runs 0-60, b (less service) 60-120, then both are in the second queue: a first.
  EXPECT_DOUBLE_EQ(done.at("a"), 160);
  EXPECT_DOUBLE_EQ(done.at("b"), 220);
  EXPECT_EQ(result.jobs[0].restarts, 1);
  EXPECT_EQ(result.jobs[1].restarts, 1);
  ASSERT_EQ(result.timeline.size(), 4u);
  EXPECT_EQ(result.timeline[1].job, "b");
  EXPECT_DOUBLE_EQ(result.timeline[1].time, 60);
  EXPECT_EQ(result.timeline[1].gpus, 1);
}

TEST_F(BaselinesTest, EventRoundsFollowArrivalsAndCompletions) {
  const Cluster cluster = Cluster::parse("t4:1x1");
  FifoScheduler fifo(cluster);
  SimulationOptions options;
  options.event_delay_s = 1;
  options.record_timeline = true;
  const auto result = simulate(cluster,
                               jobs({{"a", 0, "toy", 1, 10},     // 100 s on the GPU
                                     {"b", 10, "toy", 1, 10},    // waits for a
                                     {"c", 10.5, "toy", 1, 10}}),  // waits for b
                               fifo, options);
  const auto done = completions(result);
  // A look for new work every second after each round, as sched/pollux's: rounds at 0, 10
  // (b's arrival), 11 (c's, at most one round a second), 71 (regular), 100 (a done), 160,
  // 200 (b done), 260; without event rounds b starts at 120.
  EXPECT_DOUBLE_EQ(done.at("a"), 100);
  EXPECT_DOUBLE_EQ(done.at("b"), 200);
  EXPECT_DOUBLE_EQ(done.at("c"), 300);
  EXPECT_EQ(result.round_ms.size(), 8u);
  ASSERT_EQ(result.timeline.size(), 8u);  // a at 0, 10, 11, 71; b at 100, 160; c at 200, 260
  EXPECT_DOUBLE_EQ(result.timeline[0].seconds, 10);
  EXPECT_DOUBLE_EQ(result.timeline[1].seconds, 1);
  EXPECT_DOUBLE_EQ(result.timeline[2].seconds, 60);
  EXPECT_DOUBLE_EQ(result.timeline[3].time, 71);
  EXPECT_DOUBLE_EQ(result.timeline[3].seconds, 29);
  EXPECT_EQ(result.timeline[4].job, "b");
  EXPECT_DOUBLE_EQ(result.timeline[4].time, 100);
}

// New work waits for the next look, one delay after the last: not a delay after it happened.
TEST_F(BaselinesTest, EventRoundsFollowTheLooksEveryDelay) {
  const Cluster cluster = Cluster::parse("t4:1x1");
  FifoScheduler fifo(cluster);
  SimulationOptions options;
  options.event_delay_s = 7;
  options.record_timeline = true;
  const auto result = simulate(cluster,
                               jobs({{"a", 0, "toy", 1, 10}, {"b", 10, "toy", 1, 10}}), fifo,
                               options);
  // Looks at 7, 14 (b's arrival seen), ...; after the regular round at 74, at 81, 88, 95 and
  // 102 (a done at 100 seen).
  ASSERT_EQ(result.timeline.size(), 5u);  // a at 0, 14, 74; b at 102, 162
  EXPECT_DOUBLE_EQ(result.timeline[1].time, 14);
  EXPECT_DOUBLE_EQ(result.timeline[2].time, 74);
  EXPECT_DOUBLE_EQ(result.timeline[3].time, 102);
  EXPECT_DOUBLE_EQ(completions(result).at("b"), 202);
}

TEST_F(BaselinesTest, IsolatedRunTimeIsTheRequestAloneOnTheCluster) {
  const Cluster cluster = Cluster::parse("t4:1x2");
  SimJob job({"j", 0, "toy", 2, 20}, app, 7);
  EXPECT_DOUBLE_EQ(isolatedRunTime(job, cluster), 107);
}

TEST_F(BaselinesTest, FairShareRunTimeIsAloneOnTheShare) {
  const Cluster cluster = Cluster::parse("t4:1x2");
  SimJob job({"j", 0, "toy", 2, 20}, app, 7);
  EXPECT_DOUBLE_EQ(fairShareRunTime(job, cluster, 2), isolatedRunTime(job, cluster));
  EXPECT_DOUBLE_EQ(fairShareRunTime(job, cluster, 2.5), fairShareRunTime(job, cluster, 2));
  const double one_gpu = fairShareRunTime(job, cluster, 1);
  EXPECT_GT(one_gpu, fairShareRunTime(job, cluster, 2));
  EXPECT_DOUBLE_EQ(fairShareRunTime(job, cluster, 0.25), 4 * one_gpu);
}

TEST_F(BaselinesTest, DeclaredLengthIsTheTargetInExamplesAtTheInitialBatch) {
  const Cluster cluster = Cluster::parse("t4:1x2");
  SimJob job({"j", 0, "toy", 1, 10}, app, 0);
  job.assign(Assignment{{{"t4-0", 1}}, 10, 0}, cluster, 0);
  job.advance(0, 30);  // 1 s per step at the initial batch of 10: 30 steps
  const auto length = declaredLength(job, {2.0, {}});
  ASSERT_TRUE(length.has_value());
  EXPECT_DOUBLE_EQ(length->progress, 300);
  EXPECT_DOUBLE_EQ(length->target, 100 * 10 * 2.0);  // the toy's target, misjudged 2x
  EXPECT_FALSE(declaredLength(job, {1.0, {"j"}}).has_value());
}

}  // namespace
}  // namespace pollux::sim
