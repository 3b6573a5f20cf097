#include "slurm_view.hpp"

#include <gtest/gtest.h>

namespace pollux::service {
namespace {

TEST(GpuGresTest, ReadsTheFormsSlurmPrints) {
  const std::vector<std::tuple<std::string, std::string, int>> cases = {
      {"gpu:a100:4", "a100", 4},
      {"gpu:a100:4(S:0-1)", "a100", 4},
      {"gres:gpu:v100:2", "v100", 2},
      {"gres/gpu:a100=3", "a100", 3},
      {"gpu:2", "", 2},
      {"mps:100,gpu:a100:8(S:0,1)", "a100", 8},
      {"gres:mps:10;gres:gpu:v100:1", "v100", 1},
  };
  for (const auto& [text, type, count] : cases) {
    const auto gpus = parseGpuGres(text);
    ASSERT_TRUE(gpus.has_value()) << text;
    EXPECT_EQ(gpus->type, type) << text;
    EXPECT_EQ(gpus->count, count) << text;
  }
}

TEST(GpuGresTest, NoGpuEntry) {
  for (const char* text : {"", "(null)", "mps:100", "gpu", "gpu:a100:", "gpu:a100:x", "gpus:2"}) {
    EXPECT_FALSE(parseGpuGres(text).has_value()) << text;
  }
}

TEST(NodeListTest, SplitsAndSkipsEmptyNames) {
  EXPECT_EQ(splitNodeList("n1,n2"), (std::vector<std::string>{"n1", "n2"}));
  EXPECT_TRUE(splitNodeList("").empty());
  EXPECT_EQ(splitNodeList("n1,,n3,"), (std::vector<std::string>{"n1", "n3"}));
}

}  // namespace
}  // namespace pollux::service
