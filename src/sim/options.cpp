// SPDX-License-Identifier: GPL-2.0-or-later
#include "options.hpp"

#include <getopt.h>

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "settings/policy_config.hpp"
#include "common/text_number.hpp"

namespace pollux::sim {

const char* const kUsage =
    "usage: pollux-sim --workload FILE\n"
    "                  --policy pollux|pollux-goodput|pollux-unaware|tiresias|fifo\n"
    "                  [--cluster TYPE:NODESxGPUS,...] [--profiles DIR] [--json]\n"
    "                  [--timeline FILE.csv] [--plot FILE.png] [--round S]\n"
    "                  [--event-delay S]\n"
    "                  [--restart-cost APP=S,...] [--join-startup APP=S,...]\n"
    "                  [--jobs FILE.csv]\n"
    "                  [--params pollux_KEY=VALUE,...]\n"
    "                  [--declare-factor F] [--undeclared-share S]\n"
    "                  [--resize live|parts|restart]\n";

namespace {

double parseSeconds(const std::string& text, const std::string& what, double min_value) {
  const auto value = parseFiniteNumber(text);
  if (!value || *value < min_value || *value > 1e7) {
    throw std::invalid_argument(what + " needs a number of seconds, got '" + text + "'");
  }
  return *value;
}

void requireKnownPolicy(const std::string& policy) {
  for (const char* known : {"pollux", "pollux-goodput", "pollux-unaware", "tiresias", "fifo"}) {
    if (policy == known) return;
  }
  throw std::invalid_argument(
      "unknown policy '" + policy +
      "' (expected pollux, pollux-goodput, pollux-unaware, tiresias or fifo)");
}

double parseBounded(const std::string& text, const std::string& what, double min_value,
                    double max_value) {
  const auto value = parseFiniteNumber(text);
  if (!value || *value < min_value || *value > max_value) {
    std::ostringstream range;
    range << what << " needs a number in [" << min_value << ", " << max_value << "], got '"
          << text << "'";
    throw std::invalid_argument(range.str());
  }
  return *value;
}

Resize parseResize(const std::string& text) {
  if (text == "live") return Resize::kLive;
  if (text == "parts") return Resize::kParts;
  if (text == "restart") return Resize::kRestart;
  throw std::invalid_argument("--resize expects live, parts or restart, got '" + text + "'");
}

}  // namespace

std::map<std::string, double> defaultRestartCosts() {
  return {{"cifar10", 50}, {"deepspeech2", 25}, {"bert", 120},
          {"yolov3", 80},  {"imagenet", 250},   {"ncf", 15}};
}

std::map<std::string, double> parseSecondsByApplication(const std::string& text,
                                                        const std::string& option) {
  std::map<std::string, double> costs;
  std::stringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    const size_t equals = item.find('=');
    if (equals == std::string::npos || equals == 0) {
      throw std::invalid_argument(option + " expects APP=SECONDS,..., got '" + item + "'");
    }
    costs[item.substr(0, equals)] =
        parseSeconds(item.substr(equals + 1), option + " " + item.substr(0, equals), 0);
  }
  if (costs.empty()) throw std::invalid_argument(option + " expects APP=SECONDS,...");
  return costs;
}

policy::Params parsePolicyParams(const std::string& tokens) {
  // The policy keys the simulator uses (pollux_default_speed is the plugin's: for types it
  // finds on nodes without a speed of their own).
  static const std::vector<std::string> kPolicyKeys = {
      "pollux_fairness_p", "pollux_restart_threshold", "pollux_min_change_interval",
      "pollux_time_limit", "pollux_objective", "pollux_jct_guard", "pollux_priority_weight"};
  static const std::string kSpeedPrefix = "pollux_speed_";
  config::PolicyConfig config;
  std::stringstream list(tokens);
  for (std::string token; std::getline(list, token, ',');) {
    try {
      const config::Setting setting = config::splitSetting(token);
      const std::string& key = setting.key;
      const bool is_speed = key.compare(0, kSpeedPrefix.size(), kSpeedPrefix) == 0;
      if (!is_speed && std::find(kPolicyKeys.begin(), kPolicyKeys.end(), key) == kPolicyKeys.end()) {
        throw std::invalid_argument("'" + key + "' is not a policy key (pollux_fairness_p, "
                                    "pollux_restart_threshold, pollux_min_change_interval, "
                                    "pollux_time_limit, pollux_objective, pollux_jct_guard, "
                                    "pollux_priority_weight, pollux_speed_TYPE)");
      }
      bool applied = false;
      try {
        applied = config::applyPolicySetting(config, setting);
      } catch (const std::invalid_argument& error) {
        throw std::invalid_argument(key + "=" + setting.value + ": " + error.what());
      }
      if (!applied) throw std::invalid_argument("'" + key + "' names no GPU type");
    } catch (const std::invalid_argument& error) {
      throw std::invalid_argument(std::string("--params: ") + error.what());
    }
  }
  return config.policy;
}

Options parseOptions(int argc, char** argv) {
  enum {
    kWorkload = 1,
    kPolicy,
    kCluster,
    kProfiles,
    kJson,
    kTimeline,
    kPlot,
    kRound,
    kEventDelay,
    kRestart,
    kJoinStartup,
    kJobs,
    kParams,
    kDeclareFactor,
    kUndeclaredShare,
    kResize
  };
  static const option kLong[] = {{"workload", required_argument, nullptr, kWorkload},
                                 {"policy", required_argument, nullptr, kPolicy},
                                 {"cluster", required_argument, nullptr, kCluster},
                                 {"profiles", required_argument, nullptr, kProfiles},
                                 {"json", no_argument, nullptr, kJson},
                                 {"timeline", required_argument, nullptr, kTimeline},
                                 {"plot", required_argument, nullptr, kPlot},
                                 {"round", required_argument, nullptr, kRound},
                                 {"event-delay", required_argument, nullptr, kEventDelay},
                                 {"restart-cost", required_argument, nullptr, kRestart},
                                 {"join-startup", required_argument, nullptr, kJoinStartup},
                                 {"jobs", required_argument, nullptr, kJobs},
                                 {"params", required_argument, nullptr, kParams},
                                 {"declare-factor", required_argument, nullptr, kDeclareFactor},
                                 {"undeclared-share", required_argument, nullptr, kUndeclaredShare},
                                 {"resize", required_argument, nullptr, kResize},
                                 {nullptr, 0, nullptr, 0}};
  Options options;
  opterr = 0;
  optind = 1;
  for (int c; (c = getopt_long(argc, argv, "", kLong, nullptr)) != -1;) {
    switch (c) {
      case kWorkload: options.workload = optarg; break;
      case kPolicy: options.policy = optarg; break;
      case kCluster: options.cluster = optarg; break;
      case kProfiles: options.profiles = optarg; break;
      case kJson: options.json = true; break;
      case kTimeline: options.timeline = optarg; break;
      case kPlot: options.plot = optarg; break;
      case kRound: options.round_s = parseSeconds(optarg, "--round", 1); break;
      case kEventDelay: options.event_delay_s = parseSeconds(optarg, "--event-delay", 0); break;
      case kRestart:
        options.restart_cost_s = parseSecondsByApplication(optarg, "--restart-cost");
        break;
      case kJoinStartup:
        options.join_startup_s = parseSecondsByApplication(optarg, "--join-startup");
        break;
      case kJobs: options.jobs = optarg; break;
      case kParams: options.params = parsePolicyParams(optarg); break;
      case kDeclareFactor:
        options.declare_factor = parseBounded(optarg, "--declare-factor", 0.01, 100);
        break;
      case kUndeclaredShare:
        options.undeclared_share = parseBounded(optarg, "--undeclared-share", 0, 1);
        break;
      case kResize: options.resize = parseResize(optarg); break;
      default:
        throw std::invalid_argument("unknown option or missing value: " +
                                    std::string(argv[optind - 1]));
    }
  }
  if (optind < argc) throw std::invalid_argument("unexpected argument '" + std::string(argv[optind]) + "'");
  if (options.workload.empty()) throw std::invalid_argument("--workload is required");
  if (options.policy.empty()) throw std::invalid_argument("--policy is required");
  requireKnownPolicy(options.policy);
  return options;
}

}  // namespace pollux::sim
