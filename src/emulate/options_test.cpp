// SPDX-License-Identifier: GPL-2.0-or-later
#include "options.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/invalid_input.hpp"

namespace pollux::emulate {
namespace {

// parseOptions on "pollux-emulate ARGUMENTS..."; false for --help.
bool parse(std::vector<std::string> arguments, Options& options) {
  arguments.insert(arguments.begin(), "pollux-emulate");
  std::vector<char*> argv;
  for (auto& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  return parseOptions(int(arguments.size()), argv.data(), options);
}

Options parsed(const std::vector<std::string>& arguments) {
  Options options;
  EXPECT_TRUE(parse(arguments, options));
  return options;
}

TEST(Options, DefaultsNeedOnlyTheApplication) {
  const Options options = parsed({"--app", "bert"});
  EXPECT_EQ(options.app, "bert");
  EXPECT_EQ(options.time_scale, 1);
  EXPECT_EQ(options.target_fraction, 1);
  EXPECT_EQ(options.startup_s, 0);
  EXPECT_EQ(options.checkpoint_interval_s, 2);
  EXPECT_TRUE(options.checkpoint.empty());
  EXPECT_TRUE(options.profiles.empty());
  EXPECT_TRUE(options.speeds.empty());
  EXPECT_EQ(options.nodes, 0);
  EXPECT_EQ(options.dataset_size, 0);
}

TEST(Options, EveryOptionIsRead) {
  const Options options = parsed(
      {"--app", "cifar10", "--profiles", "/p", "--time-scale", "100", "--target-fraction", "0.1",
       "--startup", "3", "--checkpoint", "c.ckpt", "--checkpoint-interval", "0.5", "--speed",
       "a100=3", "--speed", "v100=2.5", "--nodes", "2", "--gpus-per-node", "4",
       "--dataset-size", "1000"});
  EXPECT_EQ(options.profiles, "/p");
  EXPECT_EQ(options.time_scale, 100);
  EXPECT_EQ(options.target_fraction, 0.1);
  EXPECT_EQ(options.startup_s, 3);
  EXPECT_EQ(options.checkpoint, "c.ckpt");
  EXPECT_EQ(options.checkpoint_interval_s, 0.5);
  EXPECT_EQ(options.speeds, (std::map<std::string, double>{{"a100", 3}, {"v100", 2.5}}));
  EXPECT_EQ(options.nodes, 2);
  EXPECT_EQ(options.gpus_per_node, 4);
  EXPECT_EQ(options.dataset_size, 1000);
}

TEST(Options, EpochsSetTheLengthAndDeclareIt) {
  const Options epochs = parsed({"--app", "bert", "--epochs", "2.5"});
  EXPECT_EQ(epochs.epochs, 2.5);
  EXPECT_TRUE(epochs.declare);
  const Options declared = parsed({"--app", "bert", "--declare"});
  EXPECT_EQ(declared.epochs, 0);
  EXPECT_TRUE(declared.declare);
  EXPECT_FALSE(parsed({"--app", "bert"}).declare);
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--app", "bert", "--epochs", "0"},
        std::vector<std::string>{"--app", "bert", "--epochs", "-3"},
        std::vector<std::string>{"--app", "bert", "--epochs", "nan"},
        std::vector<std::string>{"--app", "bert", "--epochs", "2e18"},
        std::vector<std::string>{"--app", "bert", "--epochs", "3", "--target-fraction", "0.5"},
        std::vector<std::string>{"--app", "bert", "--declare=yes"}}) {
    Options options;
    EXPECT_THROW(parse(bad, options), InvalidInput) << bad.back();
  }
}

TEST(Options, HelpIsNotARun) {
  Options options;
  EXPECT_FALSE(parse({"--help"}, options));
}

TEST(Options, BadValuesAreRefusedWithTheirOption) {
  const std::vector<std::vector<std::string>> bad = {
      {},
      {"--app", "bert", "--time-scale", "fast"},
      {"--app", "bert", "--time-scale", "0"},
      {"--app", "bert", "--target-fraction", "1.5"},
      {"--app", "bert", "--target-fraction", "0"},
      {"--app", "bert", "--startup", "-1"},
      {"--app", "bert", "--checkpoint-interval", "0"},
      {"--app", "bert", "--nodes", "1.5"},
      {"--app", "bert", "--gpus-per-node", "0"},
      {"--app", "bert", "--speed", "a100"},
      {"--app", "bert", "--speed", "a100=0"},
      {"--app", "bert", "--speed", "=2"},
      {"--app", "bert", "--dataset-size", "1e400"},
      {"--app", "bert", "--no-such-option"},
      {"--app", "bert", "--time-scale"},
      {"--app", "bert", "extra"}};
  for (const auto& arguments : bad) {
    Options options;
    std::string joined;
    for (const auto& argument : arguments) joined += argument + " ";
    EXPECT_THROW(parse(arguments, options), InvalidInput) << joined;
  }
}

}  // namespace
}  // namespace pollux::emulate
