// SPDX-License-Identifier: GPL-2.0-or-later
#include "job_lifecycle.hpp"

#include <gtest/gtest.h>

namespace pollux::service {
namespace {

constexpr double kAsked = 1000;  // when Pollux requeued or asked for a shrink

const policy::Allocation kTarget{"a100", {{"n1", 4}}};

Lifecycle in(Phase phase, double since = 0) {
  Lifecycle lifecycle;
  lifecycle.phase = phase;
  lifecycle.since = since;
  if (phase == Phase::kShrinking) lifecycle.shrink_target = kTarget;
  if (phase == Phase::kMoving) lifecycle.move_target = kTarget;
  return lifecycle;
}

SlurmJob pending() {
  SlurmJob job;
  job.id = 7;
  job.state = JobState::kPending;
  job.adaptive = schema::AdaptiveRequest{};
  return job;
}

SlurmJob running(double start_time, std::vector<std::string> nodes = {"n1", "n2"}) {
  SlurmJob job = pending();
  job.state = JobState::kRunning;
  job.start_time = start_time;
  job.nodes = std::move(nodes);
  return job;
}

SlurmJob ended(bool failed) {
  SlurmJob job = pending();
  job.state = JobState::kOther;
  job.failed = failed;
  return job;
}

struct ObserveCase {
  const char* what;
  Lifecycle from;
  SlurmJob job;
  double now;
  Phase to;
  Transition transition;
};

TEST(JobLifecycleTest, ObserveFollowsWhatSlurmShows) {
  const ObserveCase cases[] = {
      {"a new job waits", in(Phase::kWaiting), pending(), 10, Phase::kWaiting, Transition::kNone},
      {"started", in(Phase::kWaiting), running(5), 10, Phase::kRunning, Transition::kNone},
      {"requeued by Slurm or its user", in(Phase::kRunning), pending(), 10, Phase::kWaiting,
       Transition::kNone},
      {"completed", in(Phase::kRunning), ended(false), 10, Phase::kEnded, Transition::kNone},
      {"failed", in(Phase::kRunning), ended(true), 10, Phase::kEnded, Transition::kNone},
      {"not on its target yet", in(Phase::kShrinking, kAsked), running(5), kAsked + 10,
       Phase::kShrinking, Transition::kNone},
      {"shown on its target", in(Phase::kShrinking, kAsked), running(5, {"n1"}), kAsked + 10,
       Phase::kShrunk, Transition::kShrinkDone},
      {"not on its target in time", in(Phase::kShrinking, kAsked), running(5),
       kAsked + kShrinkTimeoutS + 1, Phase::kRunning, Transition::kShrinkTimedOut},
      {"requeued while shrinking", in(Phase::kShrinking, kAsked), pending(), kAsked + 10,
       Phase::kWaiting, Transition::kNone},
      {"ended while shrinking", in(Phase::kShrinking, kAsked), ended(false), kAsked + 10,
       Phase::kEnded, Transition::kNone},
      {"the same run after a shrink", in(Phase::kShrunk), running(5, {"n1"}), kAsked + 200,
       Phase::kShrunk, Transition::kNone},
      {"a new run after a shrink", in(Phase::kShrunk), pending(), kAsked + 200, Phase::kWaiting,
       Transition::kNone},
      {"requeued, pending", in(Phase::kRequeued, kAsked + 0.7), pending(), kAsked + 5,
       Phase::kRequeued, Transition::kNone},
      {"requeued, the next run young", in(Phase::kRequeued, kAsked + 0.7), running(kAsked),
       kAsked + kRunAfterRequeueS - 1, Phase::kRequeued, Transition::kNone},
      {"requeued, the next run lasted", in(Phase::kRequeued, kAsked + 0.7), running(kAsked),
       kAsked + kRunAfterRequeueS, Phase::kRunning, Transition::kNone},
      {"requeued, the stopped run shown", in(Phase::kRequeued, kAsked), running(kAsked - 100),
       kAsked + 100, Phase::kRequeued, Transition::kNone},
      {"requeued, then failed", in(Phase::kRequeued, kAsked), ended(true), kAsked + 5,
       Phase::kRequeued, Transition::kNone},
      {"requeued, then completed", in(Phase::kRequeued, kAsked), ended(false), kAsked + 5,
       Phase::kEnded, Transition::kNone},
      {"requeued again, then failed", in(Phase::kRequeuedAgain, kAsked), ended(true), kAsked + 5,
       Phase::kEnded, Transition::kNone},
      {"requeued again, the next run lasted", in(Phase::kRequeuedAgain, kAsked), running(kAsked),
       kAsked + kRunAfterRequeueS, Phase::kRunning, Transition::kNone},
      {"its parts still running", in(Phase::kCheckpointing, kAsked), running(5), kAsked + 10,
       Phase::kCheckpointing, Transition::kNone},
      {"no part of it running", in(Phase::kCheckpointing, kAsked), pending(), kAsked + 10,
       Phase::kWaiting, Transition::kCheckpointDone},
      {"ended while checkpointing", in(Phase::kCheckpointing, kAsked), ended(false), kAsked + 10,
       Phase::kEnded, Transition::kNone},
      {"moving, its old part still there", in(Phase::kMoving, kAsked), running(5, {"n1", "n2"}),
       kAsked + 10, Phase::kMoving, Transition::kNone},
      {"moved: just its target", in(Phase::kMoving, kAsked), running(5, {"n1"}), kAsked + 10,
       Phase::kRunning, Transition::kMoveDone},
      {"not moved in time", in(Phase::kMoving, kAsked), running(5, {"n1", "n2"}),
       kAsked + kMoveTimeoutS + 1, Phase::kRunning, Transition::kMoveTimedOut},
      {"finishing, its script still running", in(Phase::kFinishing), running(5), kAsked + 10,
       Phase::kFinishing, Transition::kNone},
      {"finished", in(Phase::kFinishing), ended(false), kAsked + 10, Phase::kEnded,
       Transition::kNone},
      {"finished, its script failing", in(Phase::kFinishing), ended(true), kAsked + 10,
       Phase::kEnded, Transition::kNone},
      {"requeued by its user after training finished", in(Phase::kFinishing), pending(),
       kAsked + 10, Phase::kWaiting, Transition::kNone},
  };
  for (const auto& c : cases) {
    const Observed observed = observe(c.from, c.job, c.now);
    EXPECT_EQ(toString(observed.next.phase), std::string(toString(c.to))) << c.what;
    EXPECT_EQ(observed.transition, c.transition) << c.what;
  }
}

TEST(JobLifecycleTest, AShrinkGivenUpMakesEveryLaterResizeARequeue) {
  const Observed timed_out = observe(in(Phase::kShrinking, kAsked), running(5),
                                     kAsked + kShrinkTimeoutS + 1);
  EXPECT_TRUE(timed_out.next.shrinks_by_requeue);
  EXPECT_FALSE(mayShrinkInPlace(timed_out.next));
  const Observed requeued = observe(timed_out.next, pending(), kAsked + 500);
  EXPECT_TRUE(requeued.next.shrinks_by_requeue);
  EXPECT_FALSE(mayShrinkInPlace(observe(requeued.next, running(kAsked + 600), kAsked + 700).next));
  EXPECT_TRUE(mayShrinkInPlace(in(Phase::kRunning)));
  EXPECT_FALSE(mayShrinkInPlace(in(Phase::kShrunk)));
  EXPECT_FALSE(mayShrinkInPlace(in(Phase::kShrinking, kAsked)));
}

TEST(JobLifecycleTest, AJobWhoseTrainingFinishedIsLeftAloneUntilItTrainsAgain) {
  for (Phase phase : {Phase::kRunning, Phase::kShrunk, Phase::kRequeued, Phase::kRequeuedAgain,
                      Phase::kFinishing}) {
    const Lifecycle finishing = afterReport(in(phase, kAsked), true);
    EXPECT_EQ(finishing.phase, Phase::kFinishing) << toString(phase);
    EXPECT_EQ(treatmentOf(finishing, running(5), RoundContext{kAsked + 1, false, {}}),
              Treatment::kAwaitEnd)
        << toString(phase);
  }
  for (Phase phase : {Phase::kWaiting, Phase::kShrinking, Phase::kCheckpointing, Phase::kMoving}) {
    EXPECT_EQ(afterReport(in(phase, kAsked), true).phase, phase) << toString(phase);
  }
  for (Phase phase : {Phase::kWaiting, Phase::kRunning, Phase::kShrunk, Phase::kShrinking,
                      Phase::kRequeued, Phase::kCheckpointing, Phase::kMoving}) {
    EXPECT_EQ(afterReport(in(phase, kAsked), false).phase, phase) << toString(phase);
  }
  // A second stage of its script trains under another pollux-agent, which reports.
  EXPECT_EQ(afterReport(in(Phase::kFinishing), false).phase, Phase::kRunning);
  Lifecycle given_up = in(Phase::kRunning);
  given_up.shrinks_by_requeue = given_up.grows_by_requeue = true;
  const Lifecycle finishing = afterReport(given_up, true);
  EXPECT_TRUE(finishing.shrinks_by_requeue && finishing.grows_by_requeue);
}

TEST(JobLifecycleTest, ActionsMoveTheJobOn) {
  Action requeue{7, ActionKind::kRequeue, "a100", 4, {"n1"}, "grow"};
  Action shrink{7, ActionKind::kShrink, "a100", 4, {"n1"}, "shrink"};
  Action start{7, ActionKind::kStart, "a100", 4, {"n1"}, "start"};
  Action checkpoint{8, ActionKind::kCheckpoint, "", 0, {}, "move", false, 7};
  Action move_part{9, ActionKind::kStart, "a100", 4, {"n1"}, "move", false, 7, kTarget};
  struct {
    Lifecycle from;
    const Action& action;
    Phase to;
  } const cases[] = {
      {in(Phase::kRunning), requeue, Phase::kRequeued},
      {in(Phase::kShrunk), requeue, Phase::kRequeued},
      {in(Phase::kRequeued, 10), requeue, Phase::kRequeuedAgain},
      {in(Phase::kRequeuedAgain, 10), requeue, Phase::kRequeuedAgain},
      {in(Phase::kRunning), shrink, Phase::kShrinking},
      {in(Phase::kWaiting), start, Phase::kWaiting},
      {in(Phase::kRequeued, 10), start, Phase::kRequeued},
      {in(Phase::kRunning), checkpoint, Phase::kCheckpointing},
      {in(Phase::kCheckpointing, 10), checkpoint, Phase::kCheckpointing},
      {in(Phase::kRunning), move_part, Phase::kMoving},
  };
  for (const auto& c : cases) {
    const Lifecycle next = afterAction(c.from, c.action, kAsked);
    EXPECT_EQ(next.phase, c.to) << toString(c.from.phase) << " + " << toString(c.action.kind);
  }
  const Lifecycle shrinking = afterAction(in(Phase::kRunning), shrink, kAsked);
  EXPECT_DOUBLE_EQ(shrinking.since, kAsked);
  ASSERT_TRUE(shrinking.shrink_target.has_value());
  EXPECT_EQ(shrinking.shrink_target->nodes.at("n1"), 4);
  EXPECT_DOUBLE_EQ(afterAction(in(Phase::kRunning), requeue, kAsked).since, kAsked);
  EXPECT_EQ(afterAction(in(Phase::kRunning), move_part, kAsked).move_target, kTarget);
  // Its second part's checkpoint action in the same round keeps the first one's time.
  EXPECT_DOUBLE_EQ(afterAction(in(Phase::kCheckpointing, 10), checkpoint, kAsked).since, 10);
}

TEST(JobLifecycleTest, TreatmentFollowsThePhaseAndTheRound) {
  SlurmJob releasing = pending();
  releasing.completing = true;
  releasing.requested_nodes = {"n1"};
  SlurmJob held_releasing = releasing;
  held_releasing.held = true;
  const RoundContext steady{kAsked + 100, false, {}};
  const RoundContext settling{kAsked + 100, true, {}};
  const RoundContext n2_unregistered{kAsked + 100, false, {"n2"}};
  struct {
    const char* what;
    Lifecycle lifecycle;
    SlurmJob job;
    RoundContext round;
    Treatment treatment;
  } const cases[] = {
      {"running", in(Phase::kRunning), running(5), steady, Treatment::kDecide},
      {"pending", in(Phase::kWaiting), pending(), steady, Treatment::kDecide},
      {"shrinking", in(Phase::kShrinking, kAsked), running(5), steady, Treatment::kAwaitShrink},
      {"checkpointing", in(Phase::kCheckpointing, kAsked), running(5), steady,
       Treatment::kAwaitCheckpoint},
      {"moving", in(Phase::kMoving, kAsked), running(5), steady, Treatment::kAwaitMove},
      {"placed while its last run releases its nodes", in(Phase::kRequeued, kAsked), releasing,
       steady, Treatment::kAwaitLastRun},
      {"held while its last run releases its nodes", in(Phase::kRequeued, kAsked),
       held_releasing, steady, Treatment::kDecide},
      {"failed after Pollux's requeue", in(Phase::kRequeued, kAsked), ended(true), steady,
       Treatment::kRequeueAgain},
      {"failed after Pollux's repeated requeue", in(Phase::kRequeuedAgain, kAsked), ended(true),
       steady, Treatment::kDecide},
      {"the stopped run still shown", in(Phase::kRequeued, kAsked), running(kAsked - 100), steady,
       Treatment::kRequeueAgain},
      {"the stopped run shown while slurmctld settles", in(Phase::kRequeued, kAsked),
       running(kAsked - 100), settling, Treatment::kDecideNoStop},
      {"the stopped run shown too briefly to tell", in(Phase::kRequeued, kAsked),
       running(kAsked - 100), RoundContext{kAsked + kRunAfterRequeueS - 1, false, {}},
       Treatment::kDecide},
      {"the run after the requeue", in(Phase::kRequeued, kAsked + 0.7), running(kAsked), steady,
       Treatment::kDecide},
      {"running while slurmctld settles", in(Phase::kRunning), running(5), settling,
       Treatment::kDecideNoStop},
      {"running on a node not registered", in(Phase::kRunning), running(5), n2_unregistered,
       Treatment::kDecideNoStop},
      {"pending while slurmctld settles", in(Phase::kWaiting), pending(), settling,
       Treatment::kDecide},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(treatmentOf(c.lifecycle, c.job, c.round), c.treatment) << c.what;
  }
}

TEST(JobLifecycleTest, PhasesAreNamedBothWays) {
  for (Phase phase : {Phase::kWaiting, Phase::kRunning, Phase::kShrinking, Phase::kShrunk,
                      Phase::kRequeued, Phase::kRequeuedAgain, Phase::kCheckpointing,
                      Phase::kMoving, Phase::kFinishing, Phase::kEnded}) {
    EXPECT_EQ(phaseNamed(toString(phase)), phase);
  }
  EXPECT_EQ(phaseNamed("sleeping"), std::nullopt);
  EXPECT_EQ(std::string(toString(Phase::kRequeuedAgain)), "requeued_again");
}

}  // namespace
}  // namespace pollux::service
