// SPDX-License-Identifier: GPL-2.0-or-later
// `pollux-agent --launch`, run by an adaptive job's batch script: starts the job's step itself
// (srun, one agent per task) and, when sched/pollux shrinks the job in place, shrinks the job
// and starts the step again inside it. The plugin asks the step to checkpoint (SIGTERM to the
// job's steps, not to the batch script); once the step has ended, the launcher reads the
// job's decided allocation from the plugin and, if the plugin says it waits for that shrink,
// shrinks the job to those nodes (scontrol update NodeList=, as Slurm lets a job's owner do)
// and starts the step there: the job stays RUNNING and its new step resumes from the
// checkpoint. Shrinking before the checkpoint would kill the tasks on the removed nodes.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "options.hpp"
#include "common/policy/policy.hpp"
#include "reporter.hpp"

namespace pollux::agent {

// The nodes to shrink to: the decided allocation's, when they are some of `current` (not
// all) and keep `batch_host`; nullopt when no shrink in place was decided.
std::optional<std::vector<std::string>> shrinkTarget(
    const std::vector<std::string>& current, const std::optional<policy::Allocation>& decided,
    const std::string& batch_host);

// srun's command line for a step of `tasks_per_node` agents on each of `nodes` nodes.
std::vector<std::string> stepCommand(const std::string& agent_path, const Options& options,
                                     size_t nodes, int tasks_per_node);

// The variables a step on `nodes` must see (those Slurm's own resize script sets, and the
// task counts srun would otherwise take from the job's first size), and the job's join token
// (POLLUX_JOIN_TOKEN, when not empty: pollux.elastic admits only joiners that hold it).
std::map<std::string, std::string> stepEnvironment(const std::vector<std::string>& nodes,
                                                   int tasks_per_node,
                                                   const std::string& join_token = "");

// A new join token: 32 bytes of /dev/urandom in hex, or "" if it cannot be read. Only the
// job's processes see it (in their environment; /proc/PID/environ is readable by the job's
// user and root only).
std::string newJoinToken();

class Launcher {
 public:
  // `signal_fd`: a signalfd for SIGTERM, SIGINT, SIGCHLD, SIGHUP, SIGUSR1 and SIGUSR2.
  Launcher(Options options, std::string job_id, std::string batch_host, ReporterSettings plugin,
           int signal_fd);
  // Runs the step until it ends other than for an in-place shrink; returns its exit status.
  int run();

 private:
  int runStep(const std::vector<std::string>& nodes);
  void handleSignal(ChildProcess* srun);
  void drainSignals();
  std::optional<std::vector<std::string>> decidedShrink(const std::vector<std::string>& nodes);
  bool shrinkJob(const std::vector<std::string>& nodes);
  std::vector<std::string> jobNodes();

  Options options_;
  std::string job_id_;
  std::string batch_host_;
  ReporterSettings plugin_;
  int signal_fd_;
  bool stopping_ = false;  // SIGTERM or SIGINT: the job itself ends or is requeued
  std::string join_token_;  // POLLUX_JOIN_TOKEN of the job's steps
};

}  // namespace pollux::agent
