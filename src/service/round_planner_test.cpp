// SPDX-License-Identifier: GPL-2.0-or-later
#include "round_planner.hpp"
#include "site_policy.hpp"

#include <gtest/gtest.h>

#include "common/policy/configurations.hpp"

namespace pollux::service {
namespace {

const Action requeueOf7{7, ActionKind::kRequeue, "", 0, {}, "requeued"};

// Two nodes of 2 GPUs and 4 free CPUs each, and one pending adaptive job that Slurm shows
// with the task count of an earlier placement on two nodes (Slurm raises it, never lowers it).
Round roundWithPendingJob(const std::string& comment, const ResourceRequest& resources) {
  Round round;
  round.now = 1000;
  for (const char* name : {"n1", "n2"}) {
    SlurmNode node;
    node.name = name;
    node.gpus = GpuGres{"a100", 2};
    node.free_cpus = 4;
    round.nodes.push_back(node);
  }
  round.partitions["gpu"] = {"n1", "n2"};
  SlurmJob job;
  job.id = 7;
  job.state = JobState::kPending;
  job.eligible_time = kPolluxHoldTime;
  job.submit_time = 900;
  job.comment = comment;
  job.partitions = {"gpu"};
  job.num_nodes = 2;
  job.gpu_request.per_node = "gres:gpu:2";
  job.gpu_request.nodes = 2;
  job.gpu_request.tasks = 2;
  job.resources = resources;
  readRequests(job);
  round.jobs.push_back(job);
  return round;
}

RoundPlan plan(const Round& round) {
  JobStore store;
  const Log quiet = [](LogLevel, const std::string&) {};
  return planRound(store, round, config::PolicyConfig{}, false, quiet);
}

PlannedAction onlyAction(const Round& round) {
  const RoundPlan plan = service::plan(round);
  EXPECT_EQ(plan.actions.size(), 1u);
  return plan.actions.empty() ? PlannedAction{} : plan.actions.front();
}

ResourceRequest tasksPerNode(int ntasks_per_node, int cpus_per_task) {
  ResourceRequest resources;
  resources.ntasks_per_node = ntasks_per_node;
  resources.cpus_per_task = cpus_per_task;
  resources.min_cpus_per_node = ntasks_per_node * cpus_per_task;
  return resources;
}

// The job's START action: on `nodes` nodes, with `tasks` tasks and `cpus` minimum CPUs.
void expectStart(const std::string& comment, const ResourceRequest& resources, size_t nodes,
                 int tasks, int cpus) {
  const PlannedAction start = onlyAction(roundWithPendingJob(comment, resources));
  EXPECT_EQ(start.action.kind, ActionKind::kStart);
  EXPECT_EQ(start.action.nodes.size(), nodes);
  EXPECT_EQ(start.num_tasks, tasks);
  EXPECT_EQ(start.min_cpus, cpus);
}

TEST(RoundPlannerTest, PlacementOnFewerNodesLowersTasksAndCpus) {
  expectStart("adaptive:min_gpus=2,max_gpus=2", tasksPerNode(1, 2), 1, 1, 2);
}

TEST(RoundPlannerTest, TasksFollowNodesTimesTasksPerNode) {
  expectStart("adaptive:min_gpus=4,max_gpus=4", tasksPerNode(2, 1), 2, 4, 4);
}

TEST(RoundPlannerTest, OneTaskPerNodeWithoutNtasksPerNode) {
  expectStart("adaptive:min_gpus=2,max_gpus=2", tasksPerNode(0, 1), 1, 1, 1);
}

TEST(RoundPlannerTest, NtasksPerGpuLeavesTheCountsToSlurm) {
  ResourceRequest resources = tasksPerNode(0, 1);
  resources.ntasks_per_gpu = 1;
  expectStart("adaptive:min_gpus=2,max_gpus=2", resources, 1, 0, 0);
}

TEST(RoundPlannerTest, AJobPlacedWhileItsLastRunEndsWaitsAsPlaced) {
  // Requeued to grow onto n1,n2: its last run, checkpointing, still holds n1's free CPU.
  Round round = roundWithPendingJob("adaptive:min_gpus=2,max_gpus=2", tasksPerNode(1, 1));
  round.nodes[0].free_cpus = 0;
  round.nodes[0].gpus_used = 1;
  SlurmJob& requeued = round.jobs[0];
  requeued.held = false;
  requeued.completing = true;
  requeued.requested_nodes = {"n1", "n2"};
  requeued.gpu_request.per_node = "gres:gpu:1";
  readRequests(requeued);
  EXPECT_TRUE(plan(round).actions.empty());
  requeued.completing = false;  // n1's CPU is another job's: Slurm would not start it there
  const PlannedAction moved = onlyAction(round);
  EXPECT_EQ(moved.action.kind, ActionKind::kStart);
  EXPECT_EQ(moved.action.nodes, std::vector<std::string>{"n2"});
}

// A report of job 7 on one node's 2 a100 GPUs, without a fitted model.
schema::GoodputReport reportOf7() {
  schema::GoodputReport report;
  report.job_id = "7";
  report.gpu_type = "a100";
  report.placement = {1, 2};
  report.grad = {1, 3};
  report.limits = {64, 1024, 16, 128, true};
  return report;
}

TEST(RoundPlannerTest, TheSnapshotCarriesTheDeclaredLengthOfTheJobsReport) {
  const Round round = roundWithPendingJob("adaptive:min_gpus=2,max_gpus=2", tasksPerNode(1, 1));
  JobStore store;
  store.observe(round.jobs, 0);
  schema::GoodputReport report = reportOf7();
  report.progress = {6400, 1};
  report.length = policy::DeclaredLength{6400, 64000};
  store.acceptReport(report);
  const Log quiet = [](LogLevel, const std::string&) {};
  policy::Snapshot seen;
  planRound(store, round, config::PolicyConfig{}, false, quiet, &seen);
  ASSERT_EQ(seen.jobs.size(), 1u);
  ASSERT_TRUE(seen.jobs[0].length.has_value());
  EXPECT_DOUBLE_EQ(seen.jobs[0].length->progress, 6400);
  EXPECT_DOUBLE_EQ(seen.jobs[0].length->target, 64000);
  ASSERT_TRUE(store.records().at("7").decision.has_value());  // the round's, remaining_s with it

  report.length.reset();  // the trainer stopped declaring (or an older agent)
  store.acceptReport(report);
  planRound(store, round, config::PolicyConfig{}, false, quiet, &seen);
  EXPECT_FALSE(seen.jobs[0].length.has_value());
}

// The lines logSolverTrouble writes for `stats`, as "LEVEL message".
std::vector<std::string> troubleLines(const policy::Stats& stats) {
  std::vector<std::string> lines;
  logSolverTrouble(stats, [&](LogLevel level, const std::string& message) {
    lines.push_back(std::string(level == LogLevel::kError ? "error " : "info ") + message);
  });
  return lines;
}

// Pollux requeued job 7, then slurmctld restarted as the job started again: its srun could
// not reach slurmctld and the job ended FAILED. It is requeued once more, and only once.
TEST(RoundPlannerTest, AJobThatFailsRightAfterARequeueIsRequeuedOnceMore) {
  Round round = roundWithPendingJob("adaptive:min_gpus=2,max_gpus=2", tasksPerNode(1, 1));
  SlurmJob& job = round.jobs[0];
  JobStore store;
  store.observe(round.jobs, 0);
  store.recordAction(requeueOf7, 990);
  job.state = JobState::kOther;
  job.failed = true;
  job.end_time = 995;
  const Log quiet = [](LogLevel, const std::string&) {};
  const RoundPlan first = planRound(store, round, config::PolicyConfig{}, false, quiet);
  ASSERT_EQ(first.actions.size(), 1u);
  EXPECT_EQ(first.actions[0].action.kind, ActionKind::kRequeue);
  EXPECT_TRUE(first.actions[0].action.nodes.empty());  // placed again by the next round
  EXPECT_NE(first.actions[0].admin_comment.find("requeued once more"), std::string::npos);

  store.recordAction(requeueOf7, 1000);  // the repeat was dropped as well
  EXPECT_TRUE(planRound(store, round, config::PolicyConfig{}, false, quiet).actions.empty());

  JobStore completed;  // a run that ended otherwise (its trainer finished, or a cancel)
  job.state = JobState::kPending;
  completed.observe(round.jobs, 0);
  completed.recordAction(requeueOf7, 990);
  job.state = JobState::kOther;
  job.failed = false;
  EXPECT_TRUE(planRound(completed, round, config::PolicyConfig{}, false, quiet).actions.empty());
}

// Pollux requeued running job 7 at 960, then slurmctld was killed before it saved that: back,
// it shows the job RUNNING from its start at 950, though the requeue stopped that run. Once
// slurmctld has settled and 30 s have passed since the requeue, the job is requeued once more.
TEST(RoundPlannerTest, AStoppedRunStillShownRunningIsRequeuedOnceMore) {
  Round round = roundWithPendingJob("adaptive:min_gpus=2,max_gpus=2", tasksPerNode(1, 1));
  SlurmJob& job = round.jobs[0];
  job.state = JobState::kRunning;
  job.held = false;
  job.start_time = 950;
  job.nodes = {"n1", "n2"};
  JobStore store;
  store.observe(round.jobs, 0);
  store.recordAction(requeueOf7, 960.4);
  const Log quiet = [](LogLevel, const std::string&) {};
  const auto actions = [&](double now, bool settling) {
    round.now = now;
    return planRound(store, round, config::PolicyConfig{}, settling, quiet).actions;
  };
  EXPECT_TRUE(actions(985, false).empty());  // the requeue may still be under way
  EXPECT_TRUE(actions(1000, true).empty());  // slurmctld settles after its start
  const auto repeat = actions(1000, false);
  ASSERT_EQ(repeat.size(), 1u);
  EXPECT_EQ(repeat[0].action.kind, ActionKind::kRequeue);
  EXPECT_TRUE(repeat[0].action.nodes.empty());
  EXPECT_NE(repeat[0].admin_comment.find("requeued once more"), std::string::npos);

  store.recordAction(requeueOf7, 1000);  // and that requeue was lost too: not again
  EXPECT_TRUE(actions(1040, false).empty());

  JobStore restarted;  // the run after the requeue (started at 960) is not a stopped one
  restarted.observe(round.jobs, 0);
  restarted.recordAction(requeueOf7, 960.4);
  job.start_time = 960;
  round.now = 1000;
  EXPECT_TRUE(planRound(restarted, round, config::PolicyConfig{}, false, quiet).actions.empty());
}

// Job 7 runs on 2 GPUs of n1, which an admin has since taken out of its partition.
Round roundWithJobOnANodeLeftOutOfItsPartition() {
  Round round = roundWithPendingJob("adaptive:min_gpus=2,max_gpus=2", tasksPerNode(1, 1));
  round.partitions["gpu"] = {"n2"};
  SlurmJob& job = round.jobs[0];
  job.state = JobState::kRunning;
  job.eligible_time = 100;
  job.start_time = 100;
  job.nodes = {"n1"};
  job.gpus_per_node = GpuGres{"a100", 2};
  round.nodes[0].gpus_used = 2;
  return round;
}

// The policy moves job 7 to n2 by requeue, unless Slurm's view of it may predate its last
// requeue.
TEST(RoundPlannerTest, NoRunningJobIsRequeuedWhileSlurmsViewOfItMayBeStale) {
  Round round = roundWithJobOnANodeLeftOutOfItsPartition();
  const Log quiet = [](LogLevel, const std::string&) {};
  const auto planned = [&](bool settling) {
    JobStore store;
    return planRound(store, round, config::PolicyConfig{}, settling, quiet);
  };
  const RoundPlan moved = planned(false);
  ASSERT_EQ(moved.actions.size(), 1u);
  EXPECT_EQ(moved.actions[0].action.kind, ActionKind::kRequeue);

  const RoundPlan settling = planned(true);
  EXPECT_TRUE(settling.actions.empty());
  ASSERT_EQ(settling.problems.size(), 1u);
  EXPECT_NE(settling.problems[0].find("JobId=7: requeue waits until slurmctld has settled"),
            std::string::npos)
      << settling.problems[0];

  round.nodes[0].registered = false;
  const RoundPlan unregistered = planned(false);
  EXPECT_TRUE(unregistered.actions.empty());
  ASSERT_EQ(unregistered.problems.size(), 1u);
  EXPECT_NE(unregistered.problems[0].find("waits until its nodes register"), std::string::npos)
      << unregistered.problems[0];
}

// Job 7 there, whose agent reported that its training finished: its script winds down (an
// evaluation, a copy-out), and a requeue now would run it once more.
TEST(RoundPlannerTest, AJobWhoseTrainingFinishedIsNotChanged) {
  const Round round = roundWithJobOnANodeLeftOutOfItsPartition();
  JobStore store;
  store.observe(round.jobs, 0);
  schema::GoodputReport report = reportOf7();
  report.training_finished = true;
  store.acceptReport(report);
  const Log quiet = [](LogLevel, const std::string&) {};
  policy::Snapshot seen;
  const RoundPlan plan = planRound(store, round, config::PolicyConfig{}, false, quiet, &seen);
  EXPECT_TRUE(plan.actions.empty());
  EXPECT_TRUE(plan.problems.empty());
  ASSERT_EQ(seen.jobs.size(), 1u);  // its GPUs are not free to others
  EXPECT_EQ(seen.jobs[0].current->nodes.at("n1"), 2);
}

// While slurmctld settles after its start, a node may still retry its report that a run
// ended; a job started there meanwhile could not use its GPUs on 22.05. No job starts.
TEST(RoundPlannerTest, NoJobStartsWhileSlurmctldSettles) {
  const Round round = roundWithPendingJob("adaptive:min_gpus=2,max_gpus=4", tasksPerNode(1, 1));
  const Log quiet = [](LogLevel, const std::string&) {};
  JobStore store;
  const RoundPlan settling = planRound(store, round, config::PolicyConfig{}, true, quiet);
  EXPECT_TRUE(settling.actions.empty());
  ASSERT_EQ(settling.problems.size(), 1u);
  EXPECT_EQ(settling.problems[0],
            "JobId=7: start waits until slurmctld has settled after its start");

  EXPECT_EQ(onlyAction(round).action.kind, ActionKind::kStart);  // settled: it starts
}

// The pending job of roundWithPendingJob as Pollux placed it on n1 (2 GPUs), Slurm's
// Reason `reason`; `store` knows Pollux placed it.
Round placedAndRefused(JobStore& store, const std::string& reason) {
  Round round = roundWithPendingJob("adaptive:min_gpus=1,max_gpus=2", tasksPerNode(1, 1));
  SlurmJob& job = round.jobs.front();
  job.eligible_time = 995;
  job.requested_nodes = {"n1"};
  job.num_nodes = 1;
  job.gpu_request.nodes = 1;
  job.state_reason = reason;
  readRequests(job);
  store.observe(round.jobs, 0);
  store.recordAction(Action{7, ActionKind::kStart, "a100", 2, {"n1"}, "start"}, 995);
  return round;
}

TEST(RoundPlannerTest, APlacementSlurmRefusesIsTakenBackAndNotMadeAgain) {
  JobStore store;
  const Log quiet = [](LogLevel, const std::string&) {};
  Round round = placedAndRefused(store, "AssocMaxJobsLimit");
  RoundPlan plan = planRound(store, round, config::PolicyConfig{}, false, quiet);
  ASSERT_EQ(plan.actions.size(), 1u);
  EXPECT_EQ(plan.actions[0].action.kind, ActionKind::kHold);
  EXPECT_EQ(plan.actions[0].action.why, "waiting: Reason=AssocMaxJobsLimit");
  EXPECT_EQ(store.records().at("7").waiting, "AssocMaxJobsLimit");
  // Held by Pollux now, under the same circumstances: left waiting, not placed so again.
  round.jobs[0].eligible_time = kPolluxHoldTime;
  round.jobs[0].state_reason = "BeginTime";
  EXPECT_TRUE(planRound(store, round, config::PolicyConfig{}, false, quiet).actions.empty());
  // Another job ended: circumstances changed, the job is placed again.
  round.nodes[1].usable = false;
  plan = planRound(store, round, config::PolicyConfig{}, false, quiet);
  ASSERT_EQ(plan.actions.size(), 1u);
  EXPECT_EQ(plan.actions[0].action.kind, ActionKind::kStart);
  EXPECT_TRUE(store.records().at("7").waiting.empty());
}

TEST(RoundPlannerTest, ARefusalOfItsSizeLeavesTheJobASmallerPlacement) {
  JobStore store;
  const Log quiet = [](LogLevel, const std::string&) {};
  const Round round = placedAndRefused(store, "QOSMaxGRESPerUser");
  const RoundPlan plan = planRound(store, round, config::PolicyConfig{}, false, quiet);
  ASSERT_EQ(plan.actions.size(), 1u);
  EXPECT_EQ(plan.actions[0].action.kind, ActionKind::kStart);
  EXPECT_EQ(plan.actions[0].action.gpus_per_node * plan.actions[0].action.nodes.size(), 1u);
}

TEST(RoundPlannerTest, OnlySlurmsHoldOfABadPlacementIsReleased) {
  Round round = roundWithPendingJob("adaptive:min_gpus=2,max_gpus=2", tasksPerNode(1, 1));
  round.jobs[0].held = true;
  round.jobs[0].state_reason = "BadConstraints";
  PlannedAction start = onlyAction(round);
  EXPECT_EQ(start.action.kind, ActionKind::kStart);
  EXPECT_TRUE(start.release);
  round.jobs[0].state_reason = "JobHeldUser";  // its user's hold: not placed, not released
  EXPECT_TRUE(plan(round).actions.empty());
  round.jobs[0].held = false;
  round.jobs[0].state_reason = "BeginTime";
  start = onlyAction(round);
  EXPECT_EQ(start.action.kind, ActionKind::kStart);
  EXPECT_FALSE(start.release);
}

TEST(RoundPlannerTest, ARequeueKeepsWhatTheTimeLimitHasLeft) {
  Round round = roundWithPendingJob("adaptive:min_gpus=2,max_gpus=2", tasksPerNode(1, 1));
  SlurmJob& job = round.jobs[0];
  job.state = JobState::kRunning;
  job.eligible_time = 0;
  job.start_time = round.now - 600;  // 10 of its 30 minutes used
  job.time_limit_min = 30;
  job.nodes = {"n1"};
  job.batch_host = "n1";
  job.num_nodes = 1;
  job.gpu_request.nodes = 1;
  job.excluded_nodes = {"n1"};  // excluded since: moved to n2 by requeue
  readRequests(job);
  const PlannedAction requeue = onlyAction(round);
  EXPECT_EQ(requeue.action.kind, ActionKind::kRequeue);
  EXPECT_EQ(requeue.time_limit_min, 20);
}

// A running job of the round's user on `node` with 2 GPUs there (none where `gpus` is 0).
SlurmJob runningWith(uint32_t id, const std::string& comment, const std::string& node,
                     int gpus = 2) {
  SlurmJob job;
  job.id = id;
  job.state = JobState::kRunning;
  job.comment = comment;
  job.partitions = {"gpu"};
  job.nodes = {node};
  job.num_nodes = 1;
  job.start_time = 900;
  if (gpus) job.gpu_request.per_node = "gres:gpu:" + std::to_string(gpus);
  readRequests(job);
  return job;
}

TEST(RoundPlannerTest, AJobPlacedWhereALiveMoveLeavesKeepsItsPlacementUntilItStarts) {
  // Job 7's GPUs are all in parts: it moves live from its part 8 on n1 to its part 10 on n2,
  // whose workers have not joined yet. Job 11 was placed on n1, where 8 still runs.
  Round round = roundWithPendingJob("adaptive:min_gpus=2,max_gpus=2", tasksPerNode(1, 1));
  SlurmJob& placed = round.jobs.front();
  placed.id = 11;
  placed.eligible_time = 995;
  placed.requested_nodes = {"n1"};
  placed.num_nodes = 1;
  placed.gpu_request.nodes = 1;
  readRequests(placed);
  round.jobs.push_back(runningWith(7, "adaptive:resize=live", "n1", 0));
  round.jobs.push_back(runningWith(8, "adaptive:part_of=7", "n1"));
  round.jobs.push_back(runningWith(10, "adaptive:part_of=7", "n2"));
  for (auto& node : round.nodes) {
    node.gpus_used = 2;
    node.free_cpus = 3;
  }
  JobStore store;
  store.observe(round.jobs, 990);
  Action move{10, ActionKind::kStart, "a100", 2, {"n2"}, "live move"};
  move.owner = 7;
  move.moves_to = policy::Allocation{"a100", {{"n2", 2}}};
  store.recordAction(move, 995);
  ASSERT_EQ(store.records().at("7").lifecycle.phase, Phase::kMoving);

  const Log quiet = [](LogLevel, const std::string&) {};
  policy::Snapshot seen;
  const RoundPlan plan = planRound(store, round, config::PolicyConfig{}, false, quiet, &seen);
  std::map<std::string, std::optional<policy::Allocation>> current;
  for (const auto& job : seen.jobs) current[job.id] = job.current;
  // The policy sees 7 on its target and 11 about to start on n1: no action moves either.
  ASSERT_EQ(current.count("7") + current.count("11"), 2u);
  for (const auto& job : seen.jobs) {
    if (job.id != "7") continue;
    EXPECT_EQ(job.parts, std::vector<policy::Allocation>{*current.at("7")});
  }
  EXPECT_EQ(current.at("7"), (policy::Allocation{"a100", {{"n2", 2}}}));
  EXPECT_EQ(current.at("11"), (policy::Allocation{"a100", {{"n1", 2}}}));
  for (const auto& planned : plan.actions) {
    EXPECT_NE(planned.action.job_id, 11u) << planned.action.why;
  }
}

// Job 7, its GPUs all in parts (`held`: each part's node and GPUs there, parts 8, 9, ...),
// moving live to `target` through its last part; its rounds, one after another.
class MovingJob {
 public:
  // `n2_type`: the type of n2's GPUs (n1's are a100).
  MovingJob(const std::vector<std::pair<std::string, int>>& held, const policy::Allocation& target,
            const std::string& n2_type = "a100")
      : round_(roundWithPendingJob("adaptive:min_gpus=1,max_gpus=1", tasksPerNode(1, 1))),
        nodes_(static_cast<int>(held.size())) {
    round_.nodes[1].gpus.type = n2_type;
    round_.jobs.front().id = 11;
    round_.jobs.push_back(runningWith(7, "adaptive:resize=live", "n1", 0));
    uint32_t part = 8;
    for (const auto& [node, gpus] : held) {
      round_.jobs.push_back(runningWith(part++, "adaptive:part_of=7", node, gpus));
      for (auto& slurm_node : round_.nodes) {
        if (slurm_node.name == node) slurm_node.gpus_used += gpus;
      }
    }
    store_.observe(round_.jobs, 990);
    const int per_node = policy::uniformPerNode(target);
    Action move{part - 1, ActionKind::kStart, target.gpu_type, per_node, {}, "live move"};
    for (const auto& [node, gpus] : target.nodes) move.nodes.push_back(node);
    move.owner = 7;
    move.moves_to = target;
    store_.recordAction(move, 995);
  }

  // A round after the job's report of `replicas` workers (0: none), 2 s after the last.
  RoundPlan round(int replicas = 0) {
    if (replicas > 0) {
      schema::GoodputReport report;
      report.job_id = "7";
      report.gpu_type = "a100";
      report.placement = {nodes_, replicas};
      report.grad = {1, 3};
      report.limits = {64, 1024, 16, 128, true};
      report.progress = {6400, 1};
      report.elastic = true;
      store_.acceptReport(report);
    }
    const Log quiet = [](LogLevel, const std::string&) {};
    round_.now += 2;
    return planRound(store_, round_, config::PolicyConfig{}, false, quiet, &seen_);
  }

  // How the last round saw the job.
  std::optional<policy::Allocation> seen() const {
    for (const auto& job : seen_.jobs) {
      if (job.id == "7") return job.current;
    }
    return std::nullopt;
  }

  // What the job's agent is told of its parts.
  std::optional<schema::PartStatus> part() const { return store_.records().at("7").part; }

 private:
  Round round_;
  int nodes_;
  JobStore store_;
  policy::Snapshot seen_;
};

TEST(RoundPlannerTest, AJobMovingLiveIsSeenOnItsTargetWithTheTargetsGpusPerNode) {
  // From its part 8 (1 GPU on n1) to its part 9 (2 GPUs on n2), whose workers join: the
  // policy sees it on n2 with both GPUs there, not with its old part's one a node.
  const policy::Allocation onto_two{"a100", {{"n2", 2}}};
  MovingJob growing({{"n1", 1}, {"n2", 2}}, onto_two);
  growing.round();
  EXPECT_EQ(growing.seen(), onto_two);
  // And from 2 GPUs on n1 to 1 on n2: with that one only.
  const policy::Allocation onto_one{"a100", {{"n2", 1}}};
  MovingJob shrinking({{"n1", 2}, {"n2", 1}}, onto_one);
  shrinking.round();
  EXPECT_EQ(shrinking.seen(), onto_one);
}

TEST(RoundPlannerTest, AMoveToAnotherNumberOfGpusANodeJoinsAWorkerPerGpuThenItsOldPartLeaves) {
  using State = schema::PartStatus::State;
  // From part 8 (1 GPU on n1) to part 9 (2 GPUs on n2): the agent is told to admit a worker
  // for each GPU of part 9; once its report counts all 3, part 8's workers leave, and once
  // it counts 2, part 8 ends.
  MovingJob growing({{"n1", 1}, {"n2", 2}}, {"a100", {{"n2", 2}}});
  growing.round(1);
  EXPECT_EQ(growing.part(), (schema::PartStatus{State::kRunning, 9, {"n2"}, {}, 2, "a100"}));
  growing.round(3);
  EXPECT_EQ(growing.part(), (schema::PartStatus{State::kLeaving, 8, {"n1"}, {}, 1, "a100"}));
  const RoundPlan left = growing.round(2);
  const auto cancel = std::find_if(left.actions.begin(), left.actions.end(), [](const auto& p) {
    return p.action.job_id == 8 && p.action.kind == ActionKind::kCancel;
  });
  ASSERT_NE(cancel, left.actions.end());
  EXPECT_NE(cancel->action.why.find("its workers left"), std::string::npos) << cancel->action.why;
  // From part 8 (2 GPUs on n1) to part 9 (1 GPU on n2): 3 workers are all of them.
  MovingJob shrinking({{"n1", 2}, {"n2", 1}}, {"a100", {{"n2", 1}}});
  shrinking.round(3);
  EXPECT_EQ(shrinking.part(), (schema::PartStatus{State::kLeaving, 8, {"n1"}, {}, 2, "a100"}));
}

TEST(RoundPlannerTest, AMoveToAnotherGpuTypeTellsTheAgentEachPartsType) {
  using State = schema::PartStatus::State;
  // From part 8 (1 a100 on n1) to part 9 (1 v100 on n2): the round sees the job on v100; its
  // agent is told part 9's type, so that it attributes no step to a100 once its workers have
  // joined, then that part 8, of a100, leaves.
  const policy::Allocation onto_v100{"v100", {{"n2", 1}}};
  MovingJob moving({{"n1", 1}, {"n2", 1}}, onto_v100, "v100");
  moving.round(1);
  EXPECT_EQ(moving.seen(), onto_v100);
  EXPECT_EQ(moving.part(), (schema::PartStatus{State::kRunning, 9, {"n2"}, {}, 1, "v100"}));
  moving.round(2);
  EXPECT_EQ(moving.part(), (schema::PartStatus{State::kLeaving, 8, {"n1"}, {}, 1, "a100"}));
}

TEST(RoundPlannerTest, TheRunningPartsOfAJobRequeuedWithoutItsLauncherCheckpointOnce) {
  // Job 7's GPUs are all in parts; its home's node failed and Slurm requeued it, its
  // launcher gone with it: its part 8 still trains on n1.
  Round round = roundWithPendingJob("adaptive:resize=live", tasksPerNode(1, 1));
  SlurmJob& home = round.jobs.front();
  home.restarts = 1;
  home.end_time = round.now + 600;  // a pending job's: Slurm's estimate
  round.jobs.push_back(runningWith(8, "adaptive:part_of=7", "n1"));
  JobStore store;
  const Log quiet = [](LogLevel, const std::string&) {};
  std::vector<Action> on7;  // none while its part checkpoints: its next run resumes from it
  const auto actionsOn8 = [&](const RoundPlan& plan) {
    std::vector<Action> on8;
    for (const auto& planned : plan.actions) {
      if (planned.action.job_id == 8) on8.push_back(planned.action);
      if (planned.action.job_id == 7) on7.push_back(planned.action);
    }
    return on8;
  };
  auto on8 = actionsOn8(planRound(store, round, config::PolicyConfig{}, false, quiet));
  ASSERT_EQ(on8.size(), 1u);
  EXPECT_EQ(on8[0].kind, ActionKind::kCheckpoint);
  EXPECT_EQ(on8[0].why, "JobId=7 ended or was requeued: its part checkpoints the training");
  round.now += kEndedJobPartGraceS - 1;  // asked once: left to checkpoint
  EXPECT_TRUE(actionsOn8(planRound(store, round, config::PolicyConfig{}, false, quiet)).empty());
  EXPECT_TRUE(on7.empty());
  round.now += 1;  // no longer of use
  on8 = actionsOn8(planRound(store, round, config::PolicyConfig{}, false, quiet));
  ASSERT_EQ(on8.size(), 1u);
  EXPECT_EQ(on8[0].kind, ActionKind::kCancel);
  EXPECT_TRUE(on7.empty());
  round.jobs.pop_back();  // the part has ended: the job is placed again
  round.now += 1;
  actionsOn8(planRound(store, round, config::PolicyConfig{}, false, quiet));
  EXPECT_EQ(on7.size(), 1u);
}

TEST(RoundPlannerTest, TheRunningPartsOfAJobSlurmStillCompletesAreLeftToItsLauncher) {
  // Job 7 was cancelled: Slurm completes it for KillWait while its launcher has its part 8
  // checkpoint, however long that takes within KillWait.
  Round round = roundWithPendingJob("adaptive:resize=live", tasksPerNode(1, 1));
  SlurmJob& home = round.jobs.front();
  home.state = JobState::kOther;
  home.completing = true;
  home.end_time = round.now;
  round.jobs.push_back(runningWith(8, "adaptive:part_of=7", "n1"));
  JobStore store;
  const Log quiet = [](LogLevel, const std::string&) {};
  const auto kindsOn8 = [&] {
    std::vector<ActionKind> kinds;
    for (const auto& planned :
         planRound(store, round, config::PolicyConfig{}, false, quiet).actions) {
      if (planned.action.job_id == 8) kinds.push_back(planned.action.kind);
    }
    return kinds;
  };
  EXPECT_EQ(kindsOn8(), std::vector<ActionKind>{ActionKind::kCheckpoint});
  round.now += 2 * kEndedJobPartGraceS;
  EXPECT_TRUE(kindsOn8().empty());
  round.jobs.front().completing = false;  // completed long ago: the part has no use
  EXPECT_EQ(kindsOn8(), std::vector<ActionKind>{ActionKind::kCancel});
}

TEST(RoundPlannerTest, SolverLimitsHitAreLoggedOneLineEach) {
  policy::Stats stats;
  stats.solver_status = "optimal";
  EXPECT_TRUE(troubleLines(stats).empty());

  stats.solver_status = "feasible";
  stats.work_limit_hits = 2;
  EXPECT_EQ(troubleLines(stats),
            std::vector<std::string>{"info solver work limit hit in 2 GLPK solve(s), as it "
                                     "would be on any host"});

  stats.solver_status = "time_limit";
  stats.work_limit_hits = 0;
  stats.time_limit_hits = 1;
  stats.kept_current = true;
  EXPECT_EQ(troubleLines(stats),
            (std::vector<std::string>{
                "error solver time_limit: round keeps every current allocation",
                "error solver wall-clock limit hit in 1 GLPK solve(s): this round depends on "
                "how busy the host was"}));
}

}  // namespace
}  // namespace pollux::service
