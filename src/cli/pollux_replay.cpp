// SPDX-License-Identifier: GPL-2.0-or-later
// pollux-replay: one recorded sched/pollux round (as pollux_dump_rounds writes it) planned
// again, offline: the plan JSON on stdout, or with --snapshot the policy snapshot the round
// gives (what pollux-policy reads); with --events, for rounds recorded one after another,
// the new work each shows since the one before, by the plugin's event-round rules.
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <json/json.h>

#include "common/invalid_input.hpp"
#include "common/slurm_text/adaptive_comment.hpp"
#include "common/schema/snapshot_json.hpp"
#include "service/event_rounds.hpp"
#include "service/round_json.hpp"
#include "service/round_planner.hpp"
#include "settings/settings.hpp"
#include "io/text_file.hpp"

namespace {

using namespace pollux::service;

constexpr const char* kUsage =
    "usage: pollux-replay ROUND.json > plan.json\n"
    "       pollux-replay --snapshot ROUND.json > snapshot.json\n"
    "       pollux-replay --events ROUND.json...\n"
    "  Plans a round recorded by sched/pollux (SchedulerParameters pollux_dump_rounds=DIR)\n"
    "  with the recorded settings and job store, as the plugin did (see pollux-replay(1));\n"
    "  --snapshot writes the policy snapshot of the round instead (pollux-policy(1) reads it);\n"
    "  --events says, for rounds recorded one after another, which show new work that would\n"
    "  have started an event round (pollux_event_delay), and why.\n";

const char* levelName(LogLevel level) {
  switch (level) {
    case LogLevel::kError: return "error";
    case LogLevel::kInfo: return "info";
    case LogLevel::kDebug: return "debug";
  }
  return "error";
}

// Throws pollux::InvalidInput naming the file and the offending value.
RecordedRound readRound(const std::string& path) {
  const auto text = pollux::io::readTextFile(path);
  if (!text) throw std::runtime_error("cannot read " + path);
  try {
    return parseRecordedRound(*text);
  } catch (const pollux::InvalidInput& error) {
    throw pollux::InvalidInput(path + ": " + error.what());
  }
}

// The round planned again; throws PolicyFailed as the plugin's round would fail.
RoundPlan planAgain(const RecordedRound& recorded, pollux::policy::Snapshot* snapshot) {
  const auto parsed =
      pollux::settings::parseConfig(recorded.pollux_conf, recorded.scheduler_parameters);
  for (const auto& message : parsed.errors) std::cerr << "pollux-replay: settings: " << message << "\n";
  JobStore store;
  store.restore(recorded.jobs);
  const Log log = [](LogLevel level, const std::string& message) {
    std::cerr << "pollux-replay: " << levelName(level) << ": " << message << "\n";
  };
  return planRound(store, recorded.round, parsed.config, recorded.settling, log, snapshot);
}

Json::Value replay(const std::string& path, bool snapshot_only) {
  const RecordedRound recorded = readRound(path);
  try {
    pollux::policy::Snapshot snapshot;
    const RoundPlan plan = planAgain(recorded, &snapshot);
    return snapshot_only ? pollux::schema::snapshotToJson(snapshot) : planToJson(plan);
  } catch (const PolicyFailed& problem) {
    Json::Value failed;
    failed["policy_failed"] = problem.what();
    return failed;
  }
}

// What the plugin's look for new work sees of a recorded job (a suspended one: ended).
EventJob eventJobOf(const SlurmJob& job) {
  const EventJobState state = job.state == JobState::kPending   ? EventJobState::kPending
                              : job.state == JobState::kRunning ? EventJobState::kActive
                                                                : EventJobState::kDone;
  return {job.id, state, pollux::schema::asksForAdaptive(job.comment), job.completing,
          job.restarts};
}

// What the plan did, as if Slurm took every action.
std::vector<RoundAction> actionsOf(const RoundPlan& plan) {
  std::vector<RoundAction> acted;
  for (const auto& planned : plan.actions) {
    const Action& action = planned.action;
    const bool requeued = action.kind == ActionKind::kRequeue;
    acted.push_back({action.job_id, action.kind == ActionKind::kStart, requeued,
                     requeued && !action.nodes.empty()});
  }
  return acted;
}

// One line per round: the new work it shows since the round before as its plan, replayed,
// left it (the first round: since none).
void reportEvents(const std::vector<std::string>& paths) {
  RoundMemory memory;
  for (const auto& path : paths) {
    const RecordedRound recorded = readRound(path);
    std::vector<EventJob> jobs;
    for (const auto& job : recorded.round.jobs) jobs.push_back(eventJobOf(job));
    const auto work = memory.newWork(jobs);
    std::cout << path << ": " << (work ? "event round: " + work->reason : "no new work") << "\n";
    std::vector<RoundAction> acted;
    try {
      acted = actionsOf(planAgain(recorded, nullptr));
    } catch (const PolicyFailed& problem) {
      std::cerr << "pollux-replay: " << path << ": policy failed: " << problem.what() << "\n";
    }
    memory.record(jobs, acted);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  const bool help = args.size() == 1 && (args[0] == "-h" || args[0] == "--help");
  const bool snapshot_only = args.size() == 2 && args[0] == "--snapshot";
  const bool events = args.size() >= 2 && args[0] == "--events";
  const bool one_round = args.size() == 1 && args[0] != "--snapshot" && args[0] != "--events";
  if (help || !(snapshot_only || events || one_round)) {
    (help ? std::cout : std::cerr) << kUsage;
    return help ? 0 : 2;
  }
  try {
    if (events) {
      reportEvents({args.begin() + 1, args.end()});
      return 0;
    }
    Json::StreamWriterBuilder writer;
    writer["indentation"] = "  ";
    std::cout << Json::writeString(writer, replay(args.back(), snapshot_only)) << "\n";
    return 0;
  } catch (const pollux::InvalidInput& error) {
    std::cerr << "pollux-replay: invalid round " << error.what() << "\n";
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "pollux-replay: " << error.what() << "\n";
    return 1;
  }
}
