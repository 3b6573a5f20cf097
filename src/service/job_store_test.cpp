// SPDX-License-Identifier: GPL-2.0-or-later
#include "job_store.hpp"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "common/invalid_input.hpp"
#include "common/schema/snapshot_json.hpp"
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
  store.observe({slurmJob(1, 1000, true), slurmJob(2, 1001, false)}, 0);
  uint32_t owner = 0;
  EXPECT_EQ(store.lookup("1", &owner), JobLookup::kFound);
  EXPECT_EQ(owner, 1000u);
  EXPECT_EQ(store.lookup("2", &owner), JobLookup::kNotAdaptive);
  EXPECT_EQ(store.lookup("3", &owner), JobLookup::kUnknown);
}

TEST(JobStoreTest, VanishedAndFinishedJobsAreDropped) {
  JobStore store;
  store.observe({slurmJob(1, 1000, true), slurmJob(2, 1000, true)}, 0);
  store.acceptReport(sampleReport("1"));
  store.observe({slurmJob(1, 1000, true), slurmJob(2, 1000, true, JobState::kOther)}, 0);
  EXPECT_EQ(store.lookup("2", nullptr), JobLookup::kUnknown);
  EXPECT_TRUE(store.records().at("1").report.has_value());  // kept across rounds
}

TEST(JobStoreTest, AReportForAJobThatJustEndedLeavesNoRecord) {
  JobStore store;
  store.observe({slurmJob(1, 1000, true)}, 0);
  store.observe({}, 0);  // the job ended between the handler's lookup and its report
  store.acceptReport(sampleReport("1"));
  EXPECT_TRUE(store.records().empty());
}

// Adaptive job 1 running since 100 on `nodes`.
SlurmJob runningSince100(std::vector<std::string> nodes) {
  SlurmJob job = slurmJob(1, 1000, true);
  job.start_time = 100;
  job.nodes = std::move(nodes);
  return job;
}

// Slurm removes a failed node from a job that does not die with it; the run that then fails
// shows only its other nodes, and the store remembers them all for kNodeFailureWindowS.
TEST(JobStoreTest, AnEndedRunKeepsEveryNodeItWasSeenOn) {
  JobStore store;
  SlurmJob job = runningSince100({"n1", "n2"});
  store.observe({job}, 110);
  job.nodes = {"n1"};  // n2 removed by Slurm
  store.observe({job}, 112);
  EXPECT_TRUE(store.endedRunNodes().empty());
  job.state = JobState::kOther;
  store.observe({job}, 114);
  const auto ended = store.endedRunNodes();
  ASSERT_EQ(ended.count(1), 1u);
  EXPECT_EQ(ended.at(1), (std::set<std::string>{"n1", "n2"}));
  store.observe({job}, 114 + kNodeFailureWindowS + 1);
  EXPECT_TRUE(store.endedRunNodes().empty());
}

TEST(JobStoreTest, AnEndedJobsPartsAreTimedFromWhenFirstSeen) {
  JobStore store;
  EXPECT_EQ(store.partsEndingSince({7}, 100), (std::map<uint32_t, double>{{7, 100}}));
  EXPECT_EQ(store.partsEndingSince({7, 8}, 110), (std::map<uint32_t, double>{{7, 100}, {8, 110}}));
  EXPECT_EQ(store.partsEndingSince({8}, 120), (std::map<uint32_t, double>{{8, 110}}));
  EXPECT_EQ(store.partsEndingSince({7}, 130), (std::map<uint32_t, double>{{7, 130}}));
}

// What a job ran on before Pollux changed it reaches the policy (Job::previous), which then
// does not undo the change at once.
TEST(JobStoreTest, AChangeRemembersWhatTheJobRanOnBefore) {
  JobStore store;
  SlurmJob job = runningSince100({"n1"});
  job.gpus_per_node = GpuGres{"a100", 2};
  store.observe({job}, 110);
  Action grow;
  grow.job_id = 1;
  grow.kind = ActionKind::kRequeue;
  grow.nodes = {"n1", "n2"};
  grow.gpus_per_node = 2;
  grow.gpu_type = "a100";
  store.recordAction(grow, 110);
  const auto previous = store.records().at("1").previous;
  ASSERT_TRUE(previous.has_value());
  EXPECT_EQ(*previous, (policy::Allocation{"a100", {{"n1", 2}}}));
}

TEST(JobStoreTest, ARestartedRunForgetsThePreviousRunsNodes) {
  JobStore store;
  SlurmJob job = runningSince100({"n1", "n2"});
  store.observe({job}, 110);
  job.start_time = 200;  // requeued and started again
  job.nodes = {"n3"};
  store.observe({job}, 210);
  EXPECT_EQ(store.records().at("1").run_nodes, (std::set<std::string>{"n3"}));
}

TEST(JobStoreTest, ReplyCarriesTheDecisionAndAdaScaleGain) {
  JobStore store;
  store.observe({slurmJob(1, 1000, true)}, 0);
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

Action actionOn(uint32_t id, ActionKind kind, std::vector<std::string> nodes = {"n1"}) {
  return Action{id, kind, "a100", 4, std::move(nodes), toString(kind)};
}

TEST(JobStoreTest, ActionsCountRestartsAndChanges) {
  JobStore store;
  store.observe({slurmJob(1, 1000, true)}, 0);
  store.recordAction(actionOn(1, ActionKind::kStart), 100);
  store.recordAction(actionOn(1, ActionKind::kRequeue), 200);
  store.recordFailedAction(actionOn(1, ActionKind::kRequeue), "Job is pending execution");
  const JobRecord record = store.records().at("1");
  EXPECT_EQ(record.restarts, 1);
  EXPECT_DOUBLE_EQ(record.last_change_time, 200);
  EXPECT_EQ(record.status, "requeue failed: Job is pending execution");
  EXPECT_EQ(record.lifecycle.phase, Phase::kRequeued);
}

// A job that ends FAILED while Pollux's requeue of it is in flight keeps its record (to be
// requeued again); one that ends otherwise does not.
TEST(JobStoreTest, ARequeueInFlightKeepsAFailedJob) {
  JobStore store;
  store.observe({slurmJob(1, 1000, true), slurmJob(2, 1000, true)}, 0);
  store.acceptReport(sampleReport("1"));
  store.recordAction(actionOn(1, ActionKind::kRequeue), 500.7);
  store.recordAction(actionOn(2, ActionKind::kRequeue), 500.7);
  SlurmJob failed = slurmJob(1, 1000, true, JobState::kOther);
  failed.failed = true;
  SlurmJob completed = slurmJob(2, 1000, true, JobState::kOther);
  store.observe({failed, completed}, 510);
  ASSERT_EQ(store.records().count("1"), 1u);
  EXPECT_TRUE(store.records().at("1").report.has_value());
  EXPECT_EQ(store.records().count("2"), 0u);
  store.recordAction(actionOn(1, ActionKind::kRequeue, {}), 520);  // the repeat
  EXPECT_EQ(store.records().at("1").lifecycle.phase, Phase::kRequeuedAgain);
  store.observe({failed}, 530);  // failed again: left to its user
  EXPECT_EQ(store.records().count("1"), 0u);
}

TEST(JobStoreTest, AShrinkInPlaceIsAnnouncedInTheReplyAndLoggedWhenDone) {
  JobStore store;
  store.observe({slurmJob(1, 1000, true)}, 0);
  store.recordDecision("1", policy::JobDecision{{"a100", {{"n1", 4}}}, 256, 64, 0, std::nullopt});
  EXPECT_FALSE(store.acceptReport(sampleReport("1")).shrink_in_place);
  store.recordAction(actionOn(1, ActionKind::kShrink), 500);
  EXPECT_TRUE(store.acceptReport(sampleReport("1")).shrink_in_place);
  SlurmJob shrunk = slurmJob(1, 1000, true);
  shrunk.nodes = {"n1"};
  const auto changes = store.observe({shrunk}, 530);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].id, "1");
  EXPECT_EQ(changes[0].transition, Transition::kShrinkDone);
  EXPECT_DOUBLE_EQ(changes[0].before.since, 500);
  EXPECT_FALSE(store.acceptReport(sampleReport("1")).shrink_in_place);
  EXPECT_EQ(store.records().at("1").lifecycle.phase, Phase::kShrunk);
  EXPECT_TRUE(store.observe({shrunk}, 600).empty());
}

TEST(JobStoreTest, AJobWhoseTrainingFinishedIsFinishingUntilItEndsOrTrainsAgain) {
  JobStore store;
  store.observe({slurmJob(1, 1000, true)}, 0);
  store.acceptReport(sampleReport("1"));
  EXPECT_EQ(store.records().at("1").lifecycle.phase, Phase::kRunning);
  schema::GoodputReport last = sampleReport("1");
  last.training_finished = true;
  store.acceptReport(last);
  EXPECT_EQ(store.records().at("1").lifecycle.phase, Phase::kFinishing);
  EXPECT_EQ(store.records().at("1").status, "training finished: left as it is until it ends");
  store.observe({slurmJob(1, 1000, true)}, 10);
  EXPECT_EQ(store.records().at("1").lifecycle.phase, Phase::kFinishing);
  JobStore restored;
  restored.restore(store.toJson());
  EXPECT_EQ(restored.records().at("1").lifecycle.phase, Phase::kFinishing);
  store.acceptReport(sampleReport("1"));  // its script's next stage trains
  EXPECT_EQ(store.records().at("1").lifecycle.phase, Phase::kRunning);
  EXPECT_EQ(store.records().at("1").status, "training again after its last training finished");
  store.acceptReport(last);
  store.observe({slurmJob(1, 1000, true, JobState::kOther)}, 20);
  EXPECT_EQ(store.lookup("1", nullptr), JobLookup::kUnknown);
}

TEST(JobStoreTest, StateSurvivesSaveAndRestore) {
  JobStore store;
  store.observe({slurmJob(1, 1000, true), slurmJob(2, 1001, false), slurmJob(3, 1000, true)}, 0);
  store.acceptReport(sampleReport("1"));
  store.recordAction(actionOn(1, ActionKind::kRequeue), 500);
  store.recordAction(actionOn(3, ActionKind::kShrink), 510);
  store.recordAction(actionOn(1, ActionKind::kRequeue), 520);
  store.recordRefusal("3", Refusal{"QOSMaxGRESPerUser", 8, 0xFEDCBA9876543210ULL});
  store.recordParts({}, {{1, 525.0}}, {{1, PartLeave{9, 530.0, {"n4"}}}});
  char dir[] = "/tmp/pollux-state-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/pollux_state.json";
  io::saveState(path, store.toJson());

  JobStore restored;
  restored.restore(*io::loadState(path));
  const auto records = restored.records();
  ASSERT_EQ(records.size(), 3u);
  const JobRecord& job = records.at("1");
  EXPECT_EQ(job.owner_uid, 1000u);
  EXPECT_EQ(job.restarts, 2);
  EXPECT_DOUBLE_EQ(job.last_change_time, 520);
  EXPECT_EQ(job.status, "requeue");
  ASSERT_TRUE(job.report.has_value());
  EXPECT_DOUBLE_EQ(job.report->perf_params.at("a100").gamma, 1.5);
  EXPECT_DOUBLE_EQ(*job.report->restart_cost_s, 30);
  // A restart must lose neither a requeue in flight nor a shrink awaited.
  EXPECT_EQ(job.lifecycle.phase, Phase::kRequeuedAgain);
  EXPECT_DOUBLE_EQ(job.lifecycle.since, 520);
  const Lifecycle& shrinking = records.at("3").lifecycle;
  EXPECT_EQ(shrinking.phase, Phase::kShrinking);
  ASSERT_TRUE(shrinking.shrink_target.has_value());
  EXPECT_EQ(shrinking.shrink_target->nodes.at("n1"), 4);
  EXPECT_DOUBLE_EQ(shrinking.since, 510);
  // Nor a refusal standing: the job is not placed the refused way again.
  ASSERT_TRUE(records.at("3").refused.has_value());
  EXPECT_EQ(records.at("3").refused->reason, "QOSMaxGRESPerUser");
  EXPECT_EQ(records.at("3").refused->gpus, 8);
  EXPECT_EQ(records.at("3").refused->circumstances, 0xFEDCBA9876543210ULL);
  EXPECT_FALSE(records.at("1").refused.has_value());
  // Nor a part's workers asked to leave: its part is cancelled once they left.
  EXPECT_EQ(job.part_leave, (std::optional<PartLeave>{{9, 530.0, {"n4"}}}));
  EXPECT_FALSE(job.part_growing_since.has_value());
  EXPECT_FALSE(records.at("3").part_leave.has_value());
  EXPECT_EQ(records.at("2").lifecycle.phase, Phase::kRunning);
  EXPECT_FALSE(records.at("2").adaptive);
  std::filesystem::remove_all(dir);
}

// State saved before phases were named: its flags become the phase they meant.
TEST(JobStoreTest, StateSavedAsFlagsRestoresItsPhases) {
  Json::Value saved;
  const auto job = [&](const char* id) -> Json::Value& {
    Json::Value& entry = saved[id];
    entry["owner_uid"] = 1000;
    entry["adaptive"] = true;
    entry["restarts"] = 1;
    entry["last_change_time"] = 500;
    entry["status"] = "";
    return entry;
  };
  job("1")["requeued_time"] = 510.0;
  job("2")["requeued_time"] = 520.0;
  saved["2"]["requeue_repeated"] = true;
  job("3")["shrink"]["target"] = schema::allocationToJson({"a100", {{"n1", 4}}});
  saved["3"]["shrink"]["requested_time"] = 530.0;
  saved["3"]["shrunk_in_place"] = true;
  job("4")["shrunk_in_place"] = true;
  saved["4"]["in_place_failed"] = true;
  job("5");
  JobStore store;
  store.restore(saved);
  const auto records = store.records();
  EXPECT_EQ(records.at("1").lifecycle.phase, Phase::kRequeued);
  EXPECT_DOUBLE_EQ(records.at("1").lifecycle.since, 510);
  EXPECT_EQ(records.at("2").lifecycle.phase, Phase::kRequeuedAgain);
  EXPECT_EQ(records.at("3").lifecycle.phase, Phase::kShrinking);
  EXPECT_DOUBLE_EQ(records.at("3").lifecycle.since, 530);
  EXPECT_EQ(records.at("4").lifecycle.phase, Phase::kShrunk);
  EXPECT_TRUE(records.at("4").lifecycle.shrinks_by_requeue);
  EXPECT_EQ(records.at("5").lifecycle.phase, Phase::kWaiting);
}

TEST(JobStoreTest, RestoreRejectsAnUnknownPhaseOrAMalformedRefusal) {
  Json::Value saved;
  saved["1"]["owner_uid"] = 1000;
  saved["1"]["adaptive"] = true;
  saved["1"]["restarts"] = 0;
  saved["1"]["last_change_time"] = 0;
  saved["1"]["phase"] = "sleeping";
  JobStore store;
  EXPECT_THROW(store.restore(saved), InvalidInput);
  saved["1"]["phase"] = "shrinking";  // without its target
  EXPECT_THROW(store.restore(saved), InvalidInput);
  saved["1"]["phase"] = "running";
  saved["1"]["refused"]["reason"] = "Licenses";
  saved["1"]["refused"]["gpus"] = 2;
  saved["1"]["refused"]["circumstances"] = "99999999999999999999999";
  EXPECT_THROW(store.restore(saved), InvalidInput);
  saved["1"]["refused"]["circumstances"] = "12";
  store.restore(saved);
  EXPECT_EQ(store.records().at("1").refused->circumstances, 12u);
}

TEST(JobStoreTest, KeepsTheDeclaredLengthOfTheLatestReportAndTheRoundsEstimate) {
  JobStore store;
  store.observe({slurmJob(1, 1000, true)}, 0);
  schema::GoodputReport declared = sampleReport("1");
  declared.length = policy::DeclaredLength{1000, 50000};
  store.acceptReport(declared);
  ASSERT_TRUE(store.records().at("1").report->length.has_value());
  EXPECT_DOUBLE_EQ(store.records().at("1").report->length->target, 50000);
  store.recordDecision("1", policy::JobDecision{{"a100", {{"n1", 2}}}, 128, 64, 0, 1800.0});
  EXPECT_DOUBLE_EQ(*store.records().at("1").decision->remaining_s, 1800);
  store.observe({slurmJob(1, 1000, true)}, 0);  // kept across rounds
  EXPECT_DOUBLE_EQ(store.records().at("1").report->length->progress, 1000);
  store.acceptReport(sampleReport("1"));  // the trainer no longer declares: undeclared
  EXPECT_FALSE(store.records().at("1").report->length.has_value());
}

TEST(JobStoreTest, DeclaredLengthSurvivesSaveAndRestoreAndOldStateLoads) {
  JobStore store;
  store.observe({slurmJob(1, 1000, true), slurmJob(2, 1000, true)}, 0);
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

TEST(JobStoreTest, AnUnchangedStateIsNotWrittenAgain) {
  char dir[] = "/tmp/pollux-state-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/pollux_state.json";
  JobStore store;
  store.observe({slurmJob(1, 1000, true)}, 0);
  store.acceptReport(sampleReport("1"));
  std::string last;
  const auto first = io::saveStateIfChanged(path, store.toJson(), last);
  EXPECT_TRUE(first.written);
  EXPECT_GT(first.bytes, 0u);
  std::ofstream(path) << "{\"marker\": true}";  // shows whether the next save writes
  const auto again = io::saveStateIfChanged(path, store.toJson(), last);
  EXPECT_FALSE(again.written);
  EXPECT_EQ(again.bytes, first.bytes);
  EXPECT_TRUE((*io::loadState(path)).isMember("marker"));
  store.observe({}, 0);  // the job ended: the state changed
  EXPECT_TRUE(io::saveStateIfChanged(path, store.toJson(), last).written);
  EXPECT_FALSE((*io::loadState(path)).isMember("marker"));
  EXPECT_TRUE((*io::loadState(path)).empty());
  std::remove(path.c_str());
  rmdir(dir);
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
  store.observe({slurmJob(1, 1000, true)}, 0);
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
