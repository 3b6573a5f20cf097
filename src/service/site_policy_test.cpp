// SPDX-License-Identifier: GPL-2.0-or-later
#include "site_policy.hpp"

#include <gtest/gtest.h>

namespace pollux::service {
namespace {

SlurmNode gpuNode(const std::string& name, std::vector<std::string> features = {}) {
  SlurmNode node;
  node.name = name;
  node.gpus = GpuGres{"a100", 4};
  node.features = std::move(features);
  return node;
}

SlurmJob pendingJob() {
  SlurmJob job;
  job.id = 7;
  job.state = JobState::kPending;
  job.partitions = {"gpu"};
  return job;
}

const std::vector<std::string> kNoNodes;

TEST(FeaturesMatch, AndOrBracketsCountsAndNegation) {
  const std::vector<std::string> ib = {"ib", "nvlink"};
  EXPECT_TRUE(featuresMatch("", {}));
  EXPECT_TRUE(featuresMatch("ib", ib));
  EXPECT_FALSE(featuresMatch("ib", {"nvlink"}));
  EXPECT_TRUE(featuresMatch("ib&nvlink", ib));
  EXPECT_FALSE(featuresMatch("ib&hbm", ib));
  EXPECT_TRUE(featuresMatch("hbm|ib", ib));
  EXPECT_TRUE(featuresMatch("[hbm|ib]", ib));
  EXPECT_TRUE(featuresMatch("(hbm|ib)&nvlink", ib));
  EXPECT_FALSE(featuresMatch("(hbm|ib)&opa", ib));
  EXPECT_TRUE(featuresMatch("ib*2", ib));
  EXPECT_TRUE(featuresMatch("!hbm", ib));
  EXPECT_FALSE(featuresMatch("!ib", ib));
  // & binds tighter than |: hbm | (ib & nvlink).
  EXPECT_TRUE(featuresMatch("hbm|ib&nvlink", ib));
  // Not understood: left to Slurm, whose Reason then says.
  EXPECT_TRUE(featuresMatch("ib&(", {}));
}

TEST(WhyCannotStart, HoldsDependenciesAndBeginTimes) {
  SlurmJob job = pendingJob();
  EXPECT_EQ(whyCannotStart(job, 100, 0), "");
  job.held = true;
  job.state_reason = "JobHeldUser";
  EXPECT_EQ(whyCannotStart(job, 100, 0), "JobHeldUser");
  job.state_reason = "BadConstraints";  // Slurm's hold of Pollux's placement: Pollux's to undo
  EXPECT_EQ(whyCannotStart(job, 100, 0), "");
  job.held = false;
  job.dependency = "afterok:6(unfulfilled)";
  EXPECT_EQ(whyCannotStart(job, 100, 0), "Dependency");
  job.dependency.clear();
  EXPECT_EQ(whyCannotStart(job, 100, 150), "BeginTime");
  EXPECT_EQ(whyCannotStart(job, 200, 150), "");
}

TEST(PolluxHold, IsTheBeginTimeFrom2100) {
  SlurmJob job = pendingJob();
  job.eligible_time = kPolluxHoldTime;
  EXPECT_TRUE(heldByPollux(job));
  job.eligible_time = kPolluxHoldTime - 1;
  EXPECT_FALSE(heldByPollux(job));
}

TEST(RefusesPlacement, LimitsAndConstraintsButNotBusyNodes) {
  for (const char* reason : {"QOSMaxGRESPerUser", "AssocGrpGRES", "AssocMaxJobsLimit",
                             "PartitionNodeLimit", "Licenses", "Reservation", "BadConstraints",
                             "Dependency", "JobHeldUser"}) {
    EXPECT_TRUE(refusesPlacement(reason)) << reason;
  }
  for (const char* reason :
       {"Resources", "Priority", "None", "BeginTime", "ReqNodeNotAvail", "NodeDown", ""}) {
    EXPECT_FALSE(refusesPlacement(reason)) << reason;
  }
  EXPECT_TRUE(refusalDependsOnSize("QOSMaxGRESPerUser"));
  EXPECT_TRUE(refusalDependsOnSize("AssocGrpGRES"));
  EXPECT_TRUE(refusalDependsOnSize("PartitionNodeLimit"));
  EXPECT_FALSE(refusalDependsOnSize("AssocMaxJobsLimit"));
  EXPECT_FALSE(refusalDependsOnSize("Licenses"));
}

class AllowedNodes : public ::testing::Test {
 protected:
  std::optional<policy::NodeSet> allowed(const SlurmJob& job, double until = 1e12,
                                         const std::vector<std::string>& user_nodes = kNoNodes) {
    return allowedNodes(NodeRules{job, job.partitions, user_nodes, until}, now, nodes, partitions,
                        reservations);
  }

  double now = 1000;
  std::vector<SlurmNode> nodes = {gpuNode("n1"), gpuNode("n2"), gpuNode("n3", {"ib"}),
                                  gpuNode("n4", {"ib"})};
  std::map<std::string, policy::NodeSet> partitions = {{"gpu", {"n1", "n2", "n3", "n4"}},
                                                       {"small", {"n1", "n2"}}};
  std::vector<SlurmReservation> reservations;
};

TEST_F(AllowedNodes, NoRuleRestrictsNothing) { EXPECT_FALSE(allowed(pendingJob())); }

TEST_F(AllowedNodes, PartitionsConstraintExcludeAndNodeList) {
  SlurmJob job = pendingJob();
  job.partitions = {"small"};
  EXPECT_EQ(allowed(job), (policy::NodeSet{"n1", "n2"}));
  job.partitions = {"gpu"};
  job.features = "ib";
  EXPECT_EQ(allowed(job), (policy::NodeSet{"n3", "n4"}));
  job.excluded_nodes = {"n3"};
  EXPECT_EQ(allowed(job), (policy::NodeSet{"n4"}));
  job.features.clear();
  job.excluded_nodes.clear();
  EXPECT_EQ(allowed(job, 1e12, {"n4"}), (policy::NodeSet{"n4"}));
}

TEST_F(AllowedNodes, ReservationsActiveAheadAndOwn) {
  reservations = {{"maint", {"n1"}, now - 10, now + 600, true, ""},
                  {"later", {"n2"}, now + 3600, now + 7200, true, ""},
                  {"rv", {"n3"}, now - 10, now + 600, false, ""},
                  {"future_rv", {"n4"}, now + 100, now + 600, false, ""}};
  SlurmJob job = pendingJob();
  // No time limit: every node reserved now or later is out.
  EXPECT_EQ(allowed(job), policy::NodeSet{});
  // A job that ends before the reservations ahead may use their nodes.
  EXPECT_EQ(allowed(job, now + 60), (policy::NodeSet{"n2", "n4"}));
  EXPECT_EQ(allowed(job, now + 200), policy::NodeSet{"n2"});
  job.reservation = "rv";
  EXPECT_EQ(allowed(job, now + 60), (policy::NodeSet{"n3"}));
  // A reservation that has not started yet has no nodes for its jobs now.
  job.reservation = "future_rv";
  EXPECT_EQ(allowed(job, now + 60), policy::NodeSet{});
}

TEST(PartitionsWithinMaxTime, APendingJobKeepsThePartitionsItsTimeLimitFits) {
  const std::map<std::string, int> max_time = {{"short", 30}, {"debug", 10}};
  SlurmJob job = pendingJob();
  job.partitions = {"short", "debug", "gpu"};
  job.time_limit_min = 30;
  EXPECT_EQ(partitionsWithinMaxTime(job, max_time), (std::vector<std::string>{"short", "gpu"}));
  job.partitions = {"debug"};
  EXPECT_TRUE(partitionsWithinMaxTime(job, max_time).empty());
  job.time_limit_min = 0;  // no --time: Slurm gives it the partition's limit
  EXPECT_EQ(partitionsWithinMaxTime(job, max_time), job.partitions);
  job.time_limit_min = 30;
  job.state = JobState::kRunning;
  EXPECT_EQ(partitionsWithinMaxTime(job, max_time), job.partitions);
}

SlurmJob licensedJob(const std::string& licenses) {
  SlurmJob job = pendingJob();
  job.licenses = licenses;
  return job;
}

TEST(LicensePool, JobsTakeFreeLicensesUntilNoneAreLeft) {
  LicensePool pool({{"matlab", 2, 0}, {"fluent", 1, 0}}, {}, 0);
  EXPECT_TRUE(pool.take(licensedJob("")));
  EXPECT_TRUE(pool.take(licensedJob("matlab:1,fluent:1")));
  EXPECT_FALSE(pool.take(licensedJob("matlab:1,fluent:1")));  // fluent is gone; takes nothing
  EXPECT_TRUE(pool.take(licensedJob("matlab")));              // a name alone is one
  EXPECT_FALSE(pool.take(licensedJob("matlab*1")));
}

TEST(LicensePool, AnyOneOfAlternativesAndCountForms) {
  LicensePool pool({{"a", 0, 0}, {"b", 3, 0}}, {}, 0);
  EXPECT_FALSE(pool.take(licensedJob("b:4")));
  EXPECT_TRUE(pool.take(licensedJob("a:1|b:2")));  // takes b
  EXPECT_FALSE(pool.take(licensedJob("a:1|b:2")));
  EXPECT_TRUE(pool.take(licensedJob("b*1;a:0")));
  EXPECT_FALSE(pool.take(licensedJob("b:1")));
}

TEST(LicensePool, ReservedLicensesAreForTheirReservationsJobs) {
  LicensePool pool({{"matlab", 2, 1}}, {}, 0);
  EXPECT_FALSE(pool.take(licensedJob("matlab:2")));
  SlurmJob reserved = licensedJob("matlab:2");
  reserved.reservation = "rv";
  EXPECT_TRUE(pool.take(reserved));
}

// A reservation starting in 10 minutes holds 1 of 2: a job whose time limit ends before then
// may take both, one running into it (or without a limit) only the other.
TEST(LicensePool, ReservationsAheadHoldTheirLicensesFromTheirStart) {
  SlurmReservation ahead;
  ahead.name = "maint";
  ahead.start_time = 1000 + 600;
  ahead.end_time = 1000 + 3600;
  ahead.licenses = "matlab:1";
  SlurmJob short_job = licensedJob("matlab:2");
  short_job.time_limit_min = 5;
  EXPECT_TRUE(LicensePool({{"matlab", 2, 0}}, {ahead}, 1000).take(short_job));
  SlurmJob long_job = licensedJob("matlab:2");
  long_job.time_limit_min = 30;
  EXPECT_FALSE(LicensePool({{"matlab", 2, 0}}, {ahead}, 1000).take(long_job));
  EXPECT_FALSE(LicensePool({{"matlab", 2, 0}}, {ahead}, 1000).take(licensedJob("matlab:2")));
  EXPECT_TRUE(LicensePool({{"matlab", 2, 0}}, {ahead}, 1000).take(licensedJob("matlab:1")));
  // Active already: Slurm counts it in `reserved`, not twice here.
  EXPECT_TRUE(LicensePool({{"matlab", 2, 1}}, {ahead}, 2000).take(licensedJob("matlab:1")));
}

TEST(LicensePool, LicensesSlurmDidNotListAreLeftToSlurm) {
  LicensePool pool({}, {}, 0);
  EXPECT_TRUE(pool.take(licensedJob("remote@db:5")));
}

}  // namespace
}  // namespace pollux::service
