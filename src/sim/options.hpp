// SPDX-License-Identifier: GPL-2.0-or-later
// pollux-sim's command line.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "common/policy/policy.hpp"
#include "sim_job.hpp"

namespace pollux::sim {

struct Options {
  std::string workload;
  std::string policy;  // pollux, pollux-goodput, pollux-unaware, tiresias or fifo
  std::string cluster = "t4:16x4";
  std::string profiles;  // empty: the shipped AdaptDL traces
  bool json = false;
  std::string timeline;
  std::string plot;
  std::string jobs;  // --jobs FILE.csv: one row per job
  double round_s = 60;
  double event_delay_s = 0;  // --event-delay: rounds on arrivals and completions (0: none)
  std::map<std::string, double> restart_cost_s;  // --restart-cost overrides, by application
  std::map<std::string, double> join_startup_s;  // --join-startup, by application
  policy::Params params;  // --params: the policy settings of the pollux policies
  // Declared lengths: each job declares its workload target times this factor ...
  double declare_factor = 1;
  // ... except this share of the jobs (spread evenly over the workload), which declares nothing.
  double undeclared_share = 0;
  // --resize: how the pollux policy's jobs change GPUs; the other policies always restart.
  Resize resize = Resize::kLive;
};

extern const char* const kUsage;

// Throws std::invalid_argument with a message for the user on any bad argument.
Options parseOptions(int argc, char** argv);

// Restart delays Sia measured per application (seconds).
std::map<std::string, double> defaultRestartCosts();

// "pollux_fairness_p=-0.5,pollux_min_change_interval=120": the policy keys of sched/pollux's
// SchedulerParameters (fairness_p, restart_threshold, min_change_interval, time_limit,
// speed_TYPE) over the defaults; throws std::invalid_argument on any other or malformed token.
policy::Params parsePolicyParams(const std::string& tokens);

// "cifar10=50,bert=120" -> {cifar10: 50, bert: 120}, the value of `option`; throws
// std::invalid_argument.
std::map<std::string, double> parseSecondsByApplication(const std::string& text,
                                                        const std::string& option);

}  // namespace pollux::sim
