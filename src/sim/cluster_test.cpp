// SPDX-License-Identifier: GPL-2.0-or-later
#include "cluster.hpp"

#include <gtest/gtest.h>

namespace pollux::sim {
namespace {

TEST(ClusterTest, ParsesSeveralTypesInOrder) {
  const Cluster cluster = Cluster::parse("t4:2x4,rtx:1x8");
  ASSERT_EQ(cluster.nodes().size(), 3u);
  EXPECT_EQ(cluster.nodes()[0].name, "t4-0");
  EXPECT_EQ(cluster.nodes()[2].name, "rtx-0");
  EXPECT_EQ(cluster.node("rtx-0").gpus, 8);
  EXPECT_EQ(cluster.gpuTypes(), (std::vector<std::string>{"t4", "rtx"}));
  EXPECT_EQ(cluster.totalGpus(), 16);
  EXPECT_EQ(cluster.gpusOfType("t4"), 8);
  EXPECT_EQ(Cluster::parse("dgx-ext:2x8").gpusOfType("dgx-ext"), 16);
}

TEST(ClusterTest, RejectsBadSpecs) {
  for (const char* spec : {"", "t4", "t4:4", "t4:0x4", "t4:2x0", "t4:2x10", ":2x4", "t4:2x4,",
                           "t4:2x4,t4:1x4", "t4:ax4", "t4:2x4x"}) {
    EXPECT_THROW(Cluster::parse(spec), std::invalid_argument) << spec;
  }
}

}  // namespace
}  // namespace pollux::sim
