#include "config/config.hpp"

#include <arpa/inet.h>

#include <cmath>
#include <functional>
#include <map>
#include <sstream>

#include "text_number.hpp"

namespace pollux::config {

namespace {

constexpr std::string_view kPrefix = "pollux_";
constexpr std::string_view kSpeedPrefix = "pollux_speed_";

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

double parseNumber(const std::string& text) {
  const auto value = parseFiniteNumber(text);
  if (!value) throw std::invalid_argument("not a decimal number");
  return *value;
}

int parseInt(const std::string& text, int min, int max) {
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
      {"pollux_interval", [](Config& c, const std::string& v) { c.interval_s = parseInt(v, 1, 86400); }},
      {"pollux_rest_addr", [](Config& c, const std::string& v) { c.rest_addr = parseAddress(v); }},
      {"pollux_rest_port", [](Config& c, const std::string& v) { c.rest_port = parseInt(v, 1, 65535); }},
      {"pollux_backfill", [](Config& c, const std::string& v) { c.backfill = parseInt(v, 0, 1) == 1; }},
      {"pollux_tls_cert", [](Config& c, const std::string& v) { c.tls_cert = parsePath(v); }},
      {"pollux_tls_key", [](Config& c, const std::string& v) { c.tls_key = parsePath(v); }},
      {"pollux_rest_threads", [](Config& c, const std::string& v) { c.rest_threads = parseInt(v, 1, 64); }},
      {"pollux_report_rate", [](Config& c, const std::string& v) { c.max_reports_per_s = parseInt(v, 1, 1000000); }},
      {"pollux_fairness_p", [](Config& c, const std::string& v) { c.policy.fairness_p = parseRange(v, -10, 1); }},
      {"pollux_restart_threshold", [](Config& c, const std::string& v) { c.policy.restart_threshold = parseRange(v, 0, 10); }},
      {"pollux_min_change_interval", [](Config& c, const std::string& v) { c.policy.min_change_interval_s = parseRange(v, 0, 86400 * 7); }},
      {"pollux_time_limit", [](Config& c, const std::string& v) { c.policy.time_limit_s = parseRange(v, 0.01, 600); }},
      {"pollux_default_speed", [](Config& c, const std::string& v) { c.default_speed = parseRange(v, 1e-3, 1e3); }},
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
  const auto equals = token.find('=');
  const std::string key = trim(token.substr(0, equals));
  const std::string value = equals == std::string::npos ? "" : trim(token.substr(equals + 1));
  const auto fail = [&](const std::string& why) {
    return std::invalid_argument(key + (equals == std::string::npos ? "" : "=" + value) + ": " + why);
  };
  if (equals == std::string::npos) throw fail("needs KEY=VALUE");
  try {
    if (key.compare(0, kSpeedPrefix.size(), kSpeedPrefix) == 0 && key.size() > kSpeedPrefix.size()) {
      config.policy.relative_speeds[key.substr(kSpeedPrefix.size())] = parseRange(value, 1e-3, 1e3);
      return;
    }
    const auto setter = setters().find(key);
    if (setter == setters().end()) throw std::invalid_argument("unknown key");
    setter->second(config, value);
  } catch (const std::exception& error) {
    throw fail(error.what());
  }
}

ParsedConfig parseConfig(const std::string& conf_file_text, const std::string& scheduler_parameters) {
  ParsedConfig parsed;
  std::istringstream lines(conf_file_text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    line = trim(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    const std::string error = applyToken(parsed.config, line, "pollux.conf:" + std::to_string(number));
    if (!error.empty()) parsed.errors.push_back(error);
  }
  std::istringstream tokens(scheduler_parameters);
  std::string token;
  while (std::getline(tokens, token, ',')) {
    token = trim(token);
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

}  // namespace pollux::config
