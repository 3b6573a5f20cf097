// SPDX-License-Identifier: GPL-2.0-or-later
// The simulation loop: what happens between a scheduler's decisions.
#include "simulation.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace pollux::sim {
namespace {

// Job "a" on t4-0 until the round at 60 s, then moved to t4-1 and "b" given t4-0.
class MoveThenStart : public Scheduler {
 public:
  std::map<std::string, Assignment> decide(double now,
                                           const std::vector<const SimJob*>& /*active*/) override {
    if (now < 60) return {{"a", {{{"t4-0", 1}}, 10, 0}}};
    return {{"a", {{{"t4-1", 1}}, 10, 0}}, {"b", {{{"t4-0", 1}}, 10, 0}}};
  }
};

TEST(SimulationTest, AJobPlacedWhereALiveMoveLeavesStartsOnceItsOldPartsHaveLeft) {
  const Cluster cluster = Cluster::parse("t4:2x1");
  const auto app = trace::loadApplication(testing::makeToyProfiles(), "toy", {"t4"});
  std::vector<SimJob> jobs;
  jobs.emplace_back(trace::WorkloadJob{"a", 0, "toy", 1, 10}, app, 10, 1e7, true);
  jobs.emplace_back(trace::WorkloadJob{"b", 0, "toy", 1, 10}, app, 0);
  MoveThenStart scheduler;
  const auto result = simulate(cluster, std::move(jobs), scheduler, {});
  ASSERT_EQ(result.jobs.size(), 2u);
  const JobResult& b = result.jobs[1];
  // a's joiner on t4-1 starts in 10 s (its restart cost) while its old part holds t4-0: b
  // begins there at 70 and trains its 100 s.
  EXPECT_DOUBLE_EQ(b.completion_time, 170);
  EXPECT_EQ(result.jobs[0].restarts, 0);
}

}  // namespace
}  // namespace pollux::sim
