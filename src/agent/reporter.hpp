// SPDX-License-Identifier: GPL-2.0-or-later
// The agent's thread that talks to sched/pollux: the job's lead (JobState::leads) POSTs goodput
// reports (with a MUNGE credential) at a bounded rate; the other agents only read the job's
// decision. Failed requests are retried with exponential backoff and jitter; training goes on
// meanwhile on the last decision.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "backoff.hpp"
#include "client/http_client.hpp"
#include "job_state.hpp"
#include "common/schema/goodput_report.hpp"
#include "slurm_env.hpp"

namespace pollux::agent {

struct ReporterSettings {
  std::string rest_url;
  std::string munge_socket;
  std::string ca_file;
  double interval_s;
  bool fixed_gpu_type;  // given on the command line: never replaced by the plugin's view
  bool verbose;
};

class Reporter {
 public:
  using Notify = std::function<void()>;  // called when a new decision is in JobState
  using SaveState = std::function<void()>;  // called after each report (the lead)

  Reporter(ReporterSettings settings, StepEnvironment step, JobState& state, Notify notify,
           SaveState save);
  ~Reporter();  // stops and joins the thread
  Reporter(const Reporter&) = delete;
  Reporter& operator=(const Reporter&) = delete;

  // One GET of the job's status before the trainer starts, to learn its GPU type; returns
  // false if the plugin could not be asked (the thread keeps trying later).
  bool learnGpuType(double timeout_s);
  void start();
  // Stops the thread, then tells sched/pollux in one report (within `timeout_s`) that the
  // trainer finished training, so that no change stops the job while its script ends. The
  // lead only; false if the plugin was not told (not the lead, nothing to report yet, or the
  // plugin unreachable: the job then ends as before, a change still possible meanwhile).
  bool reportTrainingFinished(double timeout_s);

  int reportsAccepted() const { return accepted_; }

 private:
  void run();
  void stop();  // asks the thread to stop and joins it
  // One exchange with the plugin; returns true if it answered with a usable decision.
  bool exchange();
  // Waits, `lock` held, until a report is `due` or asked for. While the job holds parts whose
  // workers joined (the lead), reads its status every `tick_s` meanwhile: the plugin may ask
  // its newest part's workers to leave at any time, and says so in the status.
  void awaitReport(std::unique_lock<std::mutex>& lock, std::chrono::steady_clock::time_point due,
                   double tick_s);
  // The lead's report through `client`; with no report to make yet it reads the job's
  // status instead (unless the report says that training finished).
  bool postReport(client::HttpClient& client, bool training_finished = false);
  bool readStatus(client::HttpClient& client);
  void applyReply(const schema::ReportReply& reply);
  // The lead of an elastic trainer under `--launch`: an in-place shrink the plugin decided
  // becomes a live one (JobState::live_shrink); true if one was started.
  bool startLiveShrink(const schema::ReportReply& reply);
  bool startLiveJoin(const schema::ReportReply& reply);
  bool startPartLeave(const schema::ReportReply& reply);
  bool startPartNodesLeave(const schema::PartStatus& part, int per_node);  // state_.mutex held

  ReporterSettings settings_;
  StepEnvironment step_;
  JobState& state_;
  Notify notify_;
  SaveState save_;
  client::HttpClient client_;
  Backoff backoff_;
  bool part_in_flight_ = false;  // the last reply's part (live_shrink.hpp, partInFlight)
  bool decided_here_ = false;    // the trainer's decision is this agent's (applyReply)
  std::atomic<int> accepted_{0};
  std::thread thread_;
};

}  // namespace pollux::agent
