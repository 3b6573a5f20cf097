// SPDX-License-Identifier: GPL-2.0-or-later
#include "emulated_job.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "applications.hpp"
#include "checkpoint.hpp"
#include "test_support.hpp"

namespace pollux::emulate {
namespace {

const trace::Application& cifar10() { return traceApp("cifar10"); }

TEST(EmulatedJob, DefaultBatchSplitsTheInitialBatchOverTheReplicas) {
  const EmulatedJob one(cifar10(), {1}, 1, 1);
  const EmulatedJob four(cifar10(), {2, 2}, 1, 1);
  const long init = cifar10().curves.initBatchSize();
  ASSERT_EQ(init, 128);
  EXPECT_EQ(one.defaultBatch().local_bsz, 128);
  EXPECT_EQ(one.defaultBatch().accum_steps, 0);
  EXPECT_EQ(four.replicas(), 4);
  EXPECT_EQ(four.defaultBatch().local_bsz, 32);
  EXPECT_EQ(four.batchSize(four.defaultBatch()), init);
}

TEST(EmulatedJob, DefaultBatchIsClampedToTheProfilesBounds) {
  // 128 / 8 = 16 is below cifar10's smallest measured per-GPU batch (32).
  const EmulatedJob eight(cifar10(), {4, 4}, 1, 1);
  EXPECT_EQ(eight.defaultBatch().local_bsz, cifar10().minLocalBsz());
  EXPECT_EQ(eight.defaultBatch().accum_steps, 0);
}

TEST(EmulatedJob, AShareTooLargeForOneMicroBatchIsAccumulated) {
  const TempDir dir;
  writeTinyApp(dir);
  const trace::Application tiny = loadProfile(dir.file(""), "tiny");
  const EmulatedJob one(tiny, {1}, 1, 1), two(tiny, {2}, 1, 1);
  EXPECT_EQ(one.defaultBatch().local_bsz, 16);  // 64 = 16 x 4 micro-batches
  EXPECT_EQ(one.defaultBatch().accum_steps, 3);
  EXPECT_EQ(two.defaultBatch().local_bsz, 16);  // 32 per GPU = 16 x 2
  EXPECT_EQ(two.defaultBatch().accum_steps, 1);
  EXPECT_EQ(two.batchSize(two.defaultBatch()), 64);
  EXPECT_DOUBLE_EQ(one.stepSeconds(one.defaultBatch()), 0.18 + 3 * 0.17);
}

TEST(EmulatedJob, DecisionsAreClampedToTheProfile) {
  const EmulatedJob job(cifar10(), {1}, 1, 1);
  const int max_local = cifar10().commonMaxLocalBsz();
  EXPECT_EQ(job.clamp({1, 0}).local_bsz, cifar10().minLocalBsz());
  EXPECT_EQ(job.clamp({64, -3}).accum_steps, 0);
  EXPECT_EQ(job.clamp({64, 2}).local_bsz, 64);  // a valid decision is kept as it is
  EXPECT_EQ(job.clamp({64, 2}).accum_steps, 2);
  // Twice the largest micro-batch becomes two micro-batches: the same examples per step.
  const BatchConfig twice = job.clamp({2 * max_local, 0});
  EXPECT_EQ(twice.local_bsz, max_local);
  EXPECT_EQ(twice.accum_steps, 1);
}

TEST(EmulatedJob, TheDecisionWhenThereIsOneElseTheDefault) {
  const EmulatedJob job(cifar10(), {2}, 1, 1);
  EXPECT_EQ(job.batchFor(std::nullopt).local_bsz, job.defaultBatch().local_bsz);
  const BatchConfig decided = job.batchFor(BatchConfig{100, 1});
  EXPECT_EQ(decided.local_bsz, 100);
  EXPECT_EQ(decided.accum_steps, 1);
  EXPECT_EQ(job.batchSize(decided), 400);
}

TEST(EmulatedJob, StepTimeIsTheProfilesOverTheGpuSpeed) {
  const EmulatedJob slow(cifar10(), {2}, 1, 1), fast(cifar10(), {2}, 3, 1);
  const BatchConfig config{64, 1};
  const trace::StepTiming timing = cifar10().on(kProfileGpuType).timing({2}, 64);
  const double profile = trace::optimizerStepTime(timing, 1);
  EXPECT_DOUBLE_EQ(slow.stepSeconds(config), profile);
  EXPECT_DOUBLE_EQ(fast.stepSeconds(config), profile / 3);
  EXPECT_DOUBLE_EQ(slow.computeSeconds(config), timing.step_time - timing.sync_time);
  // Accumulation adds one micro-batch's compute per extra micro-batch.
  EXPECT_DOUBLE_EQ(slow.stepSeconds({64, 3}) - slow.stepSeconds({64, 1}),
                   2 * slow.computeSeconds(config));
}

TEST(EmulatedJob, StepTimeGrowsWithTheBatchAndShrinksPerExampleWithMoreGpus) {
  const EmulatedJob one(cifar10(), {1}, 1, 1), four(cifar10(), {4}, 1, 1);
  EXPECT_LT(one.stepSeconds({64, 0}), one.stepSeconds({256, 0}));
  EXPECT_LT(four.stepSeconds({64, 0}) / four.batchSize({64, 0}),
            one.stepSeconds({64, 0}) / one.batchSize({64, 0}));
}

TEST(EmulatedJob, ProgressGrowsByTheGainAndStopsAtTheTarget) {
  EmulatedJob job(cifar10(), {1}, 1, 0.001);
  const BatchConfig config = job.defaultBatch();
  job.step(config);
  EXPECT_NEAR(job.state().progress, 1.0, 1e-9);  // at the initial batch the gain is 1
  EXPECT_EQ(job.state().examples, double(job.batchSize(config)));
  while (!job.state().done) job.step(config);
  EXPECT_GE(job.state().progress, job.target());
  EXPECT_LT(job.state().progress, job.target() + 1);  // stopped at the first step past it
  EXPECT_DOUBLE_EQ(job.target(), 0.001 * cifar10().curves.targetProgress());
  const TrainingState finished = job.state();
  job.step(config);
  EXPECT_EQ(job.state().steps, finished.steps);
  EXPECT_EQ(job.state().progress, finished.progress);
}

TEST(EmulatedJob, LargerBatchesProgressFasterPerStepButLessPerExample) {
  EmulatedJob small(cifar10(), {1}, 1, 1), large(cifar10(), {4}, 1, 1);
  const BatchConfig small_config = small.defaultBatch();
  const BatchConfig large_config{128, 0};  // 4 x 128: four times the initial batch
  small.step(small_config);
  large.step(large_config);
  const double gain = cifar10().curves.gain(512, 0);
  EXPECT_DOUBLE_EQ(large.state().progress, gain);
  EXPECT_GT(gain, 1);
  EXPECT_LT(gain, 4);
}

TEST(EmulatedJob, GradientNoiseIsPerExample) {
  const EmulatedJob job(cifar10(), {1}, 1, 1);
  const BatchConfig config = job.defaultBatch();
  const model::GradParams at_init = cifar10().curves.gradParams(double(job.batchSize(config)), 0);
  EXPECT_DOUBLE_EQ(job.perExampleGrad(config).sqr, at_init.sqr);
  EXPECT_DOUBLE_EQ(job.perExampleGrad(config).var,
                   at_init.var * double(cifar10().curves.initBatchSize()));
}

// A job stopped, checkpointed and resumed ends exactly where one that never stopped does.
TEST(EmulatedJob, ResumingFromACheckpointLosesNoProgress) {
  const TempDir dir;
  EmulatedJob straight(cifar10(), {2}, 1, 0.01), before(cifar10(), {2}, 1, 0.01),
      after(cifar10(), {2}, 1, 0.01);
  const BatchConfig small = straight.defaultBatch(), decided{96, 1};
  for (int i = 0; i < 50; ++i) straight.step(small), before.step(small);
  for (int i = 0; i < 50; ++i) straight.step(decided);
  saveCheckpoint(dir.file("ckpt"), "cifar10", before.state());
  after.restore(*loadCheckpoint(dir.file("ckpt"), "cifar10"));
  for (int i = 0; i < 50; ++i) after.step(decided);
  EXPECT_EQ(after.state().progress, straight.state().progress);
  EXPECT_EQ(after.state().examples, straight.state().examples);
  EXPECT_EQ(after.state().steps, 100);
  while (!after.state().done) after.step(decided);
  while (!straight.state().done) straight.step(decided);
  EXPECT_EQ(after.state().steps, straight.state().steps);
}

TEST(EmulatedJob, ATargetInExamplesAtTheInitialBatch) {
  EmulatedJob job(cifar10(), {1}, 1, 0.5);
  EXPECT_DOUBLE_EQ(job.targetExamples(), job.target() * 128);  // cifar10's initial batch
  job.setTargetExamples(1280);
  EXPECT_DOUBLE_EQ(job.target(), 10);
  EXPECT_DOUBLE_EQ(job.targetExamples(), 1280);
  // At the initial batch each step is one iteration: done after 10 steps of 128 examples.
  while (!job.state().done) job.step(job.defaultBatch());
  EXPECT_EQ(job.state().steps, 10);
  EXPECT_DOUBLE_EQ(job.state().examples, 1280);
  for (const double bad : {0.0, -1.0, std::nan(""), HUGE_VAL}) {
    EXPECT_THROW(job.setTargetExamples(bad), std::invalid_argument) << bad;
  }
}

TEST(EmulatedJob, BadArgumentsAreRefused) {
  EXPECT_THROW(EmulatedJob(cifar10(), {}, 1, 1), std::invalid_argument);
  EXPECT_THROW(EmulatedJob(cifar10(), {0}, 1, 1), std::invalid_argument);
  EXPECT_THROW(EmulatedJob(cifar10(), {1}, 0, 1), std::invalid_argument);
  EXPECT_THROW(EmulatedJob(cifar10(), {1}, 1, 1.5), std::invalid_argument);
  EXPECT_THROW(EmulatedJob(cifar10(), {1}, 1, 0), std::invalid_argument);
}

}  // namespace
}  // namespace pollux::emulate
