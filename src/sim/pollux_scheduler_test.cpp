// SPDX-License-Identifier: GPL-2.0-or-later
// What the simulator's Pollux scheduler gives the policy, as the plugin would.
#include "pollux_scheduler.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace pollux::sim {
namespace {

TEST(PolluxSchedulerTest, AJobsRestartCostIsKnownOnlyOnceItHasStarted) {
  const Cluster cluster = Cluster::parse("t4:1x1");
  const auto app = trace::loadApplication(testing::makeToyProfiles(), "toy", {"t4"});
  SimJob job(trace::WorkloadJob{"a", 0, "toy", 1, 10}, app, 30);
  PolluxScheduler scheduler(cluster, true, {{"t4", 1.0}});

  EXPECT_DOUBLE_EQ(scheduler.snapshot(0, {&job}).jobs.at(0).restart_cost_s, 0);
  const auto decided = scheduler.decide(0, {&job});
  ASSERT_EQ(decided.count("a"), 1u);
  job.assign(decided.at("a"), cluster, 0);
  EXPECT_DOUBLE_EQ(scheduler.snapshot(60, {&job}).jobs.at(0).restart_cost_s, 30);
}

TEST(PolluxSchedulerTest, TheGpusALiveMoveLeavesAreLeavingUntilItsJoinerHasStarted) {
  const Cluster cluster = Cluster::parse("t4:2x1");
  const auto app = trace::loadApplication(testing::makeToyProfiles(), "toy", {"t4"});
  SimJob job(trace::WorkloadJob{"a", 0, "toy", 1, 10}, app, 30, 1e7, true);
  Assignment on_t4_0{{{"t4-0", 1}}, 10, 0};
  job.assign(on_t4_0, cluster, 0);
  EXPECT_FALSE(leavingGpusOf(job, cluster));
  job.advance(0, 60);
  Assignment on_t4_1{{{"t4-1", 1}}, 10, 0};
  job.assign(on_t4_1, cluster, 60);  // a live move: its joiner takes 30 s to start
  EXPECT_EQ(leavingGpusOf(job, cluster), (policy::Allocation{"t4", {{"t4-0", 1}}}));
  job.advance(60, 40);
  EXPECT_FALSE(leavingGpusOf(job, cluster));
}

}  // namespace
}  // namespace pollux::sim
