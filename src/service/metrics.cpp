// SPDX-License-Identifier: GPL-2.0-or-later
#include "metrics.hpp"

#include <sstream>

namespace pollux::service {

void Metrics::countReport(int http_status) {
  std::lock_guard<std::mutex> guard(mutex_);
  ++reports_by_status_[http_status];
}

void Metrics::countAction(const std::string& kind, ActionResult result) {
  std::lock_guard<std::mutex> guard(mutex_);
  ++actions_[{kind, result}];
}

namespace {
const char* resultLabel(ActionResult result) {
  switch (result) {
    case ActionResult::kDone: return "done";
    case ActionResult::kFailed: return "failed";
    case ActionResult::kDeferred: return "deferred";
  }
  return "done";
}
}  // namespace

void Metrics::recordRound(double duration_ms, int adaptive_jobs, int running_adaptive_jobs) {
  std::lock_guard<std::mutex> guard(mutex_);
  ++rounds_;
  last_round_ms_ = duration_ms;
  adaptive_jobs_ = adaptive_jobs;
  running_adaptive_jobs_ = running_adaptive_jobs;
}

std::string Metrics::render() const {
  std::lock_guard<std::mutex> guard(mutex_);
  std::ostringstream out;
  out << "# TYPE pollux_reports counter\n"
      << "# HELP pollux_reports Goodput reports received, by HTTP status of the reply.\n";
  for (const auto& [status, count] : reports_by_status_) {
    out << "pollux_reports_total{code=\"" << status << "\"} " << count << "\n";
  }
  out << "# TYPE pollux_actions counter\n"
      << "# HELP pollux_actions Actions on jobs, by kind and outcome.\n";
  for (const auto& [key, count] : actions_) {
    out << "pollux_actions_total{kind=\"" << key.first << "\",result=\""
        << resultLabel(key.second) << "\"} " << count << "\n";
  }
  out << "# TYPE pollux_rounds counter\n# HELP pollux_rounds Scheduling rounds run.\n"
      << "pollux_rounds_total " << rounds_ << "\n"
      << "# TYPE pollux_last_round_seconds gauge\n"
      << "# HELP pollux_last_round_seconds Duration of the last round.\n"
      << "pollux_last_round_seconds " << last_round_ms_ / 1000.0 << "\n"
      << "# TYPE pollux_adaptive_jobs gauge\n# HELP pollux_adaptive_jobs Adaptive jobs known.\n"
      << "pollux_adaptive_jobs{state=\"all\"} " << adaptive_jobs_ << "\n"
      << "pollux_adaptive_jobs{state=\"running\"} " << running_adaptive_jobs_ << "\n"
      << "# EOF\n";
  return out.str();
}

}  // namespace pollux::service
