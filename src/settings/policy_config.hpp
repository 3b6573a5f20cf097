// SPDX-License-Identifier: GPL-2.0-or-later
// The policy's keys among sched/pollux's settings (SchedulerParameters and pollux.conf), read
// the same way by the plugin and by `pollux-sim --params`. The plugin's deployment keys
// (interval, REST endpoint, TLS, backfill) are settings.hpp's, which applies these through here.
#pragma once

#include <string>

#include "common/policy/policy.hpp"

namespace pollux::config {

struct PolicyConfig {
  double default_speed = 1.0;  // pollux_default_speed: types without pollux_speed_TYPE
  policy::Params policy;       // pollux_fairness_p, pollux_restart_threshold,
                               // pollux_min_change_interval, pollux_time_limit,
                               // pollux_objective, pollux_jct_guard,
                               // pollux_priority_weight, pollux_speed_TYPE=X
};

struct Setting {
  std::string key;
  std::string value;
};

// A "KEY=VALUE" token, both sides trimmed of blanks. Throws std::invalid_argument
// ("KEY: needs KEY=VALUE") without '='.
Setting splitSetting(const std::string& token);

// Applies `setting` if it is a policy key and returns true; false for any other key. Throws
// std::invalid_argument (why) for a bad value, leaving `config` unchanged.
bool applyPolicySetting(PolicyConfig& config, const Setting& setting);

// Value parsers of the settings; each throws std::invalid_argument saying what was expected.
double parseRange(const std::string& text, double min, double max);
int parseIntIn(const std::string& text, int min, int max);
std::string trim(const std::string& text);

}  // namespace pollux::config
