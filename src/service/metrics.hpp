// SPDX-License-Identifier: GPL-2.0-or-later
// Counters sched/pollux exposes at GET /metrics (OpenMetrics text for Prometheus).
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <string>

namespace pollux::service {

class Metrics {
 public:
  void countReport(int http_status);
  void countAction(const std::string& kind, bool failed);
  void recordRound(double duration_ms, int adaptive_jobs, int running_adaptive_jobs);
  std::string render() const;

 private:
  mutable std::mutex mutex_;
  std::map<int, long> reports_by_status_;
  std::map<std::pair<std::string, bool>, long> actions_;
  long rounds_ = 0;
  double last_round_ms_ = 0;
  int adaptive_jobs_ = 0;
  int running_adaptive_jobs_ = 0;
};

}  // namespace pollux::service
