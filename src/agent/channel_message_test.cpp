// SPDX-License-Identifier: GPL-2.0-or-later
#include "channel_message.hpp"

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "common/invalid_input.hpp"

namespace pollux::agent {
namespace {

TEST(ChannelMessage, HelloCarriesTheBatchLimits) {
  const auto message = parseTrainerMessage(
      "hello init_batch_size=128 max_batch_size=4096 min_local_bsz=32 max_local_bsz=512 "
      "accumulation=1\n");
  const auto& hello = std::get<HelloMessage>(message);
  EXPECT_EQ(hello.limits.init_batch_size, 128);
  EXPECT_EQ(hello.limits.max_batch_size, 4096);
  EXPECT_EQ(hello.limits.min_local_bsz, 32);
  EXPECT_EQ(hello.limits.max_local_bsz, 512);
  EXPECT_TRUE(hello.limits.accumulation);
}

TEST(ChannelMessage, HelloMayDeclareAnElasticTrainer) {
  const std::string limits =
      "hello init_batch_size=8 max_batch_size=64 min_local_bsz=4 max_local_bsz=32 accumulation=0";
  EXPECT_FALSE(std::get<HelloMessage>(parseTrainerMessage(limits)).elastic);
  EXPECT_TRUE(std::get<HelloMessage>(parseTrainerMessage(limits + " elastic=1")).elastic);
  EXPECT_FALSE(std::get<HelloMessage>(parseTrainerMessage(limits + " elastic=0")).elastic);
  EXPECT_THROW(parseTrainerMessage(limits + " elastic=2"), InvalidInput);
}

TEST(ChannelMessage, ResizedCarriesTheLiveChangesStall) {
  const auto resized = std::get<ResizedMessage>(parseTrainerMessage("resized from=4 to=3 stall=0.25\n"));
  EXPECT_EQ(resized.from, 4);
  EXPECT_EQ(resized.to, 3);
  EXPECT_EQ(resized.stall_s, 0.25);
  EXPECT_EQ(resized.rank, std::nullopt);  // a trainer that does not say
  const auto ranked =
      std::get<ResizedMessage>(parseTrainerMessage("resized from=4 to=3 stall=0.25 rank=2"));
  EXPECT_EQ(ranked.rank, 2);
  EXPECT_THROW(parseTrainerMessage("resized from=4 to=3 stall=0.25 rank=3"), InvalidInput);
  EXPECT_THROW(parseTrainerMessage("resized from=4 to=0 stall=0.25"), InvalidInput);
  EXPECT_THROW(parseTrainerMessage("resized from=4 to=3"), InvalidInput);
}

TEST(ChannelMessage, StepWithOptionalKeysAndUnknownOnesIgnored) {
  const auto step = std::get<StepMessage>(parseTrainerMessage(
      "step time=0.25 local_bsz=64 accum_steps=2 examples=1e6 epochs=3.5 compute_time=0.07 "
      "grad_sqr=0.5 grad_var=40 future_key=x"));
  EXPECT_DOUBLE_EQ(step.step_time, 0.25);
  EXPECT_EQ(step.local_bsz, 64);
  EXPECT_EQ(step.accum_steps, 2);
  EXPECT_DOUBLE_EQ(step.examples, 1e6);
  EXPECT_DOUBLE_EQ(step.epochs, 3.5);
  ASSERT_TRUE(step.compute_time);
  EXPECT_DOUBLE_EQ(*step.compute_time, 0.07);
  ASSERT_TRUE(step.per_example_grad);
  EXPECT_DOUBLE_EQ(step.per_example_grad->sqr, 0.5);
  EXPECT_DOUBLE_EQ(step.per_example_grad->var, 40);
}

TEST(ChannelMessage, StepWithoutOptionalKeys) {
  const auto step = std::get<StepMessage>(
      parseTrainerMessage("step time=0.1 local_bsz=8 accum_steps=0 examples=0 epochs=0"));
  EXPECT_FALSE(step.compute_time);
  EXPECT_FALSE(step.per_example_grad);
}

TEST(ChannelMessage, SingleStepGradientEstimatesMayBeNegative) {
  const auto step = std::get<StepMessage>(parseTrainerMessage(
      "step time=0.1 local_bsz=8 accum_steps=0 examples=0 epochs=0 grad_sqr=-0.25 grad_var=3"));
  EXPECT_DOUBLE_EQ(step.per_example_grad->sqr, -0.25);
}

TEST(ChannelMessage, Leaving) {
  EXPECT_TRUE(std::holds_alternative<LeavingMessage>(parseTrainerMessage("leaving\n")));
}

TEST(ChannelMessage, Checkpointed) {
  EXPECT_TRUE(std::holds_alternative<CheckpointedMessage>(parseTrainerMessage("checkpointed\n")));
}

TEST(ChannelMessage, LengthInExamplesOrEpochs) {
  const auto examples = std::get<LengthMessage>(parseTrainerMessage("length examples=1.5e6\n"));
  EXPECT_DOUBLE_EQ(*examples.examples, 1.5e6);
  EXPECT_FALSE(examples.epochs);
  EXPECT_FALSE(examples.examples_per_epoch);
  const auto epochs = std::get<LengthMessage>(parseTrainerMessage("length epochs=90"));
  EXPECT_DOUBLE_EQ(*epochs.epochs, 90);
  EXPECT_FALSE(epochs.examples);
  EXPECT_FALSE(epochs.examples_per_epoch);
  const auto sized = std::get<LengthMessage>(
      parseTrainerMessage("length epochs=2.5 examples_per_epoch=1497 later_key=1"));
  EXPECT_DOUBLE_EQ(*sized.epochs, 2.5);
  EXPECT_DOUBLE_EQ(*sized.examples_per_epoch, 1497);
}

TEST(ChannelMessage, BadLengthsAreRefusedSayingWhy) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"length", "length needs examples= or epochs="},
      {"length examples_per_epoch=100", "length needs examples= or epochs="},
      {"length examples=10 epochs=2", "not both"},
      {"length examples=10 examples_per_epoch=5", "examples_per_epoch= goes with epochs= only"},
      {"length examples=0", "length examples=0 is not a finite number > 0"},
      {"length examples=-5", "length examples=-5 is not a finite number > 0"},
      {"length epochs=nan", "length epochs=nan is not a finite number > 0"},
      {"length epochs=inf", "length epochs=inf"},
      {"length epochs=1e400", "length epochs=1e400"},
      {"length examples=2e18", "at most 1e18"},
      {"length epochs=3 examples_per_epoch=0", "length examples_per_epoch=0"},
      {"length epochs=ten", "length epochs=ten"},
  };
  for (const auto& [text, reason] : cases) {
    try {
      parseTrainerMessage(text);
      ADD_FAILURE() << "accepted '" << text << "'";
    } catch (const InvalidInput& error) {
      EXPECT_NE(std::string(error.what()).find(reason), std::string::npos)
          << "'" << text << "': " << error.what();
    }
  }
}

TEST(ChannelMessage, GarbageIsRejectedWithAReason) {
  const char* const garbage[] = {
      "",
      "\n",
      "launch missiles",
      "step",
      "step time=0.1 local_bsz=8 accum_steps=0 examples=0",           // epochs missing
      "step time=nan local_bsz=8 accum_steps=0 examples=0 epochs=0",
      "step time=inf local_bsz=8 accum_steps=0 examples=0 epochs=0",
      "step time=0 local_bsz=8 accum_steps=0 examples=0 epochs=0",
      "step time=-1 local_bsz=8 accum_steps=0 examples=0 epochs=0",
      "step time=0.1 local_bsz=0 accum_steps=0 examples=0 epochs=0",
      "step time=0.1 local_bsz=8.5 accum_steps=0 examples=0 epochs=0",
      "step time=0.1 local_bsz=99999999999 accum_steps=0 examples=0 epochs=0",
      "step time=0.1x local_bsz=8 accum_steps=0 examples=0 epochs=0",
      "step time=0.1 local_bsz=8 accum_steps=0 examples=0 epochs=0 grad_sqr=1",
      "step time=0.1 local_bsz=8 accum_steps=0 examples=0 epochs=0 =3",
      "step time=0.1 local_bsz=8 accum_steps=0 examples=0 epochs=0 word",
      "step time=0.1\x01 local_bsz=8 accum_steps=0 examples=0 epochs=0",
      "hello init_batch_size=128 max_batch_size=64 min_local_bsz=1 max_local_bsz=8 accumulation=0",
      "hello init_batch_size=128 max_batch_size=256 min_local_bsz=9 max_local_bsz=8 accumulation=0",
      "hello init_batch_size=128 max_batch_size=256 min_local_bsz=1 max_local_bsz=8 accumulation=2",
  };
  for (const char* text : garbage) {
    EXPECT_THROW(parseTrainerMessage(text), InvalidInput) << "'" << text << "'";
  }
  EXPECT_THROW(parseTrainerMessage(std::string(2000, 'a')), InvalidInput);
  EXPECT_THROW(parseTrainerMessage(std::string("step\0time=1", 11)), InvalidInput);
}

TEST(ChannelMessage, DecisionLineMatchesTheHeaderFormat) {
  EXPECT_EQ(formatDecision({1024, 64, 1, 2.5}),
            "decision batch_size=1024 local_bsz=64 accum_steps=1 lr_scale=2.5\n");
  EXPECT_TRUE(sameDecision({1024, 64, 1, 2.5}, {1024, 64, 1, 2.5}));
  EXPECT_FALSE(sameDecision({1024, 64, 1, 2.5}, {1024, 64, 1, 2.0}));
}

}  // namespace
}  // namespace pollux::agent
