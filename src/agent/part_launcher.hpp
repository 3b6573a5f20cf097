// SPDX-License-Identifier: GPL-2.0-or-later
// The launcher's side of a live growth through a part of the job. Slurm cannot add
// GPU nodes to a running job, so sched/pollux grows a job live through a part: a job of the
// same user with the comment adaptive:part_of=JOB, which the launcher submits when the plugin
// wants one (the plugin holds it, then places it on the nodes the job grows to), and into
// which the launcher starts the job's workers (`srun --jobid=PART ... pollux-agent`) once it
// runs, or, for a job whose GPUs are all in parts, has the part's own batch script start them
// (part_step.hpp): they join the job's trainer live (pollux.elastic, POLLUX_JOIN=1). The job's
// rank-0 agent asks its trainer to admit them. A job holds several parts at once, a stack, newest
// last: the plugin wants a new one once every running part has joined, and the job shrinks
// off them newest first. When the job's step ends, its parts are cancelled.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/schema/goodput_report.hpp"
#include "launcher.hpp"
#include "options.hpp"
#include "part_step.hpp"
#include "reporter.hpp"
#include "slurm_env.hpp"

namespace pollux::agent {

// What a part of job `job_id` is submitted with, from the job's own batch environment: its
// name, partition, account and QOS, its time left (squeue's %L, "" where unlimited), its
// tasks and GPUs per node. The plugin sets the part's nodes and GPUs when it places it. Its
// batch script holds the part (`sleep infinity`), or, given a `launch_dir`, starts the step
// the launcher writes there (partBatchScript).
std::vector<std::string> partSubmitCommand(const std::string& job_id, const GetEnv& getenv,
                                           const std::string& time_left,
                                           const std::string& launch_dir = "");

// srun's command line for the job's workers in part `part` on `nodes` nodes.
std::vector<std::string> partStepCommand(const std::string& agent_path, const Options& options,
                                         uint32_t part, size_t nodes, int tasks_per_node);

// The environment of that step: as in the part's own allocation (stepEnvironment, with the
// job's step status file), and the job's rendezvous (MASTER_ADDR, the first of the job's step
// nodes; MASTER_PORT), its join token and POLLUX_JOIN=1, POLLUX_PART_OF=JOB. A step that
// `leads` starts the training instead of joining it: POLLUX_PART_LEADS=1, no POLLUX_JOIN.
std::map<std::string, std::string> partStepEnvironment(
    const std::string& job_id, uint32_t part, const std::vector<std::string>& part_nodes,
    int tasks_per_node, const std::vector<std::string>& job_nodes, const StepSettings& settings,
    const GetEnv& getenv, bool leads = false);

class PartLauncher {
 public:
  // `step`: the launcher's, read at each start (the job's store is hosted apart or not per
  // step). `gpus_in_parts`: the job's GPUs are all in its parts (adaptive:resize=live): a
  // part started while no step of the job runs starts the training (partStepEnvironment's
  // `leads`), and the parts' batch scripts start their steps (ScriptStep), from a private
  // directory made in `launch_parent` (the job's submit directory, shared by its nodes);
  // where it cannot be made, the launcher starts them (SrunStep). Such directories of the
  // job's earlier runs found there (their launcher ended first) are relayed and removed.
  PartLauncher(Options options, std::string job_id, ReporterSettings plugin,
               const StepSettings& step, bool gpus_in_parts = false,
               const std::string& launch_parent = ".");
  // Cancels every part submitted or started, reaps the steps started in them and removes
  // the directory the parts' steps start from.
  ~PartLauncher();
  PartLauncher(const PartLauncher&) = delete;
  PartLauncher& operator=(const PartLauncher&) = delete;

  // At most every few seconds: asks sched/pollux about the job's part and submits one or
  // starts the workers in one as it says. `job_nodes`: the nodes of the job's own step.
  void poll(const std::vector<std::string>& job_nodes);
  // What poll() does with the plugin's answer: submits a wanted part, or starts the workers
  // in a running part whose workers were not started yet.
  void follow(const schema::PartStatus& part, const std::vector<std::string>& job_nodes);
  // Whether the job's workers run in a part: a step started in one has not ended yet.
  bool hasSteps() const { return !steps_.empty(); }
  // Whether a step was started in a part since the job's training last stopped (endParts).
  bool startedAny() const { return training_started_; }
  // Cancels every part submitted or used (their steps have ended: the training stopped at
  // a checkpoint for a restart in new parts); the next part to run starts the training.
  void endParts();
  // Sends `number` to the steps started in the parts (srun passes it to every task).
  void signalSteps(int number);
  // Whether the parts' batch scripts start their steps, out of reach of Slurm's signals to
  // the job: checkpointSteps() then carries its SIGTERM.
  bool stepsApartFromTheJob() const { return !launch_dir_.empty(); }
  // Forgets the steps whose srun has ended (poll does too, and follows the plugin).
  void reapSteps();
  // Asks the workers in the parts to checkpoint: SIGTERM to the parts' steps through Slurm
  // (scancel --signal=TERM, as sched/pollux's checkpoint action), not through srun, which
  // ends its step with SIGKILL on SIGTERM.
  void checkpointSteps();

 private:
  using Clock = std::chrono::steady_clock;
  std::optional<schema::PartStatus> askPlugin();
  void submit();
  void start(const schema::PartStatus& part, const std::vector<std::string>& job_nodes);

  Options options_;
  std::string job_id_;
  ReporterSettings plugin_;
  const StepSettings& step_;
  bool gpus_in_parts_;
  std::string launch_dir_;  // where the parts' batch scripts find their steps ("": none)
  Clock::time_point next_poll_ = Clock::now();
  std::optional<Clock::time_point> submitted_at_;  // of a part the plugin has not seen yet
  std::set<uint32_t> submitted_;
  std::set<uint32_t> started_;  // the parts whose workers were started, once each
  bool training_started_ = false;
  std::map<uint32_t, std::unique_ptr<PartStep>> steps_;  // by part, until its srun ends
};

}  // namespace pollux::agent
