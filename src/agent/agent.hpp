// SPDX-License-Identifier: GPL-2.0-or-later
// pollux-agent's main loop: starts the node's training processes (workers.hpp), serves the
// channel, hands decisions over, turns SIGTERM into a checkpoint request within the grace
// time, stops every worker when one fails (as torchrun does), and keeps the measurements in
// the state file across restarts.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "channel_server.hpp"
#include "job_state.hpp"
#include "options.hpp"
#include "reporter.hpp"
#include "slurm_env.hpp"
#include "child_process.hpp"
#include "step_stop.hpp"
#include "workers.hpp"

namespace pollux::agent {

class Agent {
 public:
  // `signal_fd`: a signalfd for the signals the agent handles (blocked in every thread).
  Agent(Options options, StepEnvironment step, NodeWorkers workers, ReporterSettings reporter,
        int signal_fd);
  ~Agent();
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;
  // Runs the workers to their end; returns the agent's exit status.
  int run();

 private:
  using Clock = std::chrono::steady_clock;
  void restoreState();
  void saveState();
  void serveOnce(int timeout_ms);
  void drainConnection(int fd);
  void drainChannel();
  void handleMessage(const std::string& text);
  void declareLength(const LengthMessage& length);
  void handleSignal();
  void requestCheckpoint();
  void pushDecision();
  // A live shrink: once the trainer re-formed without the leavers, and after a grace for
  // their steps' tasks to end (a task Slurm kills would end the whole step), the job (or its
  // part) is shrunk to the kept nodes with scontrol, as its owner may; a part left whole is
  // cancelled.
  void shrinkJobWhenDue();
  void signalWorkers(int signal_number);
  void followLiveJoin(const ResizedMessage& resized);
  // One of this node's workers became the job's rank 0 at a live change to `replicas`.
  void takeLead(int replicas);
  void noteLeaving();
  bool allWorkersLeft() const;  // every worker of this node said `leaving`
  // Reaps exited workers; a failure stops the others. The status once all have exited.
  std::optional<int> pollWorkers();
  int finish(int trainer_status);
  int withStatusWritten(int status, bool resume = false);
  void stopLaunchedStep();
  void signalStepWhenDue();

  Options options_;
  StepEnvironment step_;
  NodeWorkers node_workers_;
  int signal_fd_;
  int wake_fd_;  // eventfd: the reporter has a new decision
  std::string state_path_;
  Clock::time_point started_;
  Clock::time_point last_drain_;
  std::optional<Clock::time_point> checkpoint_requested_;
  std::optional<Clock::time_point> stopping_failed_;  // a worker failed: the others stop
  bool first_step_seen_ = false;
  long garbage_messages_ = 0;
  std::string last_declaration_;  // the latest accepted, as the trainer wrote it
  JobState state_;
  ChannelServer channel_;
  std::unique_ptr<Reporter> reporter_;
  std::vector<std::unique_ptr<ChildProcess>> workers_;
  std::vector<std::optional<int>> exit_statuses_;
  std::optional<int> failure_;  // the first non-zero exit status
  std::optional<StepStopSignal> step_stop_;  // this node's failure stops the launched step
  bool elastic_workers_ = false;  // a trainer said `hello ... elastic=1` (pollux.elastic)
  std::size_t workers_leaving_ = 0;  // `leaving` messages: workers that leave the job live
  std::optional<int> lost_;       // an elastic worker's failure, which the others outlived
  struct DueShrink {
    Clock::time_point at;
    std::vector<std::string> kept;
    // The job's part its workers left: cancelled instead of a shrink, or, with `kept`, shrunk.
    uint32_t part = 0;
  };
  std::optional<DueShrink> shrink_due_;
};

}  // namespace pollux::agent
