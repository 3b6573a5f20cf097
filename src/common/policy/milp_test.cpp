#include "milp.hpp"

#include <cmath>
#include <random>

#include <gtest/gtest.h>

namespace pollux::policy {
namespace {

bool withinCapacity(const MilpInput& input, const std::vector<int>& chosen) {
  std::vector<MilpTypeCapacity> used(input.types.size());
  for (std::size_t job = 0; job < chosen.size(); ++job) {
    if (chosen[job] < 0) continue;
    const MilpOption& option = input.jobs[job][chosen[job]];
    used[option.type].gpus += option.gpus;
    used[option.type].whole_nodes += option.whole_nodes;
  }
  for (std::size_t type = 0; type < used.size(); ++type) {
    if (used[type].gpus > input.types[type].gpus) return false;
    if (used[type].whole_nodes > input.types[type].whole_nodes) return false;
  }
  return true;
}

// Best total weight over every assignment (each job: one option or none).
double bruteForce(const MilpInput& input, std::vector<int>& chosen, std::size_t job) {
  if (job == input.jobs.size()) {
    if (!withinCapacity(input, chosen)) return -INFINITY;
    double total = 0;
    for (std::size_t j = 0; j < chosen.size(); ++j) {
      if (chosen[j] >= 0) total += input.jobs[j][chosen[j]].weight;
    }
    return total;
  }
  double best = -INFINITY;
  for (int option = -1; option < static_cast<int>(input.jobs[job].size()); ++option) {
    chosen[job] = option;
    best = std::max(best, bruteForce(input, chosen, job + 1));
  }
  chosen[job] = -1;
  return best;
}

MilpInput randomInstance(std::mt19937& random) {
  std::uniform_int_distribution<int> jobs(3, 5), options(1, 4), type(0, 1), power(0, 3),
      capacity(2, 12), nodes(0, 2);
  std::uniform_real_distribution<double> weight(-0.5, 5.0);
  MilpInput input;
  input.types = {{capacity(random), nodes(random)}, {capacity(random), nodes(random)}};
  input.jobs.resize(jobs(random));
  for (auto& job : input.jobs) {
    for (int i = options(random); i > 0; --i) {
      const int gpus = 1 << power(random);
      job.push_back({type(random), gpus, gpus >= 4 ? gpus / 4 : 0, weight(random)});
    }
  }
  return input;
}

TEST(MilpTest, MatchesBruteForceOnRandomInstances) {
  std::mt19937 random(7);
  for (int instance = 0; instance < 200; ++instance) {
    const MilpInput input = randomInstance(random);
    const MilpResult result = solveMilp(input);
    ASSERT_EQ(result.outcome.describe(), "optimal") << "instance " << instance;
    std::vector<int> chosen(input.jobs.size(), -1);
    const double expected = bruteForce(input, chosen, 0);
    EXPECT_NEAR(result.objective, expected, 1e-6 * std::max(1.0, std::abs(expected)))
        << "instance " << instance;
    EXPECT_TRUE(withinCapacity(input, result.chosen)) << "instance " << instance;
  }
}

TEST(MilpTest, NoOptionsIsTriviallyOptimal) {
  MilpInput input;
  input.types = {{4, 0}};
  input.jobs = {{}, {}};
  const MilpResult result = solveMilp(input);
  EXPECT_EQ(result.outcome.describe(), "optimal");
  EXPECT_EQ(result.chosen, (std::vector<int>{-1, -1}));
  EXPECT_EQ(result.columns, 0);
}

TEST(MilpTest, DominatedOptionsAreNotOffered) {
  MilpInput input;
  input.types = {{8, 0}};
  input.jobs = {{{0, 2, 0, 3.0}, {0, 4, 0, 2.0}, {0, 8, 0, 4.0}}};
  const MilpResult result = solveMilp(input);
  EXPECT_EQ(result.columns, 2);
  EXPECT_EQ(result.chosen, std::vector<int>{2});
}

}  // namespace
}  // namespace pollux::policy
