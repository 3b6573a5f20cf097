// SPDX-License-Identifier: GPL-2.0-or-later
// The sched/pollux service behind pollux_service.h, free of Slurm and of C types:
// configuration, job store, REST endpoint, scheduling rounds and saved state.
#pragma once

#include <cstdint>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <mutex>
#include <string>
#include <vector>

#include <json/json.h>

#include "job_store.hpp"
#include "log.hpp"
#include "metrics.hpp"
#include "rate_limiter.hpp"
#include "rest_server.hpp"
#include "round_planner.hpp"
#include "settings/settings.hpp"

namespace pollux::service {

struct ServiceSettings {
  std::string scheduler_parameters;
  std::string pollux_conf_text;
  std::string state_dir;     // empty: state is not saved
  std::string munge_socket;  // empty: libmunge's default
  uint32_t slurm_user_id = 0;
  bool private_jobs = false;  // PrivateData=jobs
  double slurmctld_started = 0;  // when this slurmctld process (image) loaded the plugin
  Log log;
};

// What Slurm said to an action: 0, or its error code and text.
struct ActionOutcome {
  int error_code = 0;
  std::string error_text;
  bool deferred = false;  // left for the next round (POLLUX_ACTION_DEFERRED): not done, not failed
};

// What the service's part of the last round cost (the shim's round line).
struct RoundCosts {
  double solve_ms = 0;     // the policy's solver, within plan()
  double save_ms = 0;      // writing the state file, ahead of requeues and within finish()
  size_t state_bytes = 0;  // the state file's size (0 if not saved)
};

// What the last round showed and decided: the status is built from it when asked for.
struct PublishedRound {
  std::shared_ptr<const Round> round;
  policy::Stats stats;
  size_t actions = 0;
  std::vector<std::string> problems;
  std::optional<double> duration_ms;
};

class Service {
 public:
  explicit Service(ServiceSettings settings);
  ~Service();

  const settings::Config& config() const { return config_; }
  void startRest();  // throws std::runtime_error when it cannot listen

  // The actions of one round, or nullopt when the policy failed: then nothing changes, the
  // reason is logged and the round is ended (published, state saved when due).
  std::optional<std::vector<PlannedAction>> plan(Round round);
  // The outcomes of the last plan's actions, in order: recorded and logged, then the round is
  // published for the status and the state saved: after a round that acted, else at most
  // once per pollux_interval (a crash then loses at most that much of the jobs' reports).
  void finish(const std::vector<ActionOutcome>& outcomes);
  const RoundCosts& lastRoundCosts() const { return costs_; }

  // The last round's status, built at the first request after the round with every job's
  // record as it was then, and kept until the next round (a round publishes its inputs).
  Json::Value status() const;

 private:
  settings::Config loadConfig() const;
  bool settling() const;
  void dumpRound() const;
  void recordOutcome(const Action& action, const ActionOutcome& outcome);
  void endRound();
  Json::Value jobStatus(const SlurmJob& job, const std::map<std::string, JobRecord>& records,
                        const model::RelativeSpeeds& speeds) const;
  void restoreState();
  bool saveDue() const;
  void saveState(std::optional<Json::Value> jobs = std::nullopt);  // jobs: store_'s by default
  void saveRequeuesAhead();
  Json::Value buildStatus(const PublishedRound& published) const;
  void info(const std::string& message) const { settings_.log(LogLevel::kInfo, message); }
  void error(const std::string& message) const { settings_.log(LogLevel::kError, message); }

  ServiceSettings settings_;
  settings::Config config_;
  JobStore store_;
  Metrics metrics_;
  RateLimiter report_limiter_;
  std::unique_ptr<RestServer> rest_;

  std::chrono::steady_clock::time_point round_started_;
  std::shared_ptr<const Round> round_ = std::make_shared<const Round>();
  RoundPlan round_plan_;
  RoundCosts costs_;
  std::string saved_text_;  // the state file as this service last wrote it
  std::optional<std::chrono::steady_clock::time_point> saved_at_;
  unsigned long rounds_dumped_ = 0;
  // Its state file had jobs, or was unusable: slurmctld restarted with jobs, or may have.
  bool restarted_with_jobs_ = false;

  mutable std::mutex status_mutex_;
  PublishedRound published_;
  mutable std::optional<Json::Value> status_;  // built from published_ at the first request
};

}  // namespace pollux::service
