// SPDX-License-Identifier: GPL-2.0-or-later
// The event-round functions of pollux_service.h, as the shim calls them.
#include <cerrno>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "pollux_service.h"

namespace {

using Events = std::unique_ptr<pollux_events_t, decltype(&pollux_events_destroy)>;
using ServiceHandle = std::unique_ptr<pollux_service_t, decltype(&pollux_service_destroy)>;

Events eventsAt(const pollux_service_t* service, int64_t now_ms) {
  return Events(pollux_events_create(service, now_ms), &pollux_events_destroy);
}

ServiceHandle serviceWith(const char* scheduler_parameters) {
  pollux_settings_t settings{};
  settings.scheduler_parameters = scheduler_parameters;
  return ServiceHandle(pollux_service_create(&settings), &pollux_service_destroy);
}

// The reason new work was found, or "" when none was.
std::string newWork(pollux_events_t* events, const std::vector<pollux_event_job_t>& jobs) {
  char reason[200] = "";
  const int found =
      pollux_events_new_work(events, jobs.data(), jobs.size(), reason, sizeof(reason));
  EXPECT_GE(found, 0);
  return found == 1 ? reason : "";
}

TEST(PolluxEventsTest, TimingComesFromTheServiceOrTheDefaults) {
  const ServiceHandle service = serviceWith("pollux_interval=30,pollux_event_delay=5");
  ASSERT_TRUE(service);
  EXPECT_EQ(pollux_service_event_delay(service.get()), 5);
  EXPECT_EQ(pollux_service_event_delay(nullptr), 1);
  EXPECT_EQ(pollux_service_interval(nullptr), 60);
  const Events configured = eventsAt(service.get(), 0);
  EXPECT_EQ(pollux_events_wake(configured.get(), service.get()), 5000);
  pollux_events_ran(configured.get(), service.get(), 1000, 1000);
  EXPECT_EQ(pollux_events_due(configured.get(), service.get(), 6000), POLLUX_DUE_CHECK);
  pollux_events_checked(configured.get(), service.get(), 6000, 1);
  EXPECT_EQ(pollux_events_due(configured.get(), service.get(), 6000), POLLUX_DUE_EVENT_ROUND);
  EXPECT_EQ(pollux_events_due(configured.get(), service.get(), 31000), POLLUX_DUE_ROUND);
  const Events defaults = eventsAt(nullptr, 0);
  EXPECT_EQ(pollux_events_wake(defaults.get(), nullptr), 1000);
}

TEST(PolluxEventsTest, ReadsTheCommentAndWhatThePlanDid) {
  const Events events = eventsAt(nullptr, 0);
  const std::vector<pollux_event_job_t> round = {
      {1, POLLUX_JOB_RUNNING, 0, 0, "adaptive"},         // requeued to restart
      {2, POLLUX_JOB_PENDING, 0, 0, "adaptive:max_gpus=4"},  // started
      {3, POLLUX_JOB_PENDING, 0, 0, "adaptive"},         // placed, but Slurm refused it
      {4, POLLUX_JOB_PENDING, 0, 0, nullptr},            // rigid
  };
  pollux_action_t actions[3] = {};
  actions[0].job_id = 1;
  actions[0].kind = POLLUX_ACTION_REQUEUE;
  actions[0].num_nodes = 1;
  actions[1].job_id = 2;
  actions[1].kind = POLLUX_ACTION_START;
  actions[2].job_id = 3;
  actions[2].kind = POLLUX_ACTION_START;
  actions[2].error_code = EINVAL;
  const pollux_plan_t plan = {actions, 3};
  EXPECT_EQ(newWork(events.get(), round),
            "JobId=2 adaptive, pending since the last round (2 such jobs)");
  ASSERT_EQ(pollux_events_record_round(events.get(), round.data(), round.size(), &plan), 0);
  EXPECT_EQ(newWork(events.get(), round), "");
  EXPECT_EQ(newWork(events.get(), {{1, POLLUX_JOB_PENDING, 0, 1, "adaptive"},
                                   {2, POLLUX_JOB_RUNNING, 0, 0, "adaptive:max_gpus=4"},
                                   {3, POLLUX_JOB_PENDING, 0, 0, "adaptive"},
                                   {4, POLLUX_JOB_PENDING, 0, 0, nullptr}}),
            "JobId=1 requeued to restart, its last run done (1 such job)");
  EXPECT_EQ(newWork(events.get(), {{2, POLLUX_JOB_OTHER, 0, 0, "adaptive:max_gpus=4"},
                                   {3, POLLUX_JOB_PENDING, 0, 0, "adaptive"}}),
            "JobId=2 ended (1 job since the last round), 1 adaptive job pending");
  // Recording no jobs forgets them: every pending adaptive job is new again.
  ASSERT_EQ(pollux_events_record_round(events.get(), nullptr, 0, nullptr), 0);
  EXPECT_EQ(newWork(events.get(), round),
            "JobId=2 adaptive, pending since the last round (2 such jobs)");
}

// A round for ended jobs whose actions Slurm refused changed nothing: the next round for
// ended jobs alone waits two delays; a round with an action Slurm took resets that.
TEST(PolluxEventsTest, EndedJobsWaitLongerAfterSuchARoundSlurmTookNoActionOf) {
  const Events events = eventsAt(nullptr, 0);
  const std::vector<pollux_event_job_t> round = {{1, POLLUX_JOB_RUNNING, 0, 0, nullptr},
                                                 {2, POLLUX_JOB_PENDING, 0, 0, "adaptive"}};
  const std::vector<pollux_event_job_t> ended = {{1, POLLUX_JOB_OTHER, 0, 0, nullptr},
                                                 {2, POLLUX_JOB_PENDING, 0, 0, "adaptive"}};
  pollux_action_t start{};
  start.job_id = 2;
  start.kind = POLLUX_ACTION_START;
  start.error_code = EINVAL;  // refused
  pollux_plan_t plan = {&start, 1};
  // An event round for job 1's end, whose one action Slurm refused.
  auto endedRound = [&](int64_t checked_ms, int64_t ran_ms) {
    ASSERT_EQ(pollux_events_record_round(events.get(), round.data(), round.size(), nullptr), 0);
    EXPECT_NE(newWork(events.get(), ended), "");
    pollux_events_checked(events.get(), nullptr, checked_ms, 1);
    ASSERT_EQ(pollux_events_due(events.get(), nullptr, checked_ms), POLLUX_DUE_EVENT_ROUND);
    ASSERT_EQ(pollux_events_record_round(events.get(), round.data(), round.size(), &plan), 0);
    pollux_events_ran(events.get(), nullptr, ran_ms, ran_ms);
  };
  endedRound(1000, 1000);
  EXPECT_NE(newWork(events.get(), ended), "");
  pollux_events_checked(events.get(), nullptr, 2000, 1);
  EXPECT_EQ(pollux_events_due(events.get(), nullptr, 2000), POLLUX_DUE_NOTHING);
  EXPECT_EQ(pollux_events_due(events.get(), nullptr, 3000), POLLUX_DUE_EVENT_ROUND);
  start.error_code = 0;  // taken
  ASSERT_EQ(pollux_events_record_round(events.get(), round.data(), round.size(), &plan), 0);
  pollux_events_ran(events.get(), nullptr, 3000, 3000);
  EXPECT_NE(newWork(events.get(), ended), "");
  pollux_events_checked(events.get(), nullptr, 4000, 1);
  EXPECT_EQ(pollux_events_due(events.get(), nullptr, 4000), POLLUX_DUE_EVENT_ROUND);
}

// A start the shim deferred (POLLUX_ACTION_DEFERRED) is new work at the next look: the job's
// next event round comes without a new submission.
TEST(PolluxEventsTest, ADeferredStartIsNewWorkAtTheNextLook) {
  const Events events = eventsAt(nullptr, 0);
  const std::vector<pollux_event_job_t> round = {{2, POLLUX_JOB_PENDING, 0, 0, "adaptive"},
                                                 {3, POLLUX_JOB_PENDING, 0, 0, "adaptive"}};
  pollux_action_t starts[2] = {};
  starts[0].job_id = 2;
  starts[0].kind = POLLUX_ACTION_START;
  starts[1].job_id = 3;
  starts[1].kind = POLLUX_ACTION_START;
  starts[1].error_code = POLLUX_ACTION_DEFERRED;
  pollux_plan_t plan = {starts, 2};
  ASSERT_EQ(pollux_events_record_round(events.get(), round.data(), round.size(), &plan), 0);
  pollux_events_ran(events.get(), nullptr, 1000, 1000);
  const std::vector<pollux_event_job_t> after = {{2, POLLUX_JOB_RUNNING, 0, 0, "adaptive"},
                                                 {3, POLLUX_JOB_PENDING, 0, 0, "adaptive"}};
  EXPECT_EQ(newWork(events.get(), after),
            "JobId=3 placement deferred by the last round (1 such job)");
}

// 1 with the reason, 0, or 2 (the states cannot tell) from the jobs' states alone.
std::pair<int, std::string> newWorkFromStates(pollux_events_t* events,
                                              const std::vector<pollux_event_state_t>& states) {
  char reason[200] = "";
  const int found = pollux_events_new_work_from_states(events, states.data(), states.size(),
                                                       reason, sizeof(reason));
  return {found, reason};
}

TEST(PolluxEventsTest, LooksByStatesWithWhatTheLastRecordsShowed) {
  const Events events = eventsAt(nullptr, 0);
  const std::vector<pollux_event_job_t> round = {
      {1, POLLUX_JOB_RUNNING, 0, 0, "adaptive"},
      {2, POLLUX_JOB_PENDING, 0, 0, "adaptive"},  // started by the round
      {3, POLLUX_JOB_PENDING, 0, 0, "adaptive"},  // waits
  };
  pollux_action_t start = {};
  start.job_id = 2;
  start.kind = POLLUX_ACTION_START;
  const pollux_plan_t plan = {&start, 1};
  ASSERT_EQ(pollux_events_record_round(events.get(), round.data(), round.size(), &plan), 0);
  const pollux_event_state_t running = {2, POLLUX_JOB_RUNNING, 0};
  EXPECT_EQ(newWorkFromStates(events.get(), {{1, POLLUX_JOB_RUNNING, 0}, running,
                                             {3, POLLUX_JOB_PENDING, 0}}),
            std::make_pair(0, std::string()));
  EXPECT_EQ(newWorkFromStates(events.get(), {{1, POLLUX_JOB_OTHER, 0}, running,
                                             {3, POLLUX_JOB_PENDING, 0}}),
            std::make_pair(1, std::string("JobId=1 ended (1 job since the last round), "
                                          "1 adaptive job pending")));
  // A job no records showed: the records are loaded, and then it is known.
  const std::vector<pollux_event_state_t> submitted = {
      {1, POLLUX_JOB_RUNNING, 0}, running, {3, POLLUX_JOB_PENDING, 0}, {4, POLLUX_JOB_PENDING, 0}};
  EXPECT_EQ(newWorkFromStates(events.get(), submitted).first, 2);
  EXPECT_EQ(newWork(events.get(), {{1, POLLUX_JOB_RUNNING, 0, 0, "adaptive"},
                                   {2, POLLUX_JOB_RUNNING, 0, 0, "adaptive"},
                                   {3, POLLUX_JOB_PENDING, 0, 0, "adaptive"},
                                   {4, POLLUX_JOB_PENDING, 0, 0, nullptr}}),
            "");
  EXPECT_EQ(newWorkFromStates(events.get(), submitted).first, 0);
  // The started job pending again: requeued (a failed launch), its records are needed.
  EXPECT_EQ(newWorkFromStates(events.get(), {{2, POLLUX_JOB_PENDING, 1}}).first, 2);
  EXPECT_EQ(pollux_events_records_needed(events.get(), nullptr, 0), 1u);
  EXPECT_EQ(pollux_events_new_work_from_states(nullptr, nullptr, 0, nullptr, 0), -1);
  EXPECT_EQ(pollux_events_new_work_from_states(events.get(), nullptr, 1, nullptr, 0), -1);
}

// A new job's record, loaded alone, tells the states what they could not.
TEST(PolluxEventsTest, LearnsTheRecordsTheStatesNeed) {
  const Events events = eventsAt(nullptr, 0);
  const std::vector<pollux_event_job_t> round = {{1, POLLUX_JOB_RUNNING, 0, 0, nullptr},
                                                 {2, POLLUX_JOB_PENDING, 0, 0, nullptr}};
  ASSERT_EQ(pollux_events_record_round(events.get(), round.data(), round.size(), nullptr), 0);
  ASSERT_EQ(pollux_events_new_work(events.get(), round.data(), round.size(), nullptr, 0), 0);
  const std::vector<pollux_event_state_t> submitted = {
      {1, POLLUX_JOB_RUNNING, 0}, {2, POLLUX_JOB_PENDING, 0}, {7, POLLUX_JOB_PENDING, 0},
      {8, POLLUX_JOB_PENDING, 0}};
  EXPECT_EQ(newWorkFromStates(events.get(), submitted).first, 2);
  uint32_t ids[1] = {};
  EXPECT_EQ(pollux_events_records_needed(events.get(), ids, 1), 2u);  // the first of two
  EXPECT_EQ(ids[0], 7u);
  const std::vector<pollux_event_job_t> records = {{7, POLLUX_JOB_PENDING, 0, 0, nullptr},
                                                   {8, POLLUX_JOB_PENDING, 0, 0, "adaptive"}};
  ASSERT_EQ(pollux_events_learn(events.get(), records.data(), records.size()), 0);
  EXPECT_EQ(newWorkFromStates(events.get(), submitted),
            std::make_pair(1, std::string("JobId=8 adaptive, pending since the last round "
                                          "(1 such job)")));
  EXPECT_EQ(pollux_events_records_needed(events.get(), ids, 1), 0u);
  EXPECT_EQ(pollux_events_records_needed(nullptr, ids, 1), 0u);
  errno = 0;
  EXPECT_EQ(pollux_events_learn(events.get(), nullptr, 1), -1);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(pollux_events_learn(nullptr, records.data(), records.size()), -1);
}

TEST(PolluxEventsTest, RejectsMissingArguments) {
  const Events events = eventsAt(nullptr, 0);
  char reason[8];
  errno = 0;
  EXPECT_EQ(pollux_events_new_work(nullptr, nullptr, 0, reason, sizeof(reason)), -1);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(pollux_events_new_work(events.get(), nullptr, 1, reason, sizeof(reason)), -1);
  EXPECT_EQ(pollux_events_record_round(events.get(), nullptr, 2, nullptr), -1);
  EXPECT_EQ(pollux_events_due(nullptr, nullptr, 0), POLLUX_DUE_NOTHING);
  pollux_events_ran(nullptr, nullptr, 0, 0);
  pollux_events_destroy(nullptr);
  // A reason longer than its buffer is cut short.
  const std::vector<pollux_event_job_t> pending = {{7, POLLUX_JOB_PENDING, 0, 0, "adaptive"}};
  EXPECT_EQ(pollux_events_new_work(events.get(), pending.data(), 1, reason, sizeof(reason)), 1);
  EXPECT_STREQ(reason, "JobId=7");
}

}  // namespace
