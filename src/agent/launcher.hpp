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
#include "store_host.hpp"
#include "common/policy/policy.hpp"
#include "reporter.hpp"

namespace pollux::agent {

// The nodes to shrink to: the decided allocation's, when they are some of `current` (not
// all) and keep `batch_host`; nullopt when no shrink in place was decided.
std::optional<std::vector<std::string>> shrinkTarget(
    const std::vector<std::string>& current, const std::optional<policy::Allocation>& decided,
    const std::string& batch_host);

// srun's command line for a step of `tasks_per_node` agents on each of `nodes` nodes. The step
// goes on when one of its nodes or tasks fails (--no-kill, --kill-on-bad-exit=0), as the job
// does (job_submit/pollux): its workers go on live on the others where pollux.elastic can; an
// agent whose workers cannot ends the step itself.
std::vector<std::string> stepCommand(const std::string& agent_path, const Options& options,
                                     size_t nodes, int tasks_per_node);

// What every step of the job shares, for its environment.
struct StepSettings {
  std::string join_token;   // POLLUX_JOIN_TOKEN: pollux.elastic admits only joiners holding it
  int min_replicas = 0;     // POLLUX_MIN_REPLICAS (0: not set): the fewest workers to go on live
  std::string status_file;  // POLLUX_STEP_STATUS_FILE: where the step's rank 0 writes its status
  int master_port = 0;      // MASTER_PORT (0: not set): rank 0's rendezvous port
  bool store_hosted = false;  // POLLUX_STORE_HOSTED=1: the step's store runs apart (StoreHost)
};

// The variables a step on `nodes` must see (those Slurm's own resize script sets, and the
// task counts srun would otherwise take from the job's first size) and `settings`' (those not
// empty).
std::map<std::string, std::string> stepEnvironment(const std::vector<std::string>& nodes,
                                                   int tasks_per_node,
                                                   const StepSettings& settings = {});

// The fewest workers an adaptive job's comment allows (its min_gpus, one worker per GPU);
// nullopt when the comment is not an adaptive one.
std::optional<int> minReplicasOf(const std::string& comment);

// Whether an adaptive job's comment puts all its GPUs in parts (adaptive:resize=live).
bool gpusInPartsOf(const std::string& comment);

// The step's status: srun's, or its rank 0's where srun failed but rank 0 completed (0): the
// workers that were left trained to the end after a node or agent of the step was lost.
int stepStatus(int srun_status, std::optional<int> rank0_status);

// A new join token: 32 bytes of /dev/urandom in hex, or "" if it cannot be read. Only the
// job's processes see it (in their environment; /proc/PID/environ is readable by the job's
// user and root only).
std::string newJoinToken();

class PartLauncher;

// A job whose GPUs are all in parts has its training checkpoint this long plus the agent's
// grace ahead of its time limit: Slurm's SIGTERM at the limit reaches the parts' srun in the
// job's batch script, which ends their steps with SIGKILL.
inline constexpr double kTimeLimitLeadS = 30;

// A step that checkpointed for a live change that failed is started again this many times.
inline constexpr int kRestartsAfterFailedChange = 3;

// How the step's rank 0 ended, as its agent wrote it (kStepStatusVariable).
struct Rank0End {
  std::optional<int> status;
  bool resume = false;  // its trainer checkpointed for a live change that failed
};

class Launcher {
 public:
  // `signal_fd`: a signalfd for SIGTERM, SIGINT, SIGCHLD, SIGHUP, SIGUSR1 and SIGUSR2.
  Launcher(Options options, std::string job_id, std::string batch_host, ReporterSettings plugin,
           int signal_fd);
  // Runs the step until it ends other than for an in-place shrink; returns its exit status.
  int run();

 private:
  int runStep(const std::vector<std::string>& nodes, PartLauncher& parts);
  int runInParts(PartLauncher& parts);
  int followParts(int srun_status, const std::vector<std::string>& nodes, PartLauncher& parts);
  int awaitTimeLimit(PartLauncher& parts);
  void startStore(std::optional<StoreHost>& store);
  void handleSignal(ChildProcess* srun, PartLauncher* parts);
  void drainSignals();
  std::optional<std::vector<std::string>> decidedShrink(const std::vector<std::string>& nodes);
  bool shrinkJob(const std::vector<std::string>& nodes);
  std::vector<std::string> jobNodes();
  std::vector<std::string> currentJobNodes();
  std::vector<std::string> hostnamesOf(const std::string& list);  // throws where it fails
  std::string jobComment();
  int minReplicas(const std::string& comment);
  int masterPortOnThisHost();
  bool hostsStore() const;
  Rank0End rank0End();

  Options options_;
  std::string job_id_;
  std::string batch_host_;
  ReporterSettings plugin_;
  int signal_fd_;
  bool stopping_ = false;  // SIGTERM or SIGINT: the job itself ends or is requeued
  StepSettings step_;
};

}  // namespace pollux::agent
