// SPDX-License-Identifier: GPL-2.0-or-later
#include "settings.hpp"

#include <arpa/inet.h>

#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>

namespace pollux::settings {

namespace {

using config::parseIntIn;

constexpr std::string_view kPrefix = "pollux_";

std::string parseAddress(const std::string& text) {
  in_addr v4;
  in6_addr v6;
  if (inet_pton(AF_INET, text.c_str(), &v4) != 1 && inet_pton(AF_INET6, text.c_str(), &v6) != 1) {
    throw std::invalid_argument("must be a numeric IPv4 or IPv6 address");
  }
  return text;
}

std::string parsePath(const std::string& text) {
  if (text.empty() || text.front() != '/') throw std::invalid_argument("must be an absolute path");
  return text;
}

using Setter = std::function<void(Config&, const std::string&)>;

const std::map<std::string, Setter, std::less<>>& setters() {
  static const std::map<std::string, Setter, std::less<>> table = {
      {"pollux_interval", [](Config& c, const std::string& v) { c.interval_s = parseIntIn(v, 1, 86400); }},
      {"pollux_event_delay", [](Config& c, const std::string& v) { c.event_delay_s = parseIntIn(v, 0, 3600); }},
      {"pollux_placement_ms", [](Config& c, const std::string& v) { c.placement_ms = parseIntIn(v, 0, 60000); }},
      {"pollux_rest_addr", [](Config& c, const std::string& v) { c.rest_addr = parseAddress(v); }},
      {"pollux_rest_port", [](Config& c, const std::string& v) { c.rest_port = parseIntIn(v, 1, 65535); }},
      {"pollux_backfill", [](Config& c, const std::string& v) { c.backfill = parseIntIn(v, 0, 1) == 1; }},
      {"pollux_tls_cert", [](Config& c, const std::string& v) { c.tls_cert = parsePath(v); }},
      {"pollux_tls_key", [](Config& c, const std::string& v) { c.tls_key = parsePath(v); }},
      {"pollux_rest_threads", [](Config& c, const std::string& v) { c.rest_threads = parseIntIn(v, 1, 64); }},
      {"pollux_dump_rounds", [](Config& c, const std::string& v) { c.dump_rounds_dir = parsePath(v); }},
      {"pollux_report_rate", [](Config& c, const std::string& v) { c.max_reports_per_s = parseIntIn(v, 1, 1000000); }},
  };
  return table;
}

// Applies one KEY=VALUE token; returns an error message, or "" when it was applied.
std::string applyToken(Config& config, const std::string& token, const std::string& source) {
  try {
    applySetting(config, token);
    return "";
  } catch (const std::invalid_argument& error) {
    return source + ": " + error.what() + "; using the default";
  }
}

}  // namespace

void applySetting(Config& config, const std::string& token) {
  const config::Setting setting = config::splitSetting(token);
  try {
    const auto setter = setters().find(setting.key);
    if (setter != setters().end()) {
      setter->second(config, setting.value);
    } else if (!config::applyPolicySetting(config, setting)) {
      throw std::invalid_argument("unknown key");
    }
  } catch (const std::exception& error) {
    throw std::invalid_argument(setting.key + "=" + setting.value + ": " + error.what());
  }
}

ParsedConfig parseConfig(const std::string& conf_file_text, const std::string& scheduler_parameters) {
  ParsedConfig parsed;
  std::istringstream lines(conf_file_text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    line = config::trim(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    const std::string error = applyToken(parsed.config, line, "pollux.conf:" + std::to_string(number));
    if (!error.empty()) parsed.errors.push_back(error);
  }
  std::istringstream tokens(scheduler_parameters);
  std::string token;
  while (std::getline(tokens, token, ',')) {
    token = config::trim(token);
    if (token.compare(0, kPrefix.size(), kPrefix) != 0) continue;  // another plugin's token
    const std::string error = applyToken(parsed.config, token, "SchedulerParameters");
    if (!error.empty()) parsed.errors.push_back(error);
  }
  if (parsed.config.tls_cert.empty() != parsed.config.tls_key.empty()) {
    parsed.errors.push_back("pollux_tls_cert and pollux_tls_key must be set together; using the default (no TLS)");
    parsed.config.tls_cert.clear();
    parsed.config.tls_key.clear();
  }
  return parsed;
}

}  // namespace pollux::settings
