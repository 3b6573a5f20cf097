// SPDX-License-Identifier: GPL-2.0-or-later
#include "workload.hpp"

#include <gtest/gtest.h>

#include "testing/temp_file.hpp"

namespace pollux::trace {
namespace {

// The text in a file removed once the statement that reads it is done.
testing::TempFile writeTemp(const std::string& text) { return {"pollux-workload", text}; }

const std::string kHeader = "name,time,application,num_replicas,batch_size\n";

TEST(WorkloadTest, ReadsJobsSortedBySubmitTime) {
  const auto jobs = readWorkload(writeTemp(kHeader + "b,20,bert,2,24\na,10,cifar10,4,512\n"));
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].name, "a");
  EXPECT_EQ(jobs[0].application, "cifar10");
  EXPECT_EQ(jobs[0].num_replicas, 4);
  EXPECT_EQ(jobs[0].batch_size, 512);
  EXPECT_DOUBLE_EQ(jobs[1].submit_time, 20);
}

TEST(WorkloadTest, BadRowsNameTheLine) {
  for (const char* row : {"a,1,bert,0,24\n", "a,1,bert,2\n", "a,-1,bert,2,24\n",
                                 "a,x,bert,2,24\n", ",1,bert,2,24\n"}) {
    try {
      readWorkload(writeTemp(kHeader + row));
      FAIL() << "accepted " << row;
    } catch (const TraceError& error) {
      EXPECT_NE(std::string(error.what()).find(":2:"), std::string::npos) << error.what();
    }
  }
  EXPECT_THROW(readWorkload(writeTemp(kHeader + "a,1,bert,2,24\na,2,bert,2,24\n")), TraceError);
  EXPECT_THROW(readWorkload(writeTemp(kHeader)), TraceError);
  EXPECT_THROW(readWorkload("/nonexistent.csv"), TraceError);
}

}  // namespace
}  // namespace pollux::trace
