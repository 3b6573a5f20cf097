#include "status_text.hpp"

#include <gtest/gtest.h>

namespace pollux::client {
namespace {

Json::Value jobWithLength(double progress, double target, Json::Value remaining_s) {
  Json::Value job;
  job["job_id"] = "42";
  job["length"]["progress"] = progress;
  job["length"]["target_progress"] = target;
  job["length"]["remaining_s"] = remaining_s;
  return job;
}

TEST(StatusTextTest, LengthLineShowsProgressTargetAndRemainingTime) {
  EXPECT_EQ(lengthText(jobWithLength(25000, 100000, 5400)),
            "Progress=25000 TargetProgress=100000 (25.0 %) Remaining=01:30:00");
  EXPECT_EQ(lengthText(jobWithLength(25000, 100000, Json::Value())),
            "Progress=25000 TargetProgress=100000 (25.0 %) Remaining=unknown");
  EXPECT_EQ(lengthText(jobWithLength(1.5e6, 1.28e6, Json::Value())),
            "Progress=1.5e+06 TargetProgress=1.28e+06 (117.2 %) Remaining=unknown (target reached)");
  EXPECT_EQ(lengthText(jobWithLength(1, 3, 2 * 86400 + 3 * 3600 + 4 * 60 + 5.4)),
            "Progress=1 TargetProgress=3 (33.3 %) Remaining=2-03:04:05");
  Json::Value undeclared = jobWithLength(1, 3, 1);
  undeclared.removeMember("length");
  EXPECT_EQ(lengthText(undeclared), "");  // no line
  Json::Value malformed = jobWithLength(1, 3, 1);
  malformed["length"]["progress"] = "much";
  EXPECT_EQ(lengthText(malformed), "");
}

TEST(StatusTextTest, DurationsAsSlurmWritesThem) {
  EXPECT_EQ(durationText(0), "00:00:00");
  EXPECT_EQ(durationText(59.6), "00:01:00");
  EXPECT_EQ(durationText(3599), "00:59:59");
  EXPECT_EQ(durationText(86399), "23:59:59");
  EXPECT_EQ(durationText(86400), "1-00:00:00");
  EXPECT_EQ(durationText(-5), "00:00:00");
}

}  // namespace
}  // namespace pollux::client
