// SPDX-License-Identifier: GPL-2.0-or-later
// Counters sched/pollux exposes at GET /metrics (OpenMetrics text for Prometheus).
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <string>

namespace pollux::service {

// What became of an action: Slurm took it, refused it, or the shim left it for the next round.
enum class ActionResult { kDone, kFailed, kDeferred };

class Metrics {
 public:
  void countReport(int http_status);
  void countAction(const std::string& kind, ActionResult result);
  void recordRound(double duration_ms, int adaptive_jobs, int running_adaptive_jobs);
  std::string render() const;

 private:
  mutable std::mutex mutex_;
  std::map<int, long> reports_by_status_;
  std::map<std::pair<std::string, ActionResult>, long> actions_;
  long rounds_ = 0;
  double last_round_ms_ = 0;
  int adaptive_jobs_ = 0;
  int running_adaptive_jobs_ = 0;
};

}  // namespace pollux::service
