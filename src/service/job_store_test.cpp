#include "job_store.hpp"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "common/invalid_input.hpp"
#include "io/state_file.hpp"

namespace pollux::service {
namespace {

schema::GoodputReport sampleReport(const std::string& id) {
  schema::GoodputReport report;
  report.job_id = id;
  report.gpu_type = "a100";
  report.placement = {1, 2};
  report.perf_params["a100"] = {0.01, 0.001, 0.1, 0.01, 0.05, 0.005, 1.5};
  report.grad = {1.0, 3.0};
  report.limits = {64, 1024, 16, 128, true};
  report.progress = {1000, 0.5};
  report.restart_cost_s = 30;
  return report;
}

SlurmJob slurmJob(uint32_t id, uint32_t uid, bool adaptive, JobState state = JobState::kRunning) {
  SlurmJob job;
  job.id = id;
  job.uid = uid;
  job.state = state;
  if (adaptive) job.adaptive = schema::AdaptiveRequest{};
  return job;
}

TEST(JobStoreTest, LookupFollowsWhatSlurmReports) {
  JobStore store;
  store.syncWithSlurm({slurmJob(1, 1000, true), slurmJob(2, 1001, false)});
  uint32_t owner = 0;
  EXPECT_EQ(store.lookup("1", &owner), JobLookup::kFound);
  EXPECT_EQ(owner, 1000u);
  EXPECT_EQ(store.lookup("2", &owner), JobLookup::kNotAdaptive);
  EXPECT_EQ(store.lookup("3", &owner), JobLookup::kUnknown);
}

TEST(JobStoreTest, VanishedAndFinishedJobsAreDropped) {
  JobStore store;
  store.syncWithSlurm({slurmJob(1, 1000, true), slurmJob(2, 1000, true)});
  store.acceptReport(sampleReport("1"));
  store.syncWithSlurm({slurmJob(1, 1000, true), slurmJob(2, 1000, true, JobState::kOther)});
  EXPECT_EQ(store.lookup("2", nullptr), JobLookup::kUnknown);
  EXPECT_TRUE(store.records().at("1").report.has_value());  // kept across rounds
}

TEST(JobStoreTest, AReportForAJobThatJustEndedLeavesNoRecord) {
  JobStore store;
  store.syncWithSlurm({slurmJob(1, 1000, true)});
  store.syncWithSlurm({});  // the job ended between the handler's lookup and its report
  store.acceptReport(sampleReport("1"));
  EXPECT_TRUE(store.records().empty());
}

TEST(JobStoreTest, ReplyCarriesTheDecisionAndAdaScaleGain) {
  JobStore store;
  store.syncWithSlurm({slurmJob(1, 1000, true)});
  schema::ReportReply reply = store.acceptReport(sampleReport("1"));
  EXPECT_EQ(reply.batch_size, 64);  // no decision yet: the initial batch size
  EXPECT_EQ(reply.local_bsz, 32);   // over the 2 replicas it runs on
  EXPECT_DOUBLE_EQ(reply.lr_scale, 1.0);
  store.recordDecision("1", policy::JobDecision{{"a100", {{"n1", 4}}}, 256, 64, 0, std::nullopt});
  reply = store.acceptReport(sampleReport("1"));
  EXPECT_EQ(reply.batch_size, 256);
  EXPECT_EQ(reply.local_bsz, 64);
  EXPECT_NEAR(reply.lr_scale, 16.0 / 7.0, 1e-12);  // gain at r = 4 with sqr 1, var 3
  ASSERT_TRUE(reply.allocation.has_value());
  EXPECT_EQ(reply.allocation->nodes.at("n1"), 4);
}

TEST(JobStoreTest, ActionsCountRestartsAndChanges) {
  JobStore store;
  store.syncWithSlurm({slurmJob(1, 1000, true)});
  store.recordAction("1", "placed", true, false, 100);
  store.recordAction("1", "resize", true, true, 200);
  store.recordAction("1", "requeue failed", false, false, 300);
  const JobRecord record = store.records().at("1");
  EXPECT_EQ(record.restarts, 1);
  EXPECT_DOUBLE_EQ(record.last_change_time, 200);
  EXPECT_EQ(record.status, "requeue failed");
}

// A job that ends FAILED while Pollux's requeue of it is in flight keeps its record (to be
// requeued again); one that ends otherwise does not.
TEST(JobStoreTest, ARequeueInFlightKeepsAFailedJob) {
  JobStore store;
  store.syncWithSlurm({slurmJob(1, 1000, true), slurmJob(2, 1000, true)});
  store.acceptReport(sampleReport("1"));
  store.recordRequeue("1", 500.7);
  store.recordRequeue("2", 500.7);
  SlurmJob failed = slurmJob(1, 1000, true, JobState::kOther);
  failed.failed = true;
  SlurmJob completed = slurmJob(2, 1000, true, JobState::kOther);
  store.syncWithSlurm({failed, completed});
  ASSERT_EQ(store.records().count("1"), 1u);
  EXPECT_TRUE(store.records().at("1").report.has_value());
  EXPECT_EQ(store.records().count("2"), 0u);
  store.recordRequeue("1", 520);  // the repeat
  EXPECT_TRUE(store.records().at("1").requeue_repeated);
  store.syncWithSlurm({failed});  // failed again: left to its user
  EXPECT_EQ(store.records().count("1"), 0u);
}

// The requeue ends once the job's next run has lasted kRunAfterRequeueS; the run it stopped,
// still shown by a restarted slurmctld whose state predates the requeue, does not end it.
TEST(JobStoreTest, ARequeueEndsWhenTheNextRunHasLasted) {
  JobStore store;
  SlurmJob running = slurmJob(1, 1000, true);
  running.start_time = 400;
  store.syncWithSlurm({running});
  store.recordRequeue("1", 500.7);
  store.recordRequeue("1", 501);
  store.endRequeues({running}, 600);
  EXPECT_DOUBLE_EQ(store.records().at("1").requeued_time, 501);
  running.start_time = 501;
  store.endRequeues({running}, 501 + kRunAfterRequeueS - 1);
  EXPECT_DOUBLE_EQ(store.records().at("1").requeued_time, 501);
  store.endRequeues({running}, 501 + kRunAfterRequeueS);
  EXPECT_DOUBLE_EQ(store.records().at("1").requeued_time, 0);
  EXPECT_FALSE(store.records().at("1").requeue_repeated);
}

TEST(JobStoreTest, OneShrinkInPlaceARunWhichTheReplyAnnounces) {
  JobStore store;
  store.syncWithSlurm({slurmJob(1, 1000, true)});
  store.recordDecision("1", policy::JobDecision{{"a100", {{"n1", 4}}}, 256, 64, 0, std::nullopt});
  EXPECT_FALSE(store.acceptReport(sampleReport("1")).shrink_in_place);
  store.startShrink("1", {"a100", {{"n1", 4}}}, 500);
  EXPECT_TRUE(store.acceptReport(sampleReport("1")).shrink_in_place);
  EXPECT_TRUE(store.records().at("1").shrunk_in_place);
  store.endShrink("1", false);
  EXPECT_FALSE(store.acceptReport(sampleReport("1")).shrink_in_place);
  EXPECT_FALSE(store.records().at("1").in_place_failed);
  store.syncWithSlurm({slurmJob(1, 1000, true)});
  EXPECT_TRUE(store.records().at("1").shrunk_in_place);  // still the same run
  store.syncWithSlurm({slurmJob(1, 1000, true, JobState::kPending)});
  EXPECT_FALSE(store.records().at("1").shrunk_in_place);  // requeued: a new run
  store.startShrink("1", {"a100", {{"n1", 4}}}, 600);
  store.endShrink("1", true);
  EXPECT_TRUE(store.records().at("1").in_place_failed);
}

TEST(JobStoreTest, StateSurvivesSaveAndRestore) {
  JobStore store;
  store.syncWithSlurm({slurmJob(1, 1000, true), slurmJob(2, 1001, false)});
  store.acceptReport(sampleReport("1"));
  store.recordAction("1", "resize 1xa100 -> 4xa100", true, true, 500);
  store.startShrink("1", {"a100", {{"n1", 4}}}, 500);
  store.recordRequeue("1", 510);
  store.recordRequeue("1", 520);
  char dir[] = "/tmp/pollux-state-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/pollux_state.json";
  io::saveState(path, store.toJson());

  JobStore restored;
  restored.restore(*io::loadState(path));
  const auto records = restored.records();
  ASSERT_EQ(records.size(), 2u);
  const JobRecord& job = records.at("1");
  EXPECT_EQ(job.owner_uid, 1000u);
  EXPECT_EQ(job.restarts, 1);
  EXPECT_DOUBLE_EQ(job.last_change_time, 500);
  EXPECT_EQ(job.status, "resize 1xa100 -> 4xa100");
  ASSERT_TRUE(job.report.has_value());
  EXPECT_DOUBLE_EQ(job.report->perf_params.at("a100").gamma, 1.5);
  EXPECT_DOUBLE_EQ(*job.report->restart_cost_s, 30);
  EXPECT_TRUE(job.shrunk_in_place);  // a second update would crash slurmctld 26.05.3
  ASSERT_TRUE(job.shrink.has_value());  // a restarted slurmctld keeps waiting for the shrink
  EXPECT_EQ(job.shrink->target.nodes.at("n1"), 4);
  EXPECT_DOUBLE_EQ(job.shrink->requested_time, 500);
  EXPECT_FALSE(job.in_place_failed);
  EXPECT_DOUBLE_EQ(job.requeued_time, 520);  // a restart must not lose a requeue in flight
  EXPECT_TRUE(job.requeue_repeated);
  EXPECT_DOUBLE_EQ(records.at("2").requeued_time, 0);
  EXPECT_FALSE(records.at("2").adaptive);
  EXPECT_FALSE(records.at("2").shrunk_in_place);
  std::filesystem::remove_all(dir);
}

TEST(JobStoreTest, KeepsTheDeclaredLengthOfTheLatestReportAndTheRoundsEstimate) {
  JobStore store;
  store.syncWithSlurm({slurmJob(1, 1000, true)});
  schema::GoodputReport declared = sampleReport("1");
  declared.length = policy::DeclaredLength{1000, 50000};
  store.acceptReport(declared);
  ASSERT_TRUE(store.records().at("1").report->length.has_value());
  EXPECT_DOUBLE_EQ(store.records().at("1").report->length->target, 50000);
  store.recordDecision("1", policy::JobDecision{{"a100", {{"n1", 2}}}, 128, 64, 0, 1800.0});
  EXPECT_DOUBLE_EQ(*store.records().at("1").decision->remaining_s, 1800);
  store.syncWithSlurm({slurmJob(1, 1000, true)});  // kept across rounds
  EXPECT_DOUBLE_EQ(store.records().at("1").report->length->progress, 1000);
  store.acceptReport(sampleReport("1"));  // the trainer no longer declares: undeclared
  EXPECT_FALSE(store.records().at("1").report->length.has_value());
}

TEST(JobStoreTest, DeclaredLengthSurvivesSaveAndRestoreAndOldStateLoads) {
  JobStore store;
  store.syncWithSlurm({slurmJob(1, 1000, true), slurmJob(2, 1000, true)});
  schema::GoodputReport declared = sampleReport("1");
  declared.length = policy::DeclaredLength{1234.5, 50000};
  store.acceptReport(declared);
  store.acceptReport(sampleReport("2"));
  const Json::Value saved = store.toJson();
  EXPECT_TRUE(saved["1"]["report"].isMember("length"));
  EXPECT_FALSE(saved["2"]["report"].isMember("length"));  // as state files before the key

  JobStore restored;
  restored.restore(saved);
  const auto records = restored.records();
  ASSERT_TRUE(records.at("1").report->length.has_value());
  EXPECT_DOUBLE_EQ(records.at("1").report->length->progress, 1234.5);
  EXPECT_DOUBLE_EQ(records.at("1").report->length->target, 50000);
  ASSERT_TRUE(records.at("2").report.has_value());
  EXPECT_FALSE(records.at("2").report->length.has_value());

  Json::Value corrupt = saved;
  corrupt["1"]["report"]["length"]["target_progress"] = -1;
  EXPECT_THROW(restored.restore(corrupt), InvalidInput);
}

TEST(StateFileTest, MissingFileIsNoStateAndCorruptFileIsAnError) {
  char dir[] = "/tmp/pollux-state-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/pollux_state.json";
  EXPECT_FALSE(io::loadState(path).has_value());
  for (const char* corrupt : {"{\"version\": 1, \"jobs\": {", "[1, 2]", "\x01\x02garbage"}) {
    std::ofstream(path) << corrupt;
    EXPECT_THROW(io::loadState(path), InvalidInput) << corrupt;
  }
  std::filesystem::remove_all(dir);
}

TEST(StateFileTest, RestoreRejectsInconsistentRecordsAndKeepsNothing) {
  JobStore store;
  store.syncWithSlurm({slurmJob(1, 1000, true)});
  Json::Value bad = store.toJson();
  bad["1"]["restarts"] = -3;
  EXPECT_THROW(store.restore(bad), InvalidInput);
  EXPECT_EQ(store.records().size(), 1u);  // the store is unchanged by a failed restore
}

TEST(StateFileTest, SaveIntoAMissingDirectoryFailsClearly) {
  try {
    io::saveState("/nonexistent-dir/pollux_state.json", Json::Value(Json::objectValue));
    FAIL() << "saved into a missing directory";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("/nonexistent-dir/pollux_state.json.new"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace pollux::service
