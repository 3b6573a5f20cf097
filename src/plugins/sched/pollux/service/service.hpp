// The sched/pollux service behind pollux_service.h: configuration, job store, REST endpoint,
// scheduling rounds and saved state.
#pragma once

#include <cstdint>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <json/json.h>

#include "actions.hpp"
#include "settings.hpp"
#include "job_store.hpp"
#include "metrics.hpp"
#include "rate_limiter.hpp"
#include "rest_server.hpp"
#include "slurm_view.hpp"
#include "../pollux_service.h"

namespace pollux::service {

struct ServiceSettings {
  std::string scheduler_parameters;
  std::string pollux_conf_text;
  std::string state_dir;     // empty: state is not saved
  std::string munge_socket;  // empty: libmunge's default
  uint32_t slurm_user_id = 0;
  bool private_jobs = false;  // PrivateData=jobs
  double slurmctld_started = 0;  // when this slurmctld process (image) loaded the plugin
  std::function<void(int level, const std::string&)> log;
};

class Service {
 public:
  explicit Service(ServiceSettings settings);
  ~Service();

  const settings::Config& config() const { return config_; }
  void startRest();  // throws std::runtime_error when it cannot listen

  void beginRound(double now);
  void addNode(SlurmNode node);
  void addJob(SlurmJob job);
  void addPartition(const std::string& name, policy::NodeSet nodes);
  size_t decide();
  const pollux_action_t& action(size_t index);
  void actionDone(size_t index, int error_code, const std::string& error_text);
  void endRound();

  Json::Value status() const;

 private:
  struct OwnedAction {
    Action action;
    std::string tres_per_node;
    std::string node_list;
    std::string admin_comment;
    pollux_action_t c;
  };

  settings::Config loadConfig() const;
  void settleShrinks();
  OwnedAction ownAction(Action action, const policy::Decision& decision) const;
  Json::Value jobStatus(const SlurmJob& job, const std::map<std::string, JobRecord>& records,
                        const model::RelativeSpeeds& speeds) const;
  void restoreState();
  void saveState();
  Json::Value buildStatus() const;
  void info(const std::string& message) const { settings_.log(POLLUX_LOG_INFO, message); }
  void error(const std::string& message) const { settings_.log(POLLUX_LOG_ERROR, message); }

  ServiceSettings settings_;
  settings::Config config_;
  JobStore store_;
  Metrics metrics_;
  RateLimiter report_limiter_;
  std::unique_ptr<RestServer> rest_;

  bool restored_jobs_ = false;  // the saved state had jobs: slurmctld restarted with some
  double round_time_ = 0;
  std::chrono::steady_clock::time_point round_started_;
  std::vector<SlurmNode> round_nodes_;
  std::map<std::string, policy::NodeSet> round_partitions_;
  std::vector<SlurmJob> round_jobs_;
  std::vector<OwnedAction> round_actions_;
  policy::Stats round_stats_;
  std::vector<std::string> round_problems_;

  mutable std::mutex status_mutex_;
  Json::Value published_status_;
};

}  // namespace pollux::service
