// SPDX-License-Identifier: GPL-2.0-or-later
// The job step as Slurm describes it to each task through its environment.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/model/params.hpp"

namespace pollux::agent {

struct StepEnvironment {
  std::string job_id;     // SLURM_JOB_ID
  int rank;               // SLURM_PROCID: rank 0 of the job's own step reports at first
  std::string node_name;  // SLURMD_NODENAME
  model::Placement placement;  // step nodes x GPUs per node
  std::string submit_dir;  // SLURM_SUBMIT_DIR, else "."
  bool launched = false;   // started by `pollux-agent --launch` (POLLUX_AGENT_LAUNCHED=1)
  std::string node_list;   // SLURM_STEP_NODELIST, else SLURM_JOB_NODELIST (Slurm's host list)
  // POLLUX_PART_OF: the adaptive job whose part this step runs in (its workers join that
  // job live); empty in the job's own steps.
  std::string part_of;
  // POLLUX_PART_LEADS=1: this step in a part starts the job's training (the job's GPUs are
  // all in parts, and no other step of it runs): its rank 0 leads.
  bool part_leads = false;

  // The job the step trains for: its own, or the one it is a part of.
  const std::string& trainingJob() const { return part_of.empty() ? job_id : part_of; }
  // Whether this task starts as the job's lead (JobState::leads): rank 0 of its own step, or
  // of the step in a part that starts the training.
  bool leadsJob() const { return rank == 0 && (part_of.empty() || part_leads); }
};

// Set to "1" by `pollux-agent --launch` in the environment of the step it starts.
inline constexpr const char* kLaunchedVariable = "POLLUX_AGENT_LAUNCHED";
// Set by the launcher: the file where the job's lead agent (JobState::leads) writes its exit
// status, followed by kResumeMark where its trainer stopped itself at a checkpoint because a
// live change failed (nobody asked it to stop: the launcher starts the step again).
inline constexpr const char* kStepStatusVariable = "POLLUX_STEP_STATUS_FILE";
inline constexpr const char* kResumeMark = "resume";
// The status of an agent whose trainer checkpointed and stopped: 128 + SIGTERM, as if the
// agent had been killed.
inline constexpr int kExitAfterCheckpoint = 143;
// Set by the launcher in a step it starts in a part of its job: that job's id.
inline constexpr const char* kPartOfVariable = "POLLUX_PART_OF";
// Set to "1" by the launcher in a step in a part that starts the job's training.
inline constexpr const char* kPartLeadsVariable = "POLLUX_PART_LEADS";

using GetEnv = std::function<std::optional<std::string>(const char* name)>;

// The nodes of a Slurm host list ("n[1-3],m2"), expanded by Slurm's own `scontrol show
// hostnames`; nullopt where that fails.
std::optional<std::vector<std::string>> hostnames(const std::string& list);

// Throws pollux::InvalidInput if SLURM_JOB_ID is missing (not inside a job) or a variable is
// malformed. GPUs per node: SLURM_GPUS_ON_NODE, else CUDA_VISIBLE_DEVICES' entries, else 1;
// `replicas_override` > 0 replaces the computed replica count.
StepEnvironment readStepEnvironment(const GetEnv& getenv, int replicas_override);

// An integer variable >= `min`, `fallback` when unset or empty; throws pollux::InvalidInput
// naming it when malformed.
int countVariable(const GetEnv& getenv, const char* name, int fallback, int min);

// The process environment.
std::optional<std::string> processEnv(const char* name);

}  // namespace pollux::agent
