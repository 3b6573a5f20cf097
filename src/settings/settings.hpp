// SPDX-License-Identifier: GPL-2.0-or-later
// sched/pollux's settings, read by the plugin and by its clients (the scontrol wrapper and
// pollux-agent find the REST endpoint with them): `pollux_`-prefixed SchedulerParameters
// tokens and pollux.conf. The deployment keys are here; the policy keys are
// policy_config.hpp's, which pollux-sim reads too.
#pragma once

#include <string>
#include <vector>

#include "policy_config.hpp"

namespace pollux::settings {

struct Config : config::PolicyConfig {
  int interval_s = 60;                   // pollux_interval: seconds between rounds
  int event_delay_s = 1;                 // pollux_event_delay: new work starts a round within
                                         // this many seconds, at most one such round per
                                         // this many seconds; 0: rounds only every interval
  int placement_ms = 500;                // pollux_placement_ms: a round places jobs for at
                                         // most this long after its first placement; the
                                         // rest wait for the next round
  std::string rest_addr = "127.0.0.1";   // pollux_rest_addr
  int rest_port = 6830;                  // pollux_rest_port
  bool backfill = true;                  // pollux_backfill: host Slurm's sched/backfill
  std::string tls_cert;                  // pollux_tls_cert / pollux_tls_key: PEM files
  std::string tls_key;
  int max_reports_per_s = 20000;         // pollux_report_rate: above it, 429
  int rest_threads = 4;                  // pollux_rest_threads: concurrent report checks
  std::string dump_rounds_dir;           // pollux_dump_rounds: write each round there (debug)
};

// Result of parsing: the configuration (every bad key left at its default) and one message
// per rejected token, for the slurmctld log.
struct ParsedConfig {
  Config config;
  std::vector<std::string> errors;
};

// Applies one KEY=VALUE token (a pollux_ key) to `config`. Throws std::invalid_argument
// ("KEY=VALUE: why") for an unknown key or a bad value, leaving `config` unchanged.
void applySetting(Config& config, const std::string& token);

// `conf_file_text` is pollux.conf (one KEY=VALUE per line, '#' comments, same keys as
// SchedulerParameters); `scheduler_parameters` is slurm.conf's comma-separated list, whose
// pollux_ tokens override pollux.conf. Tokens without the pollux_ prefix belong to other
// plugins (bf_* for the hosted backfill) and are ignored.
ParsedConfig parseConfig(const std::string& conf_file_text, const std::string& scheduler_parameters);

}  // namespace pollux::settings
