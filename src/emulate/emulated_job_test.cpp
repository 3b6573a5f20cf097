#include "emulated_job.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>

namespace pollux::emulate {
namespace {

const sim::Application& cifar10() {
  static const sim::Application app =
      sim::loadApplication(std::getenv("POLLUX_TRACES"), "cifar10", {"profile"});
  return app;
}

TEST(EmulatedJob, DefaultBatchSplitsTheInitialBatchOverTheReplicas) {
  const EmulatedJob one(cifar10(), {1}, 1, 1);
  const EmulatedJob four(cifar10(), {2, 2}, 1, 1);
  const EmulatedJob eight(cifar10(), {4, 4}, 1, 1);
  const long init = cifar10().curves.initBatchSize();  // 128
  EXPECT_EQ(one.batchSize(one.defaultBatch()), init);
  EXPECT_EQ(four.defaultBatch().local_bsz * 4, init);
  EXPECT_EQ(eight.replicas(), 8);
  // 128 / 8 = 16 is below cifar10's smallest measured per-GPU batch (32).
  EXPECT_EQ(eight.defaultBatch().local_bsz, cifar10().minLocalBsz());
}

TEST(EmulatedJob, DecisionsAreClampedToTheProfile) {
  const EmulatedJob job(cifar10(), {1}, 1, 1);
  EXPECT_EQ(job.clamp({1, 0}).local_bsz, cifar10().minLocalBsz());
  EXPECT_EQ(job.clamp({1 << 20, -3}).local_bsz, cifar10().commonMaxLocalBsz());
  EXPECT_EQ(job.clamp({1 << 20, -3}).accum_steps, 0);
}

TEST(EmulatedJob, StepTimeIsTheProfilesOverTheGpuSpeed) {
  const EmulatedJob slow(cifar10(), {2}, 1, 1), fast(cifar10(), {2}, 3, 1);
  const BatchConfig config{64, 1};
  const double profile =
      sim::optimizerStepTime(cifar10().on("profile").timing({2}, 64), 1);
  EXPECT_DOUBLE_EQ(slow.stepSeconds(config), profile);
  EXPECT_DOUBLE_EQ(fast.stepSeconds(config), profile / 3);
  EXPECT_LT(slow.computeSeconds(config), slow.stepSeconds(config));
}

TEST(EmulatedJob, ProgressGrowsByTheGainAndStopsAtTheTarget) {
  EmulatedJob job(cifar10(), {1}, 1, 0.001);
  const BatchConfig config = job.defaultBatch();
  job.step(config);
  EXPECT_NEAR(job.state().progress, 1.0, 1e-9);  // at the initial batch the gain is 1
  EXPECT_EQ(job.state().examples, double(job.batchSize(config)));
  while (!job.state().done) job.step(config);
  EXPECT_GE(job.state().progress, job.target());
  const TrainingState finished = job.state();
  job.step(config);
  EXPECT_EQ(job.state().steps, finished.steps);
}

TEST(EmulatedJob, LargerBatchesProgressFasterPerStepButLessPerExample) {
  EmulatedJob small(cifar10(), {1}, 1, 1), large(cifar10(), {4}, 1, 1);
  const BatchConfig small_config = small.defaultBatch();
  const BatchConfig large_config{128, 0};  // 4 x 128: four times the initial batch
  small.step(small_config);
  large.step(large_config);
  EXPECT_GT(large.state().progress, small.state().progress);
  EXPECT_LT(large.state().progress / large.state().examples,
            small.state().progress / small.state().examples);
}

TEST(EmulatedJob, GradientNoiseIsPerExample) {
  const EmulatedJob job(cifar10(), {1}, 1, 1);
  const BatchConfig config = job.defaultBatch();
  const model::GradParams at_init = cifar10().curves.gradParams(double(job.batchSize(config)), 0);
  EXPECT_DOUBLE_EQ(job.perExampleGrad(config).var,
                   at_init.var * double(cifar10().curves.initBatchSize()));
}

TEST(EmulatedJob, BadArgumentsAreRefused) {
  EXPECT_THROW(EmulatedJob(cifar10(), {}, 1, 1), std::invalid_argument);
  EXPECT_THROW(EmulatedJob(cifar10(), {0}, 1, 1), std::invalid_argument);
  EXPECT_THROW(EmulatedJob(cifar10(), {1}, 0, 1), std::invalid_argument);
  EXPECT_THROW(EmulatedJob(cifar10(), {1}, 1, 1.5), std::invalid_argument);
}

}  // namespace
}  // namespace pollux::emulate
