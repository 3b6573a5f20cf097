// SPDX-License-Identifier: GPL-2.0-or-later
#include "job_time.hpp"

#include <utility>
#include <vector>

#include "child_process.hpp"
#include "common/text_number.hpp"

namespace pollux::agent {
namespace {

// A field of squeue's time: a count from 0 (days up to about 2,700 years).
std::optional<long> fieldOf(const std::string& text) { return parseInteger(text, 0, 999999); }

}  // namespace

std::string timeLeftText(const std::string& job_id) {
  const CommandOutput result = runCommand({"squeue", "-h", "-j", job_id, "-o", "%L"});
  const std::string left = result.text();
  if (result.status != 0 || !secondsLeft(left)) return "";
  return left;
}

std::optional<double> secondsLeft(const std::string& text) {
  std::string clock = text;
  long days = 0;
  if (const auto dash = text.find('-'); dash != std::string::npos) {
    const auto day_count = fieldOf(text.substr(0, dash));
    if (!day_count) return std::nullopt;
    days = *day_count;
    clock = text.substr(dash + 1);
  }
  std::vector<long> fields;
  std::size_t start = 0;
  for (;;) {
    const auto colon = clock.find(':', start);
    const auto field = fieldOf(clock.substr(start, colon - start));
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
  for (const long field : fields) seconds = seconds * 60 + static_cast<double>(field);
  return seconds + static_cast<double>(days) * 86400;
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
