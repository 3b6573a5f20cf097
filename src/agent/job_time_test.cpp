// SPDX-License-Identifier: GPL-2.0-or-later
#include "job_time.hpp"

#include <gtest/gtest.h>

namespace pollux::agent {
namespace {

TEST(JobTimeTest, SecondsLeftReadsSqueuesTimeLeft) {
  EXPECT_EQ(secondsLeft("0:45"), 45.0);
  EXPECT_EQ(secondsLeft("59:59"), 3599.0);
  EXPECT_EQ(secondsLeft("1:00:00"), 3600.0);
  EXPECT_EQ(secondsLeft("2-03:04:05"), 2 * 86400.0 + 3 * 3600 + 4 * 60 + 5);
}

TEST(JobTimeTest, SecondsLeftRefusesWhatIsNotATimeLeft) {
  for (const char* text : {"", "UNLIMITED", "NOT_SET", "INVALID", "45", "1:2:3:4", "-1:00",
                           "1-00:30", "1:x0", ":30", "1:", "1--1:00:00", "1-", "-5:00"}) {
    EXPECT_FALSE(secondsLeft(text)) << text;
  }
}

TEST(JobTimeTest, TheWatchAsksAtItsIntervalAndStaysDueOnceDue) {
  std::vector<std::string> answers = {"5:00", "1:30", "0:50", "UNLIMITED"};
  int asked = 0;
  TimeLimitWatch watch(60, [&] { return answers.at(asked++); }, std::chrono::seconds(10));
  const auto start = TimeLimitWatch::Clock::time_point{};
  EXPECT_FALSE(watch.due(start));
  EXPECT_FALSE(watch.due(start + std::chrono::seconds(5)));  // not asked again yet
  EXPECT_EQ(asked, 1);
  EXPECT_FALSE(watch.due(start + std::chrono::seconds(10)));  // 1:30 left
  EXPECT_TRUE(watch.due(start + std::chrono::seconds(20)));   // 0:50 left
  EXPECT_TRUE(watch.due(start + std::chrono::seconds(30)));   // stays due, not asked
  EXPECT_EQ(asked, 3);
}

TEST(JobTimeTest, AJobWithoutALimitIsNeverDue) {
  int asked = 0;
  TimeLimitWatch watch(60, [&] {
    ++asked;
    return std::string("UNLIMITED");
  });
  const auto start = TimeLimitWatch::Clock::time_point{};
  EXPECT_FALSE(watch.due(start));
  EXPECT_FALSE(watch.due(start + std::chrono::hours(1)));
  EXPECT_EQ(asked, 2);
}

}  // namespace
}  // namespace pollux::agent
