// SPDX-License-Identifier: GPL-2.0-or-later
#include "checkpoint.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/invalid_input.hpp"
#include "test_support.hpp"

namespace pollux::emulate {
namespace {

TEST(Checkpoint, RoundTripKeepsEveryCounterExactly) {
  const TempDir dir;
  const std::string path = dir.file("ckpt");
  EXPECT_FALSE(loadCheckpoint(path, "cifar10"));
  const TrainingState state{1234.56789012345, 987654321.0, 4242, false};
  saveCheckpoint(path, "cifar10", state);
  const auto loaded = loadCheckpoint(path, "cifar10");
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->progress, state.progress);
  EXPECT_EQ(loaded->examples, state.examples);
  EXPECT_EQ(loaded->steps, state.steps);
  EXPECT_FALSE(loaded->done);
  saveCheckpoint(path, "cifar10", TrainingState{1, 2, 3, true});
  EXPECT_TRUE(loadCheckpoint(path, "cifar10")->done);
  // Written through a temporary file renamed over the old one: nothing else is left behind.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.file("")),
                          std::filesystem::directory_iterator()),
            1);
}

TEST(Checkpoint, CorruptOrForeignCheckpointsAreErrors) {
  const TempDir dir;
  const std::string path = dir.file("ckpt");
  saveCheckpoint(path, "bert", TrainingState{});
  EXPECT_THROW(loadCheckpoint(path, "cifar10"), InvalidInput);
  for (const char* corrupt :
       {"", "{", "[]", R"({"app": "cifar10"})",
        R"({"app": "cifar10", "progress": -1, "examples": 0, "steps": 0, "done": false})",
        R"({"app": "cifar10", "progress": 1, "examples": 0, "steps": 0, "done": 0})",
        R"({"app": "cifar10", "progress": 1, "examples": 0, "steps": 0, "done": false,
            "extra": 1})"}) {
    std::ofstream(path) << corrupt;
    EXPECT_THROW(loadCheckpoint(path, "cifar10"), InvalidInput) << corrupt;
  }
}

}  // namespace
}  // namespace pollux::emulate
