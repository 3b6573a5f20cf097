#include "status_text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace pollux::client {

std::string durationText(double seconds) {
  const long long total = std::llround(std::max(0.0, seconds));
  const long long days = total / 86400, hours = total / 3600 % 24, minutes = total / 60 % 60;
  char text[64];
  if (days > 0) {
    std::snprintf(text, sizeof text, "%lld-%02lld:%02lld:%02lld", days, hours, minutes, total % 60);
  } else {
    std::snprintf(text, sizeof text, "%02lld:%02lld:%02lld", hours, minutes, total % 60);
  }
  return text;
}

std::string lengthText(const Json::Value& job) {
  if (!job.isObject() || !job["length"].isObject()) return "";
  const Json::Value& length = job["length"];
  if (!length["progress"].isNumeric() || !length["target_progress"].isNumeric()) return "";
  const double progress = length["progress"].asDouble();
  const double target = length["target_progress"].asDouble();
  char text[160];
  std::snprintf(text, sizeof text, "Progress=%.6g TargetProgress=%.6g (%.1f %%) Remaining=",
                progress, target, target > 0 ? 100 * progress / target : 0.0);
  std::string line = text;
  if (progress >= target) return line + "unknown (target reached)";
  if (!length["remaining_s"].isNumeric()) return line + "unknown";
  return line + durationText(length["remaining_s"].asDouble());
}

}  // namespace pollux::client
