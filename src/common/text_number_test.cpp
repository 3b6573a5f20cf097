// SPDX-License-Identifier: GPL-2.0-or-later
#include "text_number.hpp"

#include <gtest/gtest.h>

namespace pollux {
namespace {

TEST(TextNumber, FiniteDecimalNumbersOnly) {
  EXPECT_EQ(parseFiniteNumber("12"), 12.0);
  EXPECT_EQ(parseFiniteNumber("-0.5"), -0.5);
  EXPECT_EQ(parseFiniteNumber("1e3"), 1000.0);
  for (const char* bad : {"", " 5", "5 ", "5s", "0x10", "inf", "nan", "1e999", "--1", "."}) {
    EXPECT_FALSE(parseFiniteNumber(bad)) << bad;
  }
}

TEST(TextNumber, IntegersWithinTheirRange) {
  EXPECT_EQ(parseInteger("42", 0, 100), 42L);
  EXPECT_EQ(parseInteger("-3", -5, 5), -3L);
  for (const char* bad : {"", "1.5", "1e2", " 7", "7 ", "101", "-6", "99999999999999999999"}) {
    EXPECT_FALSE(parseInteger(bad, -5, 100)) << bad;
  }
}

}  // namespace
}  // namespace pollux
