// SPDX-License-Identifier: GPL-2.0-or-later
#include "policy_config.hpp"

#include <cmath>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>

#include "common/text_number.hpp"

namespace pollux::config {

namespace {

constexpr std::string_view kSpeedPrefix = "pollux_speed_";

double parseNumber(const std::string& text) {
  const auto value = parseFiniteNumber(text);
  if (!value) throw std::invalid_argument("not a decimal number");
  return *value;
}

policy::Objective parseObjective(const std::string& text) {
  if (text == "goodput") return policy::Objective::kGoodput;
  if (text == "jct") return policy::Objective::kJct;
  throw std::invalid_argument("must be goodput or jct");
}

using Setter = std::function<void(PolicyConfig&, const std::string&)>;

const std::map<std::string, Setter, std::less<>>& setters() {
  static const std::map<std::string, Setter, std::less<>> table = {
      {"pollux_fairness_p", [](PolicyConfig& c, const std::string& v) { c.policy.fairness_p = parseRange(v, -10, 1); }},
      {"pollux_restart_threshold", [](PolicyConfig& c, const std::string& v) { c.policy.restart_threshold = parseRange(v, 0, 10); }},
      {"pollux_min_change_interval", [](PolicyConfig& c, const std::string& v) { c.policy.min_change_interval_s = parseRange(v, 0, 86400 * 7); }},
      {"pollux_time_limit", [](PolicyConfig& c, const std::string& v) { c.policy.time_limit_s = parseRange(v, 0.01, 600); }},
      {"pollux_objective", [](PolicyConfig& c, const std::string& v) { c.policy.objective = parseObjective(v); }},
      {"pollux_jct_guard", [](PolicyConfig& c, const std::string& v) { c.policy.jct_guard = parseRange(v, 1, 100); }},
      {"pollux_priority_weight", [](PolicyConfig& c, const std::string& v) { c.policy.priority_weight = parseRange(v, 0, 100); }},
      {"pollux_default_speed", [](PolicyConfig& c, const std::string& v) { c.default_speed = parseRange(v, 1e-3, 1e3); }},
  };
  return table;
}

}  // namespace

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

int parseIntIn(const std::string& text, int min, int max) {
  const double value = parseNumber(text);
  if (value != std::floor(value) || value < min || value > max) {
    throw std::invalid_argument("must be an integer in [" + std::to_string(min) + ", " +
                                std::to_string(max) + "]");
  }
  return static_cast<int>(value);
}

double parseRange(const std::string& text, double min, double max) {
  const double value = parseNumber(text);
  if (value < min || value > max) {
    std::ostringstream range;
    range << "must be in [" << min << ", " << max << "]";
    throw std::invalid_argument(range.str());
  }
  return value;
}

Setting splitSetting(const std::string& token) {
  const auto equals = token.find('=');
  if (equals == std::string::npos) throw std::invalid_argument(trim(token) + ": needs KEY=VALUE");
  return {trim(token.substr(0, equals)), trim(token.substr(equals + 1))};
}

bool applyPolicySetting(PolicyConfig& config, const Setting& setting) {
  const std::string& key = setting.key;
  if (key.compare(0, kSpeedPrefix.size(), kSpeedPrefix) == 0 && key.size() > kSpeedPrefix.size()) {
    config.policy.relative_speeds[key.substr(kSpeedPrefix.size())] =
        parseRange(setting.value, 1e-3, 1e3);
    return true;
  }
  const auto setter = setters().find(key);
  if (setter == setters().end()) return false;
  setter->second(config, setting.value);
  return true;
}

}  // namespace pollux::config
