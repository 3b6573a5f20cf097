// pollux-replay: one recorded sched/pollux round (as pollux_dump_rounds writes it) planned
// again, offline: the plan JSON on stdout, or with --snapshot the policy snapshot the round
// gives (what pollux-policy reads).
#include <iostream>
#include <stdexcept>
#include <string>

#include <json/json.h>

#include "common/invalid_input.hpp"
#include "common/schema/snapshot_json.hpp"
#include "service/round_json.hpp"
#include "service/round_planner.hpp"
#include "settings/settings.hpp"
#include "io/text_file.hpp"

namespace {

using namespace pollux::service;

constexpr const char* kUsage =
    "usage: pollux-replay ROUND.json > plan.json\n"
    "       pollux-replay --snapshot ROUND.json > snapshot.json\n"
    "  Plans a round recorded by sched/pollux (SchedulerParameters pollux_dump_rounds=DIR)\n"
    "  with the recorded settings and job store, as the plugin did (see pollux-replay(1));\n"
    "  --snapshot writes the policy snapshot of the round instead (pollux-policy(1) reads it).\n";

const char* levelName(LogLevel level) {
  switch (level) {
    case LogLevel::kError: return "error";
    case LogLevel::kInfo: return "info";
    case LogLevel::kDebug: return "debug";
  }
  return "error";
}

Json::Value replay(const std::string& path, bool snapshot_only) {
  const auto text = pollux::io::readTextFile(path);
  if (!text) throw std::runtime_error("cannot read " + path);
  const RecordedRound recorded = parseRecordedRound(*text);
  const auto parsed =
      pollux::settings::parseConfig(recorded.pollux_conf, recorded.scheduler_parameters);
  for (const auto& message : parsed.errors) std::cerr << "pollux-replay: settings: " << message << "\n";
  JobStore store;
  store.restore(recorded.jobs);
  const Log log = [](LogLevel level, const std::string& message) {
    std::cerr << "pollux-replay: " << levelName(level) << ": " << message << "\n";
  };
  try {
    pollux::policy::Snapshot snapshot;
    const RoundPlan plan =
        planRound(store, recorded.round, parsed.config, recorded.settling, log, &snapshot);
    return snapshot_only ? pollux::schema::snapshotToJson(snapshot) : planToJson(plan);
  } catch (const PolicyFailed& problem) {
    Json::Value failed;
    failed["policy_failed"] = problem.what();
    return failed;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bool snapshot_only = argc == 3 && std::string(argv[1]) == "--snapshot";
  if ((argc != 2 && !snapshot_only) || std::string(argv[1]) == "-h" ||
      std::string(argv[1]) == "--help" || std::string(argv[argc - 1]) == "--snapshot") {
    const bool help =
        argc == 2 && (std::string(argv[1]) == "-h" || std::string(argv[1]) == "--help");
    (help ? std::cout : std::cerr) << kUsage;
    return help ? 0 : 2;
  }
  const char* const path = argv[argc - 1];
  try {
    Json::StreamWriterBuilder writer;
    writer["indentation"] = "  ";
    std::cout << Json::writeString(writer, replay(path, snapshot_only)) << "\n";
    return 0;
  } catch (const pollux::InvalidInput& error) {
    std::cerr << "pollux-replay: invalid round " << path << ": " << error.what() << "\n";
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "pollux-replay: " << error.what() << "\n";
    return 1;
  }
}
