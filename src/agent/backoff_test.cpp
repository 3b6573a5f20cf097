// SPDX-License-Identifier: GPL-2.0-or-later
#include "backoff.hpp"

#include <gtest/gtest.h>

namespace pollux::agent {
namespace {

TEST(Backoff, DoublesWithJitterUpToTheCap) {
  Backoff backoff(1, 60, 7);
  const double expected_base[] = {1, 2, 4, 8, 16, 32, 60, 60, 60};
  for (const double base : expected_base) {
    const double delay = backoff.nextDelay();
    EXPECT_GE(delay, base / 2);
    EXPECT_LE(delay, base);
  }
  backoff.reset();
  EXPECT_LE(backoff.nextDelay(), 1.0);
}

TEST(Backoff, AgentsWithOtherSeedsSpreadOut) {
  Backoff first(1, 60, 1), second(1, 60, 2);
  for (int i = 0; i < 5; ++i) first.nextDelay(), second.nextDelay();
  EXPECT_NE(first.nextDelay(), second.nextDelay());
}

}  // namespace
}  // namespace pollux::agent
