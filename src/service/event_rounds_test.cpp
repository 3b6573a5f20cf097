// SPDX-License-Identifier: GPL-2.0-or-later
#include "event_rounds.hpp"

#include <gtest/gtest.h>

namespace pollux::service {
namespace {

constexpr auto kPending = EventJobState::kPending;
constexpr auto kActive = EventJobState::kActive;
constexpr auto kDone = EventJobState::kDone;

using Jobs = std::vector<EventJob>;
using Acted = std::vector<RoundAction>;

// The reason new work was found, or "" when none was.
std::string newWork(const RoundMemory& memory, const Jobs& jobs) {
  const auto found = memory.newWork(jobs);
  return found ? found->reason : "";
}

// What a look found: new jobs, jobs that ended alone, nothing.
const std::optional<NewWork> kNewJobs = NewWork{"new jobs", false};
const std::optional<NewWork> kEnded = NewWork{"ended jobs", true};
const std::optional<NewWork> kNothingNew = std::nullopt;

TEST(RoundMemoryTest, BeforeAnyRoundEveryPendingAdaptiveJobIsNew) {
  const RoundMemory memory;
  EXPECT_EQ(newWork(memory, {}), "");
  // A running adaptive job and a pending rigid one are nothing new for Pollux.
  EXPECT_EQ(newWork(memory, {{1, kActive, true, false, 0}, {2, kPending, false, false, 0}}), "");
  EXPECT_EQ(newWork(memory, {{1, kActive, true, false, 0}, {3, kPending, true, false, 0}}),
            "JobId=3 adaptive, pending since the last round (1 such job)");
}

TEST(RoundMemoryTest, NewAndRequeuedJobs) {
  RoundMemory memory;
  const Jobs round = {
      {10, kPending, true, false, 0},  // held by the round: it waits
      {11, kActive, true, false, 0},
      {12, kActive, false, false, 0},
  };
  const Jobs burst = {
      {10, kPending, true, false, 0},  {11, kActive, true, false, 0},
      {12, kActive, false, false, 0},  {20, kPending, true, false, 0},
      {21, kPending, true, false, 0},  {22, kPending, true, false, 0},
      {23, kPending, false, false, 0},  // rigid: Slurm's backfill's
  };
  memory.record(round, {});
  EXPECT_EQ(newWork(memory, round), "");
  EXPECT_EQ(newWork(memory, burst),
            "JobId=20 adaptive, pending since the last round (3 such jobs)");
  // Requeued by a user or Slurm: new work once its last run has released its nodes.
  EXPECT_EQ(newWork(memory, {{10, kPending, true, false, 0},
                             {11, kPending, true, true, 0},
                             {12, kActive, false, false, 0}}),
            "");
  EXPECT_EQ(newWork(memory, {{10, kPending, true, false, 0},
                             {11, kPending, true, false, 0},
                             {12, kActive, false, false, 0}})
                .rfind("JobId=11 adaptive, pending", 0),
            0u);
  // After the round that saw the burst, it is nothing new.
  memory.record(burst, {});
  EXPECT_EQ(newWork(memory, burst), "");
  memory.forget();
  EXPECT_NE(newWork(memory, burst), "");
}

// One look for new work after the round of OwnActionsAreNoNewWork.
struct Look {
  const char* what;
  Jobs jobs;
  const char* reason;  // "" for none
};

// What a round did is no new work: a job it started (running), one it shrank, one it held, one
// it requeued to be held, a placement Slurm did not take. A job it requeued to restart on new
// nodes is, once its last run is done (Slurm then pushes its begin time out); a job it
// started that then ends is too.
TEST(RoundMemoryTest, OwnActionsAreNoNewWork) {
  RoundMemory memory;
  const Jobs round = {
      {30, kActive, true, false, 0},   // requeued by the round to grow
      {31, kPending, true, false, 0},  // started by the round
      {32, kActive, true, false, 0},   // shrunk in place by the round
      {33, kActive, false, false, 0},
      {34, kPending, true, false, 0},  // held by the round
      {35, kPending, true, false, 0},  // placed, but Slurm refused the update
      {36, kActive, true, false, 0},   // requeued by the round to be held (preempted)
  };
  const Acted acted = {{32, false, false, false}, {31, true, false, false},
                       {30, false, true, true},   {34, false, false, false},
                       {35, false, false, false}, {36, false, true, false}};
  // Jobs 30 to 36 with the states of 30, 31 and 36 given (the others as after the round).
  const auto jobs = [](EventJob j30, EventJob j31, EventJob j36) {
    return Jobs{j30,
                j31,
                {32, kActive, true, false, 0},
                {33, kActive, false, false, 0},
                {34, kPending, true, false, 0},
                {35, kPending, true, false, 0},
                j36};
  };
  const Jobs after_requeue = jobs({30, kPending, true, false, 0}, {31, kActive, true, false, 0},
                                  {36, kPending, true, false, 0});
  const Jobs restarted = jobs({30, kActive, true, false, 0}, {31, kActive, true, false, 0},
                              {36, kPending, true, false, 0});
  const std::vector<Look> looks = {
      {"the round's own jobs", round, ""},
      {"during the requeues", jobs({30, kPending, true, true, 0}, {31, kActive, true, false, 0},
                                   {36, kPending, true, true, 0}),
       ""},
      {"the preempted job's run done",
       jobs({30, kPending, true, true, 0}, {31, kActive, true, false, 0},
            {36, kPending, true, false, 0}),
       ""},
      {"the restarting job's run done", after_requeue,
       "JobId=30 requeued to restart, its last run done (1 such job)"},
      {"restarted", restarted, ""},
      {"started, then ended",
       jobs({30, kActive, true, false, 0}, {31, kDone, true, false, 0},
            {36, kPending, true, false, 0}),
       "JobId=31 ended (1 job since the last round), 3 adaptive jobs pending"},
  };
  memory.record(round, acted);
  for (const auto& look : looks) EXPECT_EQ(newWork(memory, look.jobs), look.reason) << look.what;
  // The round that let job 30 begin placed it again: it waits like any job a round started.
  memory.record(after_requeue, {{30, true, false, false}});
  EXPECT_EQ(newWork(memory, after_requeue), "");
  // The next round then sees them all running: still nothing new.
  memory.record(restarted, {});
  EXPECT_EQ(newWork(memory, restarted), "");
}

// A placement the round deferred (its time for placements spent) is new work until a round
// places it or Slurm ends the job; a deferred requeue of a running job too.
TEST(RoundMemoryTest, DeferredPlacementsAreNewWorkForTheNextRound) {
  RoundMemory memory;
  const Jobs round = {{50, kPending, true, false, 0},
                      {51, kPending, true, false, 0},
                      {52, kActive, true, false, 0}};
  memory.record(round, {{50, true, false, false},
                        {51, false, false, false, true},
                        {52, false, false, false, true}});
  EXPECT_EQ(newWork(memory, round), "JobId=51 placement deferred by the last round (2 such jobs)");
  // Job 51 cancelled meanwhile: job 52 (running, its requeue deferred) is still due.
  EXPECT_EQ(newWork(memory, {{50, kActive, true, false, 0},
                             {51, kDone, true, false, 0},
                             {52, kActive, true, false, 0}}),
            "JobId=52 placement deferred by the last round (1 such job)");
  // The next round places them: nothing new.
  memory.record(round, {{51, true, false, false}, {52, false, true, true}});
  EXPECT_EQ(newWork(memory, {{50, kActive, true, false, 0},
                             {51, kActive, true, false, 0},
                             {52, kActive, true, false, 0}}),
            "");
}

// A job requeued (by its user or by Slurm) after the round started it, or while it waited,
// is new work again once its last run is done: Slurm's restart count tells.
TEST(RoundMemoryTest, APartTheRoundStartedIsNewWorkOnceItRuns) {
  RoundMemory memory;
  memory.record({{40, kActive, true, false, 0}, {41, kPending, true, false, 0, true}},
                {{41, true, false, false}});
  EXPECT_EQ(newWork(memory, {{40, kActive, true, false, 0}, {41, kPending, true, false, 0, true}}),
            "");
  EXPECT_EQ(newWork(memory, {{40, kActive, true, false, 0}, {41, kActive, true, false, 0, true}}),
            "JobId=41 part started, its job's workers can join (1 such part)");
  // A job that is no part, started by the round, is no new work when it runs.
  memory.record({{42, kPending, true, false, 0}}, {{42, true, false, false}});
  EXPECT_EQ(newWork(memory, {{42, kActive, true, false, 0}}), "");
}

TEST(RoundMemoryTest, RequeuedAgainIsNewWork) {
  RoundMemory memory;
  const Jobs round = {{40, kPending, true, false, 1}, {41, kPending, true, false, 0}};
  const Jobs waiting_requeued = {{40, kActive, true, false, 1}, {41, kPending, true, false, 1}};
  memory.record(round, {{40, true, false, false}});  // started again by the round
  EXPECT_EQ(newWork(memory, round), "");
  EXPECT_EQ(newWork(memory, {{40, kActive, true, false, 1}, {41, kPending, true, false, 0}}), "");
  EXPECT_EQ(newWork(memory, {{40, kPending, true, true, 2}, {41, kPending, true, false, 0}}), "");
  EXPECT_EQ(newWork(memory, {{40, kPending, true, false, 2}, {41, kPending, true, false, 0}}),
            "JobId=40 adaptive, pending since the last round (1 such job)");
  // A pending job Slurm requeued (a failed launch): a round places it again.
  EXPECT_EQ(newWork(memory, waiting_requeued).rfind("JobId=41 adaptive", 0), 0u);
  // Requeued by the round to be held: it waits, with the count the requeue gave it.
  memory.record(round, {{41, false, true, false}});
  EXPECT_EQ(newWork(memory, waiting_requeued), "");
}

TEST(RoundMemoryTest, EndedJobsFreeResourcesForAdaptiveWork) {
  RoundMemory memory;
  const Jobs round = {
      {40, kPending, true, false, 0},  // waits for GPUs
      {41, kActive, false, false, 0},  // rigid
      {42, kActive, true, false, 0},
      {43, kDone, false, true, 0},  // ended, still completing at the round
  };
  const std::vector<Look> looks = {
      {"the round's own jobs", round, ""},
      {"a rigid job completing: its GPUs are freed once it is done",
       {{40, kPending, true, false, 0},
        {41, kDone, false, true, 0},
        {42, kActive, true, false, 0},
        {43, kDone, false, true, 0}},
       ""},
      {"a rigid job done",
       {{40, kPending, true, false, 0},
        {41, kDone, false, false, 0},
        {42, kActive, true, false, 0},
        {43, kDone, false, true, 0}},
       "JobId=41 ended (1 job since the last round), 1 adaptive job pending"},
      {"the completing job done",
       {{40, kPending, true, false, 0},
        {41, kActive, false, false, 0},
        {42, kActive, true, false, 0},
        {43, kDone, false, false, 0}},
       "JobId=43 ended (1 job since the last round), 1 adaptive job pending"},
      {"the completing job purged",
       {{40, kPending, true, false, 0},
        {41, kActive, false, false, 0},
        {42, kActive, true, false, 0}},
       "1 job ended since the last round, 1 adaptive job pending"},
      {"a rigid job ending with no adaptive job waiting is Slurm's business",
       {{40, kActive, true, false, 0},
        {41, kDone, false, false, 0},
        {42, kActive, true, false, 0},
        {43, kDone, false, true, 0}},
       ""},
      {"an adaptive job ending frees GPUs the others may grow into",
       {{40, kActive, true, false, 0},
        {41, kActive, false, false, 0},
        {42, kDone, true, false, 0},
        {43, kDone, false, true, 0}},
       "JobId=42 ended (1 job since the last round), 0 adaptive jobs pending"},
  };
  memory.record(round, {});
  for (const auto& look : looks) EXPECT_EQ(newWork(memory, look.jobs), look.reason) << look.what;
}

EventTiming timing(int64_t interval_s, int64_t delay_s) {
  return {interval_s * 1000, delay_s * 1000};
}

TEST(EventClockTest, WithoutEventsOnlyRegularRounds) {
  const EventTiming regular = timing(60, 0);
  EventClock clock(1000, regular);
  EXPECT_EQ(clock.wake(regular), 61000);
  EXPECT_EQ(clock.due(60999, regular), Due::kNothing);
  EXPECT_EQ(clock.due(61000, regular), Due::kRound);
  clock.ran(61000, 61000, regular, true);
  EXPECT_EQ(clock.wake(regular), 121000);
}

TEST(EventClockTest, WorkFoundBeforeAnyRoundRunsItsRoundAtOnce) {
  const EventTiming events = timing(300, 1);
  EventClock clock(5000, events);
  EXPECT_EQ(clock.due(6000, events), Due::kCheck);
  clock.checked(6000, events, kNewJobs);
  EXPECT_GE(clock.wake(events), 0);
  EXPECT_LE(clock.wake(events), 6000);
  EXPECT_EQ(clock.due(6000, events), Due::kEventRound);
}

TEST(EventClockTest, ChecksEveryDelayAndRunsARoundForWorkFound) {
  const EventTiming events = timing(300, 1);
  EventClock clock(0, events);
  EXPECT_EQ(clock.wake(events), 1000);
  EXPECT_EQ(clock.due(999, events), Due::kNothing);
  EXPECT_EQ(clock.due(1000, events), Due::kCheck);
  clock.checked(1000, events, kNothingNew);
  EXPECT_EQ(clock.wake(events), 2000);
  EXPECT_EQ(clock.due(2003, events), Due::kCheck);
  clock.checked(2003, events, kNewJobs);
  EXPECT_EQ(clock.due(2003, events), Due::kEventRound);
  EXPECT_LE(clock.wake(events), 2003);
  clock.ran(2003, 2003, events, true);
  // The next look a delay after that round; its work found waits for the rate limit only if
  // a round ran less than a delay ago.
  EXPECT_EQ(clock.wake(events), 3003);
  EXPECT_EQ(clock.due(3003, events), Due::kCheck);
  clock.checked(3003, events, kNewJobs);
  EXPECT_EQ(clock.due(3003, events), Due::kEventRound);
  clock.ran(3003, 3003, events, true);
  // A round starts the interval again.
  EXPECT_EQ(clock.wake(timing(300, 0)), 303003);
  // A regular round comes first, and work found shortly after it waits a delay.
  clock.checked(303002, events, kNothingNew);
  EXPECT_EQ(clock.due(303003, events), Due::kRound);
  const EventTiming slower = timing(300, 5);
  clock.ran(303003, 303003, slower, true);
  clock.checked(303100, slower, kNewJobs);  // a check that came early
  EXPECT_EQ(clock.due(303100, slower), Due::kNothing);
  EXPECT_EQ(clock.wake(slower), 308003);
  EXPECT_EQ(clock.due(308003, slower), Due::kEventRound);
}

// A burst of submissions over 3 s with checks each second costs at most one round per
// second; none without new work.
TEST(EventClockTest, BurstIsRateLimited) {
  const EventTiming events = timing(300, 1);
  EventClock clock(0, events);
  RoundMemory memory;
  Jobs jobs;
  int rounds = 0, checks = 0;
  for (int64_t now = 0; now <= 10000; now += 50) {
    if (now >= 500 && now < 3500) {  // two submissions per 100 ms
      jobs.push_back({static_cast<uint32_t>(100 + jobs.size()), kPending, true, false, 0});
    }
    switch (clock.due(now, events)) {
      case Due::kCheck:
        checks++;
        clock.checked(now, events, memory.newWork(jobs));
        break;
      case Due::kEventRound:
      case Due::kRound:
        rounds++;
        memory.record(jobs, {});
        clock.ran(now, now, events, true);
        break;
      case Due::kNothing:
        break;
    }
  }
  EXPECT_EQ(jobs.size(), 60u);
  EXPECT_GE(rounds, 2);
  EXPECT_LE(rounds, 4);
  EXPECT_GE(checks, 9);
  EXPECT_LE(checks, 11);
}

// A round that took 300 ms holds the next event round back 2.7 s from its end (rounds take
// at most a tenth of the time), one of 10 s four delays; looks go on meanwhile. One of
// 50 ms waits the delay alone.
TEST(EventClockTest, ALongRoundHoldsTheNextEventRoundBackNineTimesItsLengthAtMostFourDelays) {
  const EventTiming events = timing(300, 1);
  EventClock clock(0, events);
  clock.ran(1000, 1300, events, true);
  EXPECT_EQ(clock.due(2300, events), Due::kCheck);
  clock.checked(2300, events, kNewJobs);
  EXPECT_EQ(clock.due(3999, events), Due::kNothing);
  EXPECT_EQ(clock.wake(events), 4000);
  EXPECT_EQ(clock.due(4000, events), Due::kEventRound);
  clock.ran(6000, 6050, events, true);
  clock.checked(7050, events, kNewJobs);
  EXPECT_EQ(clock.due(7050, events), Due::kEventRound);
  // At most four delays, however long the round took.
  clock.ran(8000, 18000, events, true);
  clock.checked(19000, events, kNewJobs);
  EXPECT_EQ(clock.due(21999, events), Due::kNothing);
  EXPECT_EQ(clock.due(22000, events), Due::kEventRound);
  // A regular round is not held back.
  EXPECT_EQ(clock.due(318000, events), Due::kRound);
}

TEST(RoundMemoryTest, EndedJobsAloneAreNewWorkOfTheirOwnKind) {
  RoundMemory memory;
  memory.record({{1, kActive, false, false, 0}, {2, kPending, true, false, 0}}, {});
  const Jobs ended{{1, kDone, false, false, 0}, {2, kPending, true, false, 0}};
  ASSERT_TRUE(memory.newWork(ended));
  EXPECT_TRUE(memory.newWork(ended)->ended_only);
  Jobs submitted = ended;
  submitted.push_back({3, kPending, true, false, 0});
  ASSERT_TRUE(memory.newWork(submitted));
  EXPECT_FALSE(memory.newWork(submitted)->ended_only);
}

// After rounds for ended jobs alone that changed nothing, the next such round waits 2, 4, 8,
// then 16 delays; the looks go on each delay, and other new work waits one; a round that
// changes something resets it, and other rounds that change nothing leave it.
TEST(EventClockTest, EndedJobsAloneWaitLongerAfterSuchRoundsChangedNothing) {
  const EventTiming events = timing(300, 1);
  EventClock clock(0, events);
  clock.ran(0, 0, events, false);  // a regular round: no wait
  clock.checked(1000, events, kEnded);
  ASSERT_EQ(clock.due(1000, events), Due::kEventRound);
  int64_t ended_at = 1000;
  for (int64_t delays : {2, 4, 8, 16, 16}) {
    clock.ran(ended_at, ended_at, events, false);
    clock.checked(ended_at + 1000, events, kEnded);
    EXPECT_EQ(clock.wake(events), ended_at + 2000);  // the next look, or the round
    EXPECT_EQ(clock.due(ended_at + 2000, events), delays == 2 ? Due::kEventRound : Due::kCheck);
    clock.checked(ended_at + delays * 1000 - 1000, events, kEnded);
    EXPECT_EQ(clock.due(ended_at + delays * 1000 - 1, events), Due::kNothing);
    EXPECT_EQ(clock.due(ended_at + delays * 1000, events), Due::kEventRound);
    ended_at += delays * 1000;
  }
  clock.ran(ended_at, ended_at, events, false);
  clock.checked(ended_at + 1000, events, kNewJobs);
  EXPECT_EQ(clock.due(ended_at + 1000, events), Due::kEventRound);
  // New jobs left waiting: the wait stays.
  clock.ran(ended_at + 1000, ended_at + 1000, events, false);
  clock.checked(ended_at + 2000, events, kEnded);
  EXPECT_EQ(clock.due(ended_at + 3000, events), Due::kCheck);
  EXPECT_EQ(clock.due(ended_at + 17000, events), Due::kEventRound);
  clock.ran(ended_at + 17000, ended_at + 17000, events, true);
  clock.checked(ended_at + 18000, events, kEnded);
  EXPECT_EQ(clock.due(ended_at + 18000, events), Due::kEventRound);
}

TEST(JobsSeenTest, StatesOfJobsAllSeenGiveTheJobsWithWhatWasSeen) {
  JobsSeen seen;
  seen.loaded({{1, kPending, true, false, 2}, {2, kActive, false, false, 0},
               {3, kActive, true, true, 0}});
  const auto jobs = seen.fromStates({{1, kPending, false}, {2, kDone, false}, {3, kDone, false}});
  ASSERT_TRUE(jobs);
  ASSERT_EQ(jobs->size(), 3u);
  EXPECT_TRUE((*jobs)[0].adaptive);
  EXPECT_EQ((*jobs)[0].restarts, 2u);
  EXPECT_EQ((*jobs)[1].state, kDone);
  EXPECT_FALSE((*jobs)[2].completing);
  // A job Slurm no longer shows is left out.
  EXPECT_EQ(seen.fromStates({{1, kPending, false}})->size(), 1u);
}

TEST(JobsSeenTest, UnknownJobsAndRequeuesNeedTheRecords) {
  JobsSeen seen;
  EXPECT_FALSE(seen.fromStates({{1, kPending, false}}));  // nothing loaded yet
  EXPECT_TRUE(seen.fromStates({}));
  seen.loaded({{1, kPending, true, false, 0}, {2, kActive, true, false, 0}});
  EXPECT_FALSE(seen.fromStates({{1, kPending, false}, {5, kPending, false}}));  // a new job
  EXPECT_FALSE(seen.fromStates({{2, kPending, true}}));  // requeued: its count is unknown
  // Running, then pending again at a later look: requeued between the two looks.
  ASSERT_TRUE(seen.fromStates({{1, kActive, false}, {2, kActive, false}}));
  EXPECT_FALSE(seen.fromStates({{1, kPending, false}, {2, kActive, false}}));
  // What the records show then is known again.
  seen.loaded({{1, kPending, true, false, 1}, {2, kActive, true, false, 0}});
  EXPECT_EQ(seen.fromStates({{1, kPending, false}})->front().restarts, 1u);
}

TEST(JobsSeenTest, NamesTheJobsWhoseRecordsItNeedsAndLearnsThem) {
  JobsSeen seen;
  seen.loaded({{1, kPending, true, false, 0}, {2, kActive, true, false, 0}});
  const std::vector<JobStateBrief> now = {
      {1, kPending, false}, {2, kPending, false}, {5, kPending, false}, {6, kActive, false}};
  EXPECT_FALSE(seen.fromStates(now));
  EXPECT_EQ(seen.needed(), (std::vector<uint32_t>{2, 5, 6}));  // requeued, and two new
  // Records loaded one by one: job 2 requeued once, 5 adaptive, 6 rigid; job 1 is kept.
  seen.learned({{2, kPending, true, false, 1}, {5, kPending, true, false, 0},
                {6, kActive, false, false, 0}});
  const auto jobs = seen.fromStates(now);
  ASSERT_TRUE(jobs);
  EXPECT_TRUE(seen.needed().empty());
  ASSERT_EQ(jobs->size(), 4u);
  EXPECT_EQ((*jobs)[1].restarts, 1u);
  EXPECT_TRUE((*jobs)[2].adaptive);
  EXPECT_FALSE((*jobs)[3].adaptive);
}

TEST(JobsSeenTest, AJobARoundStartedIsExpectedRunning) {
  JobsSeen seen;
  seen.loaded({{1, kPending, true, false, 0}});
  seen.started(1);
  seen.started(9);  // not loaded: nothing to update
  EXPECT_FALSE(seen.fromStates({{1, kPending, false}}));  // not started yet, or requeued
  ASSERT_TRUE(seen.fromStates({{1, kActive, false}}));
  EXPECT_FALSE(seen.fromStates({{9, kActive, false}}));
}

TEST(JobsSeenTest, NewWorkFromStatesMatchesNewWorkFromRecords) {
  RoundMemory memory;
  JobsSeen seen;
  const Jobs round = {{10, kPending, true, false, 0}, {11, kActive, true, false, 0},
                      {12, kActive, false, false, 0}};
  memory.record(round, {});
  seen.loaded(round);
  const auto quiet = seen.fromStates({{10, kPending, false}, {11, kActive, false},
                                      {12, kActive, false}});
  ASSERT_TRUE(quiet);
  EXPECT_EQ(newWork(memory, *quiet), "");
  const auto ended = seen.fromStates({{10, kPending, false}, {11, kActive, false},
                                      {12, kDone, false}});
  ASSERT_TRUE(ended);
  EXPECT_EQ(newWork(memory, *ended),
            "JobId=12 ended (1 job since the last round), 1 adaptive job pending");
}

}  // namespace
}  // namespace pollux::service
