// SPDX-License-Identifier: GPL-2.0-or-later
#include "job_time.hpp"

#include <cctype>
#include <utility>
#include <vector>

#include "child_process.hpp"

namespace pollux::agent {
namespace {

std::string trimmed(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text;
}

// Digits only, as an int; nullopt otherwise (empty, a sign, too many digits).
std::optional<int> digitsOf(const std::string& text) {
  if (text.empty() || text.size() > 6) return std::nullopt;
  for (const char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  }
  return std::stoi(text);
}

}  // namespace

std::string timeLeftText(const std::string& job_id) {
  const CommandOutput result = runCommand({"squeue", "-h", "-j", job_id, "-o", "%L"});
  const std::string left = trimmed(result.output);
  if (result.status != 0 || !secondsLeft(left)) return "";
  return left;
}

std::optional<double> secondsLeft(const std::string& text) {
  std::string clock = text;
  int days = 0;
  if (const auto dash = text.find('-'); dash != std::string::npos) {
    const auto day_count = digitsOf(text.substr(0, dash));
    if (!day_count) return std::nullopt;
    days = *day_count;
    clock = text.substr(dash + 1);
  }
  std::vector<int> fields;
  std::size_t start = 0;
  for (;;) {
    const auto colon = clock.find(':', start);
    const auto field = digitsOf(clock.substr(start, colon - start));
    if (!field) return std::nullopt;
    fields.push_back(*field);
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  // squeue prints minutes:seconds under an hour, hours:minutes:seconds from then on, and the
  // days before a dash (always with the hours).
  if (fields.size() < 2 || fields.size() > 3 || (days > 0 && fields.size() != 3)) {
    return std::nullopt;
  }
  double seconds = 0;
  for (const int field : fields) seconds = seconds * 60 + field;
  return seconds + days * 86400.0;
}

TimeLimitWatch::TimeLimitWatch(double within_s, TimeLeft time_left, Clock::duration interval)
    : within_s_(within_s), time_left_(std::move(time_left)), interval_(interval) {}

bool TimeLimitWatch::due(Clock::time_point now) {
  if (due_ || (next_ask_ && now < *next_ask_)) return due_;
  next_ask_ = now + interval_;
  const auto left = secondsLeft(time_left_());
  due_ = left && *left <= within_s_;
  return due_;
}

}  // namespace pollux::agent
