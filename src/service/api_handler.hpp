// SPDX-License-Identifier: GPL-2.0-or-later
// The REST API of sched/pollux (docs/design.md section 6.1):
//   POST /v1/jobs/<id>/report   goodput report -> current decision
//   GET  /v1/status             what the scheduler believes (scontrol show pollux)
//   GET  /v1/jobs/<id>          one job of that status
//   GET  /metrics               OpenMetrics counters (no job details, no credential)
// Status reads carry a MUNGE credential with the payload "pollux-status/1 <path>"; what the
// caller sees depends on who it is (status_view.hpp).
// Handlers read what the round published; they never touch slurmctld or its locks.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <json/json.h>

#include "job_store.hpp"
#include "metrics.hpp"
#include "rate_limiter.hpp"
#include "rest_server.hpp"

namespace pollux::service {

struct ApiContext {
  JobStore& store;
  Metrics& metrics;
  RateLimiter& report_limiter;
  uint32_t slurm_user_id;
  bool private_jobs;                           // PrivateData=jobs: others' jobs are hidden
  std::string munge_socket;                    // empty: libmunge's default
  std::function<Json::Value()> published_status;  // the last round's status document
};

class ApiHandler {
 public:
  explicit ApiHandler(ApiContext context) : context_(std::move(context)) {}
  HttpResponse operator()(const HttpRequest& request) const;

 private:
  // Checks in this order (413 is the server's): 429, 401, 404, 403, then 400.
  HttpResponse report(const HttpRequest& request, const std::string& job_id) const;
  // 401 without a valid status credential for the path; job_id empty: the whole status.
  HttpResponse statusRead(const HttpRequest& request, const std::string& job_id) const;

  ApiContext context_;
};

// {"error": message} with the status code.
HttpResponse errorResponse(int status, const std::string& message);

}  // namespace pollux::service
