// SPDX-License-Identifier: GPL-2.0-or-later
#include "measurements.hpp"

#include <gtest/gtest.h>

#include "common/invalid_input.hpp"
#include "common/model/efficiency.hpp"
#include "common/model/goodput.hpp"
#include "common/model/throughput.hpp"

namespace pollux::agent {
namespace {

const model::PerfParams kTruth{0.02, 0.001, 0.05, 0.004, 0.01, 0.002, 1.5};
const model::BatchLimits kLimits{128, 4096, 16, 256, true};

StepMessage stepAt(const model::Placement& placement, int local_bsz, int accum_steps) {
  const double time = model::stepTime(kTruth, placement, local_bsz, accum_steps);
  return {time, local_bsz, accum_steps, 1000, 0.5, std::nullopt, model::GradParams{2.0, 256.0}};
}

// Steps on a spread of placements and batch sizes, as a job that was resized a few times.
Measurements measuredJob() {
  Measurements measurements;
  measurements.setLimits(kLimits);
  for (const model::Placement placement :
       {model::Placement{1, 1}, model::Placement{1, 2}, model::Placement{1, 4},
        model::Placement{2, 8}}) {
    for (const int local_bsz : {32, 64, 128}) {
      for (int repeat = 0; repeat < 3; ++repeat)
        measurements.recordProgress(stepAt(placement, local_bsz, 0), placement.num_replicas),
            measurements.addSample("a100", placement, stepAt(placement, local_bsz, 0));
    }
  }
  return measurements;
}

TEST(Measurements, NoReportBeforeTheTrainerSaidHello) {
  Measurements measurements;
  EXPECT_FALSE(measurements.buildReport("7", "a100", {1, 1}));
}

TEST(Measurements, ReportFitsTheMeasuredTypeAndScalesTheGradientNoise) {
  const Measurements measurements = measuredJob();
  EXPECT_EQ(measurements.distinctSamples(), 12);
  const auto report = measurements.buildReport("7", "a100", {2, 8});
  ASSERT_TRUE(report);
  EXPECT_EQ(report->job_id, "7");
  ASSERT_EQ(report->perf_params.count("a100"), 1u);
  // The fitted model predicts the measured step times closely.
  for (const model::Placement placement : {model::Placement{1, 4}, model::Placement{2, 8}}) {
    const double truth = model::stepTime(kTruth, placement, 64, 0);
    const double fitted = model::stepTime(report->perf_params.at("a100"), placement, 64, 0);
    EXPECT_NEAR(fitted / truth, 1.0, 0.05);
  }
  EXPECT_DOUBLE_EQ(report->grad.sqr, 2.0);
  EXPECT_DOUBLE_EQ(report->grad.var, 256.0 / 128);  // tr(Sigma) at the initial batch
  EXPECT_EQ(report->limits.max_batch_size, 4096);
  EXPECT_DOUBLE_EQ(report->progress.examples, 1000);
  EXPECT_FALSE(report->restart_cost_s);
}

TEST(Measurements, WithoutGradientStatisticsALargerBatchIsWorthNothing) {
  Measurements measurements;
  measurements.setLimits(kLimits);
  StepMessage step = stepAt({1, 1}, 64, 0);
  step.per_example_grad.reset();
  measurements.recordProgress(step, 1);
  measurements.addSample("v100", {1, 1}, step);
  const auto report = measurements.buildReport("7", "v100", {1, 1});
  ASSERT_TRUE(report);
  EXPECT_DOUBLE_EQ(report->grad.var, 0.0);
  EXPECT_GT(report->grad.sqr, 0.0);
}

TEST(Measurements, NegativeSingleStepEstimatesAverageBeforeClamping) {
  Measurements measurements;
  measurements.setLimits(kLimits);
  StepMessage step = stepAt({1, 1}, 64, 0);
  step.per_example_grad = model::GradParams{-1.0, 512.0};
  measurements.recordProgress(step, 1);
  step.per_example_grad = model::GradParams{3.0, 256.0};
  for (int i = 0; i < 200; ++i) measurements.recordProgress(step, 1);
  const auto report = measurements.buildReport("7", "a100", {1, 1});
  ASSERT_TRUE(report);
  EXPECT_NEAR(report->grad.sqr, 3.0, 0.01);
  EXPECT_NEAR(report->grad.var, 2.0, 0.01);
  measurements.recordProgress({0.1, 64, 0, 0, 0, std::nullopt, model::GradParams{-50, 10}}, 1);
  EXPECT_GE(measurements.buildReport("7", "a100", {1, 1})->grad.sqr, 0.0);
}

TEST(Measurements, RestartCostIsStartupPlusCheckpoint) {
  Measurements measurements = measuredJob();
  measurements.recordStartup(12.5);
  measurements.recordCheckpoint(3.0);
  EXPECT_DOUBLE_EQ(*measurements.restartCost(), 15.5);
}

TEST(Measurements, StateRoundTripGivesTheSameReport) {
  Measurements measurements = measuredJob();
  measurements.recordStartup(4);
  const Measurements restored = Measurements::fromJson(measurements.toJson());
  const auto before = measurements.buildReport("7", "a100", {1, 1});
  const auto after = restored.buildReport("7", "a100", {1, 1});
  ASSERT_TRUE(before && after);
  EXPECT_EQ(restored.distinctSamples(), measurements.distinctSamples());
  EXPECT_DOUBLE_EQ(after->perf_params.at("a100").alpha_c, before->perf_params.at("a100").alpha_c);
  EXPECT_DOUBLE_EQ(after->grad.var, before->grad.var);
  EXPECT_DOUBLE_EQ(*after->restart_cost_s, 4);
  EXPECT_FALSE(after->join_startup_s);  // none joined yet
}

TEST(Measurements, TheJoinersStartUpIsReportedAndKeptForTheNextLead) {
  Measurements measurements = measuredJob();
  measurements.recordJoinStartup(6.5);
  EXPECT_DOUBLE_EQ(*measurements.buildReport("7", "a100", {1, 1})->join_startup_s, 6.5);
  const Measurements restored = Measurements::fromJson(measurements.toJson());
  EXPECT_DOUBLE_EQ(*restored.buildReport("7", "a100", {1, 1})->join_startup_s, 6.5);
  Json::Value state = measurements.toJson();
  state["join_startup_s"] = -1;
  EXPECT_THROW(Measurements::fromJson(state), InvalidInput);
}

TEST(Measurements, BestDecisionIsThePluginsChoiceForTheWorkersTheTrainerHas) {
  const Measurements measurements = measuredJob();
  const auto report = measurements.buildReport("7", "a100", {2, 8});
  ASSERT_TRUE(report);
  const model::GoodputModel plugins(report->perf_params.at("a100"), report->grad, report->limits);
  for (const model::Placement placement : {model::Placement{1, 2}, model::Placement{2, 8}}) {
    const auto decision = measurements.bestDecision("a100", placement);
    const auto choice = plugins.bestBatch(placement);
    ASSERT_TRUE(decision && choice);
    EXPECT_EQ(decision->batch_size, choice->batch_size);
    EXPECT_EQ(decision->local_bsz, choice->local_bsz);
    EXPECT_EQ(decision->accum_steps, choice->accum_steps);
    // A batch the trainer accepts for that many workers.
    EXPECT_EQ(decision->batch_size, static_cast<long>(placement.num_replicas) *
                                        decision->local_bsz * (decision->accum_steps + 1));
    EXPECT_DOUBLE_EQ(decision->lr_scale,
                     model::lrScale(model::LrScaling::kAdaScale, report->grad,
                                    double(kLimits.init_batch_size), double(choice->batch_size)));
  }
}

TEST(Measurements, NoBestDecisionForATypeNotMeasuredOrBeforeTheTrainerSaidHello) {
  EXPECT_FALSE(measuredJob().bestDecision("v100", {1, 2}));
  EXPECT_FALSE(Measurements().bestDecision("a100", {1, 2}));
}

TEST(Measurements, CorruptStateIsRejectedNamingTheKey) {
  Json::Value state = measuredJob().toJson();
  state["samples"][0]["step_time"] = -1;
  try {
    Measurements::fromJson(state);
    FAIL() << "a negative step time was accepted";
  } catch (const InvalidInput& error) {
    EXPECT_NE(std::string(error.what()).find("samples[0].step_time"), std::string::npos)
        << error.what();
  }
  EXPECT_THROW(Measurements::fromJson(Json::Value("text")), InvalidInput);
}

}  // namespace
}  // namespace pollux::agent
