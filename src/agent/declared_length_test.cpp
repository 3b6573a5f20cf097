// SPDX-License-Identifier: GPL-2.0-or-later
// The agent's progress towards a declared length, against hand-computed cases: the examples
// of each step times the statistical efficiency of its batch, across a restart.
#include "declared_length.hpp"

#include <gtest/gtest.h>

#include "common/invalid_input.hpp"
#include "measurements.hpp"

namespace pollux::agent {
namespace {

const model::BatchLimits kLimits{128, 4096, 16, 256, true};
// Per example: |g|^2 = 2, tr(Sigma) = 256, so at the initial batch of 128: sqr 2, var 2.
// At a batch of 256 (r = 2): E = (var + sqr) / (var / r + sqr) / r = 4 / 3 / 2 = 2/3.
const model::GradParams kNoise{2.0, 256.0};

StepMessage step(int local_bsz, double examples, std::optional<model::GradParams> noise = kNoise) {
  return {0.1, local_bsz, 0, examples, examples / 1000, std::nullopt, noise};
}

LengthMessage examples(double count) { return {count, std::nullopt, std::nullopt}; }

Measurements helloed() {
  Measurements measurements;
  measurements.setLimits(kLimits);
  return measurements;
}

TEST(DeclaredLength, StepsCountTheirExamplesAtTheirEfficiency) {
  Measurements job = helloed();
  EXPECT_DOUBLE_EQ(job.stepEfficiency(step(128, 0), 1), 1.0);          // the initial batch
  EXPECT_DOUBLE_EQ(job.stepEfficiency(step(64, 0), 4), 1.0);           // noise not measured
  job.recordProgress(step(128, 128), 1);                               // 1 x 128: E = 1
  EXPECT_DOUBLE_EQ(job.stepEfficiency(step(64, 0), 4), 2.0 / 3.0);     // 4 x 64 = 256
  job.recordProgress(step(64, 384), 4);
  job.recordProgress(step(64, 640), 4);
  const double expected = 128 + (640 - 128) * 2.0 / 3.0;  // 469.33
  EXPECT_NEAR(job.length().progress(), expected, 1e-9);
  // Undeclared: progress is counted, but the report has no length.
  EXPECT_FALSE(job.buildReport("7", "a100", {1, 4})->length);
  EXPECT_FALSE(job.declareLength(examples(10000)));
  const auto report = job.buildReport("7", "a100", {1, 4});
  ASSERT_TRUE(report && report->length);
  EXPECT_NEAR(report->length->progress, expected, 1e-9);
  EXPECT_DOUBLE_EQ(report->length->target, 10000);
  EXPECT_DOUBLE_EQ(report->progress.examples, 640);  // the raw totals, as before
}

TEST(DeclaredLength, EfficiencyAboveOneBelowTheInitialBatchAndOneWithoutNoise) {
  Measurements job = helloed();
  job.recordProgress(step(64, 64), 1);  // the first step, noise measured with it: r = 1/2
  // E = (2 + 2) / (2 * 2 + 2) * 2 = 4/3: a small batch makes more progress per example.
  EXPECT_NEAR(job.length().progress(), 64 * 4.0 / 3.0, 1e-9);
  Measurements unmeasured = helloed();
  unmeasured.recordProgress(step(256, 1024, std::nullopt), 4);  // r = 8, but no noise: E = 1
  EXPECT_DOUBLE_EQ(unmeasured.length().progress(), 1024);
}

TEST(DeclaredLength, WorkersRepeatingTheSameTotalsCountOnce) {
  Measurements job = helloed();
  for (int worker = 0; worker < 4; ++worker) job.recordProgress(step(32, 128), 4);
  for (int worker = 0; worker < 4; ++worker) job.recordProgress(step(32, 256), 4);
  EXPECT_DOUBLE_EQ(job.length().progress(), 256);  // 4 x 32 = 128: the initial batch
}

TEST(DeclaredLength, ProgressAndDeclarationSurviveARestart) {
  Measurements job = helloed();
  job.recordProgress(step(128, 128), 1);
  job.recordProgress(step(64, 384), 4);
  job.recordProgress(step(64, 640), 4);
  ASSERT_FALSE(job.declareLength({std::nullopt, 3.0, 256.0}));  // 3 epochs of 256: 768
  const double before = job.length().progress();

  // The agent restarts from its state file; the trainer resumes from a checkpoint one step
  // older than the agent's last count (512 examples): that step's work is taken back, and
  // counted again when it is trained again.
  Measurements restored = Measurements::fromJson(job.toJson());
  EXPECT_DOUBLE_EQ(restored.length().progress(), before);
  ASSERT_TRUE(restored.buildReport("7", "a100", {1, 4})->length);  // declared before the restart
  EXPECT_DOUBLE_EQ(restored.buildReport("7", "a100", {1, 4})->length->target, 768);
  restored.recordProgress(step(64, 512), 4);
  EXPECT_NEAR(restored.length().progress(), before - 128 * 2.0 / 3.0, 1e-9);
  restored.recordProgress(step(64, 768), 4);
  const double hand = 128 + (768 - 128) * 2.0 / 3.0;  // 554.67: as if never interrupted
  EXPECT_NEAR(restored.length().progress(), hand, 1e-9);
  const auto report = restored.buildReport("7", "a100", {1, 4});
  EXPECT_NEAR(report->length->progress, hand, 1e-9);
  EXPECT_DOUBLE_EQ(report->length->target, 768);
}

TEST(DeclaredLength, StateOfAnOlderAgentCountsTheTotalsAtTheNextStep) {
  Json::Value old_state = helloed().toJson();
  old_state.removeMember("length");
  old_state["progress"]["examples"] = 5000;
  Measurements restored = Measurements::fromJson(old_state);
  EXPECT_DOUBLE_EQ(restored.length().progress(), 0);
  restored.recordProgress(step(128, 5128), 1);
  EXPECT_DOUBLE_EQ(restored.length().progress(), 5128);
}

TEST(DeclaredLength, EpochTargetsConvertWithTheDataSetSizeOrTheTrainersTotals) {
  LengthAccount account;
  const schema::TrainingProgress none{0, 0};
  EXPECT_FALSE(account.declare({std::nullopt, 10.0, std::nullopt}, none));
  EXPECT_TRUE(account.declared());
  EXPECT_FALSE(account.target(none));  // no epoch reported yet: not convertible
  EXPECT_FALSE(account.length(none));
  EXPECT_DOUBLE_EQ(*account.target({3000, 1.5}), 20000);  // 2,000 examples per epoch
  EXPECT_FALSE(account.declare({std::nullopt, 10.0, 1497.0}, {3000, 1.5}));
  EXPECT_DOUBLE_EQ(*account.target({3000, 1.5}), 14970);  // the trainer's own size wins
  EXPECT_FALSE(account.declare(examples(64000), none));
  EXPECT_DOUBLE_EQ(*account.target({3000, 1.5}), 64000);
}

TEST(DeclaredLength, ATargetTheWorkAlreadyReachedIsRefusedAndLeavesTheJobUndeclared) {
  LengthAccount account;
  account.recordStep(1000, 1.0);
  ASSERT_FALSE(account.declare(examples(5000), {1000, 1}));
  const auto refused = account.declare(examples(800), {1000, 1});
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->find("already reaches the declared target (800)"), std::string::npos)
      << *refused;
  EXPECT_FALSE(account.declared());
  EXPECT_FALSE(account.length({1000, 1}));
  EXPECT_TRUE(account.declare(examples(1000), {1000, 1}));  // exactly reached: refused too
  EXPECT_TRUE(account.declare({std::nullopt, 0.5, 1000.0}, {1000, 1}));
  EXPECT_FALSE(account.declare({std::nullopt, 2.0, 1000.0}, {1000, 1}));
  // Reaching the target later is normal: the report says so, the plugin stops using it.
  account.recordStep(2500, 1.0);
  EXPECT_DOUBLE_EQ(account.length({2500, 2.5})->progress, 2500);
  EXPECT_DOUBLE_EQ(account.length({2500, 2.5})->target, 2000);
}

TEST(DeclaredLength, StateRoundTripAndCorruptStateNamesTheKey) {
  LengthAccount account;
  account.recordStep(300, 0.5);
  ASSERT_FALSE(account.declare({std::nullopt, 4.0, 100.0}, {300, 3}));
  const LengthAccount restored =
      LengthAccount::fromJson(schema::JsonField(account.toJson(), "length"));
  EXPECT_DOUBLE_EQ(restored.progress(), 150);
  EXPECT_DOUBLE_EQ(*restored.target({300, 3}), 400);
  EXPECT_EQ(restored.toJson(), account.toJson());

  const auto refusedState = [](const char* key, const Json::Value& value) {
    LengthAccount declared;
    declared.recordStep(10, 1);
    declared.declare(examples(100), {10, 0});
    Json::Value state = declared.toJson();
    if (std::string(key) == "declared.epochs") state["declared"]["epochs"] = value;
    else state[key] = value;
    try {
      LengthAccount::fromJson(schema::JsonField(state, "state.length"));
      return std::string("accepted");
    } catch (const InvalidInput& error) {
      return std::string(error.what());
    }
  };
  EXPECT_NE(refusedState("progress", -1).find("state.length.progress"), std::string::npos);
  EXPECT_NE(refusedState("efficiency", 0).find("state.length.efficiency"), std::string::npos);
  EXPECT_NE(refusedState("colour", 1).find("unknown key 'colour'"), std::string::npos);
  EXPECT_NE(refusedState("declared.epochs", 3).find("state.length.declared"), std::string::npos);
}

TEST(DeclaredLength, DeclarationsAsTheTrainerWroteThem) {
  EXPECT_EQ(describe(examples(1.5e6)), "examples=1500000");
  EXPECT_EQ(describe({std::nullopt, 30.0, std::nullopt}), "epochs=30");
  EXPECT_EQ(describe({std::nullopt, 30.0, 1497.0}), "epochs=30 examples_per_epoch=1497");
}

}  // namespace
}  // namespace pollux::agent
