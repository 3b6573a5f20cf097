// SPDX-License-Identifier: GPL-2.0-or-later
#include "step_schedule.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace pollux::emulate {
namespace {

TEST(StepSchedule, AStepLastsItsProfileTimeOverTheTimeScale) {
  StepSchedule schedule(100, 10);
  EXPECT_DOUBLE_EQ(schedule.wallSeconds(0.5), 0.005);
  EXPECT_DOUBLE_EQ(schedule.next(0.5, 10), 10.005);
  EXPECT_DOUBLE_EQ(StepSchedule(0.5, 0).wallSeconds(1), 2);
  EXPECT_THROW(StepSchedule(0, 0), std::invalid_argument);
}

TEST(StepSchedule, DeadlinesFollowEachOtherNotTheWakeUps) {
  StepSchedule schedule(1000, 0);
  double deadline = 0;
  for (int step = 0; step < 1000; ++step) {
    const double woke_up = deadline + 1e-4;  // every sleep overshoots by 0.1 ms
    deadline = schedule.next(0.5, woke_up);
  }
  EXPECT_NEAR(deadline, 1000 * 0.5 / 1000, 1e-9);
}

TEST(StepSchedule, ALongStallIsNotCaughtUp) {
  StepSchedule schedule(1, 0);
  EXPECT_DOUBLE_EQ(schedule.next(1, 0), 1);
  EXPECT_DOUBLE_EQ(schedule.next(1, 60), 60 - StepSchedule::kMaxLag + 1);
}

// Real sleeps end no earlier than their deadline (how much later depends on the host's load,
// which DeadlinesFollowEachOtherNotTheWakeUps shows does not accumulate).
TEST(StepSchedule, ASleepEndsNoEarlierThanItsDeadline) {
  const double start = monotonicNow();
  StepSchedule schedule(1, start);
  double deadline = start;
  for (int step = 0; step < 200; ++step) {
    deadline = schedule.next(1e-4, monotonicNow());
    sleepUntil(deadline);
    ASSERT_GE(monotonicNow(), deadline) << "step " << step;
  }
  EXPECT_GE(monotonicNow() - start, 200 * 1e-4);
}

}  // namespace
}  // namespace pollux::emulate
