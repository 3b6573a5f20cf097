// SPDX-License-Identifier: GPL-2.0-or-later
#include "options.hpp"

#include <gtest/gtest.h>

#include <initializer_list>

#include "common/invalid_input.hpp"

namespace pollux::agent {
namespace {

ParseOutcome parse(std::initializer_list<const char*> arguments, Options& options) {
  std::vector<char*> argv{const_cast<char*>("pollux-agent")};
  for (const char* argument : arguments) argv.push_back(const_cast<char*>(argument));
  return parseOptions(static_cast<int>(argv.size()), argv.data(), options);
}

TEST(Options, ValuesBothFormsAndTheCommandAfterTheSeparator) {
  Options options;
  EXPECT_EQ(parse({"--report-interval", "5", "--grace=10", "--gpu-type", "a100", "-v", "--",
                   "python3", "train.py", "--lr", "0.1"},
                  options),
            ParseOutcome::kRun);
  EXPECT_EQ(options.report_interval_s, 5);
  EXPECT_EQ(options.grace_s, 10);
  EXPECT_EQ(options.gpu_type, "a100");
  EXPECT_TRUE(options.verbose);
  EXPECT_EQ(options.command, (std::vector<std::string>{"python3", "train.py", "--lr", "0.1"}));
}

TEST(Options, LaunchKeepsTheOtherOptionsForTheStepsAgents) {
  Options options;
  parse({"--grace", "10", "--launch", "-v", "--state=s.json", "--", "train", "--launch"}, options);
  EXPECT_TRUE(options.launch);
  EXPECT_EQ(options.agent_arguments,
            (std::vector<std::string>{"--grace", "10", "-v", "--state=s.json"}));
  EXPECT_EQ(options.command, (std::vector<std::string>{"train", "--launch"}));
}

TEST(Options, WorkersPerNodeAutoOrACount) {
  Options options;
  parse({"--", "train"}, options);
  EXPECT_EQ(options.nproc_per_node, 0);  // auto
  parse({"--nproc-per-node", "4", "--", "train"}, options);
  EXPECT_EQ(options.nproc_per_node, 4);
  parse({"--nproc-per-node=auto", "--", "train"}, options);
  EXPECT_EQ(options.nproc_per_node, 0);
  EXPECT_THROW(parse({"--nproc-per-node", "0", "--", "x"}, options), InvalidInput);
  EXPECT_THROW(parse({"--nproc-per-node", "all", "--", "x"}, options), InvalidInput);
}

TEST(Options, HelpAndMistakes) {
  Options options;
  EXPECT_EQ(parse({"--help"}, options), ParseOutcome::kHelp);
  EXPECT_THROW(parse({"--", }, options), InvalidInput);                   // no command
  EXPECT_THROW(parse({"--report-interval", "0.5", "--", "x"}, options), InvalidInput);
  EXPECT_THROW(parse({"--grace", "soon", "--", "x"}, options), InvalidInput);
  EXPECT_THROW(parse({"--replicas", "0", "--", "x"}, options), InvalidInput);
  EXPECT_THROW(parse({"--bogus", "--", "x"}, options), InvalidInput);
  EXPECT_THROW(parse({"train.py"}, options), InvalidInput);               // command without --
  EXPECT_THROW(parse({"--state"}, options), InvalidInput);                // value missing
}

}  // namespace
}  // namespace pollux::agent
