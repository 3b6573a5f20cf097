// SPDX-License-Identifier: GPL-2.0-or-later
#include "step_stop.hpp"

#include <gtest/gtest.h>

namespace pollux::agent {
namespace {

using std::chrono::seconds;

TEST(StepStopSignalTest, TheSignalIsSentAtOnceThenAtItsIntervalWithinTheWindow) {
  StepStopSignal signal(seconds(5), seconds(2));
  const auto start = StepStopSignal::Clock::time_point{} + seconds(100);
  EXPECT_TRUE(signal.due(start));
  EXPECT_FALSE(signal.due(start + seconds(1)));
  EXPECT_TRUE(signal.due(start + seconds(2)));
  EXPECT_FALSE(signal.due(start + seconds(3)));
  EXPECT_TRUE(signal.due(start + seconds(4)));
  EXPECT_TRUE(signal.open(start + seconds(4)));
  EXPECT_FALSE(signal.open(start + seconds(5)));
  EXPECT_FALSE(signal.due(start + seconds(6)));  // the window has closed
}

TEST(StepStopSignalTest, AWindowOfNothingSendsItOnce) {
  StepStopSignal signal(seconds(0));
  const auto start = StepStopSignal::Clock::time_point{};
  EXPECT_TRUE(signal.due(start));
  EXPECT_FALSE(signal.open(start));
  EXPECT_FALSE(signal.due(start + seconds(2)));
}

}  // namespace
}  // namespace pollux::agent
