// SPDX-License-Identifier: GPL-2.0-or-later
#include "gres.hpp"

#include <tuple>
#include <vector>

#include <gtest/gtest.h>

namespace pollux::schema {
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

TEST(GpuGresTest, CountsTheGpusSlurmPrintsAsAllocatedOrUsed) {
  const std::vector<std::pair<std::string, int>> cases = {
      {"gpu:a100:2(IDX:0-1)", 2},          // a node's GresUsed, typed GPUs with files
      {"gpu:(null):3(IDX:0-2)", 3},        // untyped GPUs with files
      {"gpu:a100:0(IDX:N/A)", 0},
      {"gpu:a100:1(IDX:0),gpu:v100:2(IDX:1-2)", 3},
      {"gpu:4", 4},                        // count-only GRES
      {"gpu:a100(CNT:2)", 2},              // a job's GRES detail without indexes
      {"gpu(CNT:1)", 1},
      {"mps:100(IDX:0),gpu:a100:1(IDX:0)", 1},
      {"", 0},
      {"(null)", 0},
  };
  for (const auto& [text, gpus] : cases) EXPECT_EQ(countGpus(text), gpus) << text;
}

}  // namespace
}  // namespace pollux::schema
