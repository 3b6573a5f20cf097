#include "checkpoint.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "invalid_input.hpp"

namespace pollux::emulate {
namespace {

std::string tempPath(const char* name) {
  return (std::filesystem::temp_directory_path() / name).string();
}

TEST(Checkpoint, RoundTripKeepsEveryCounterExactly) {
  const std::string path = tempPath("pollux-emulate-ckpt-test");
  const TrainingState state{1234.56789012345, 987654321.0, 4242, false};
  saveCheckpoint(path, "cifar10", state);
  const auto loaded = loadCheckpoint(path, "cifar10");
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->progress, state.progress);
  EXPECT_EQ(loaded->examples, state.examples);
  EXPECT_EQ(loaded->steps, state.steps);
  EXPECT_FALSE(loaded->done);
  std::filesystem::remove(path);
  EXPECT_FALSE(loadCheckpoint(path, "cifar10"));
}

TEST(Checkpoint, CorruptOrForeignCheckpointsAreErrors) {
  const std::string path = tempPath("pollux-emulate-ckpt-bad");
  saveCheckpoint(path, "bert", TrainingState{});
  EXPECT_THROW(loadCheckpoint(path, "cifar10"), InvalidInput);
  for (const char* corrupt : {"", "{", "[]", R"({"app": "cifar10"})",
                              R"({"app": "cifar10", "progress": -1, "examples": 0, "steps": 0, "done": false})"}) {
    std::ofstream(path) << corrupt;
    EXPECT_THROW(loadCheckpoint(path, "cifar10"), InvalidInput) << corrupt;
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace pollux::emulate
