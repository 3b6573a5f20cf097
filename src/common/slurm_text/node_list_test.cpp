// SPDX-License-Identifier: GPL-2.0-or-later
#include "node_list.hpp"

#include <gtest/gtest.h>

namespace pollux {
namespace {

TEST(NodeListTest, NamesAreJoinedWithCommas) {
  EXPECT_EQ(commaJoined({"n1", "n2", "n3"}), "n1,n2,n3");
  EXPECT_EQ(commaJoined({"n1"}), "n1");
  EXPECT_EQ(commaJoined({}), "");
}

}  // namespace
}  // namespace pollux
