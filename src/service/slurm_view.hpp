// SPDX-License-Identifier: GPL-2.0-or-later
// What the service knows of Slurm's jobs and nodes in a round, parsed from the shim's views.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/policy/policy.hpp"
#include "common/slurm_text/adaptive_comment.hpp"
#include "common/slurm_text/gres.hpp"

namespace pollux::service {

// GRES strings are read by the core's report/gres.hpp.
using schema::countGpus;
using schema::GpuGres;
using schema::parseGpuGres;

// The policy's name for GPUs of no type (a node's Gres=gpu:4).
inline constexpr const char* kUntypedGpu = "gpu";
// A node's GPU type as the policy names it.
std::string gpuTypeOf(const GpuGres& gpus);

struct SlurmNode {
  std::string name;
  GpuGres gpus;
  bool usable = true;  // not down, drained or failing
  int free_cpus = 1;   // CPUs no job holds: with none left the node cannot start another job
  // Where memory is a consumable resource (SelectTypeParameters CR_*_Memory): the node's
  // memory for jobs (RealMemory - MemSpecLimit) and what no job holds of it, in MB.
  std::optional<std::int64_t> memory_mb = std::nullopt;
  std::optional<std::int64_t> free_memory_mb = std::nullopt;
  int gpus_used = 0;  // GPUs jobs hold, as Slurm counts them: any job, completing ones too
  bool registered = true;  // its slurmd has registered since slurmctld started
  std::vector<std::string> features = {};  // active features (--constraint matches them)
};

// Limits on the CPUs, memory and nodes (the TRES cpu, mem and node; GPUs apart) that a group
// of jobs holds together, none where not set, and what Slurm charges the group's running jobs
// of them.
struct SharedTresLimits {
  std::optional<std::int64_t> cpus;
  std::optional<std::int64_t> memory_mb;
  std::optional<std::int64_t> nodes;
};
struct SharedTresUsed {
  std::int64_t cpus = 0;
  std::int64_t memory_mb = 0;
  std::int64_t nodes = 0;
};

// Limits on one job beyond its GPUs, none where not set.
struct JobTresLimits {
  std::optional<std::int64_t> cpus;
  std::optional<std::int64_t> memory_mb;
  std::optional<int> nodes;
};

// GPUs, CPUs, memory, nodes and running jobs Slurm charges one user under a QOS.
struct UserUsage {
  int gpus = 0;
  int jobs = 0;
  SharedTresUsed tres = {};
};

// A QOS's limits on GPUs (the TRES gres/gpu), CPUs, memory, nodes and running jobs, none
// where not set, and what Slurm charges its running jobs.
struct SlurmQos {
  std::string name;
  std::optional<int> grp_gpus;           // GrpTRES
  std::optional<int> max_gpus_per_user;  // MaxTRESPerUser
  std::optional<int> max_gpus_per_job;   // MaxTRESPerJob
  std::optional<int> grp_jobs;           // GrpJobs
  std::optional<int> max_jobs_per_user;  // MaxJobsPerUser
  SharedTresLimits grp_tres;             // GrpTRES=cpu=N,mem=M,node=K
  SharedTresLimits per_user_tres;        // MaxTRESPerUser=cpu=N,mem=M,node=K
  JobTresLimits per_job;                 // MaxTRESPerJob=cpu=N,mem=M,node=K
  int gpus_used = 0;
  int jobs_used = 0;
  SharedTresUsed tres_used = {};
  std::map<uint32_t, UserUsage> users;  // by uid
  std::optional<int> max_gpus_per_account;  // MaxTRESPerAccount
  SharedTresLimits per_account_tres;        // MaxTRESPerAccount=cpu=N,mem=M,node=K
  std::optional<int> max_jobs_per_account;  // MaxJobsPerAccount
  std::map<std::string, UserUsage> accounts;  // what each account's jobs use, by name
};

// An association (an account, or a user in an account) with its limits and its sub-tree's use.
struct SlurmAssociation {
  uint32_t id = 0;
  uint32_t parent_id = 0;  // 0: the root
  std::string account;
  std::string user;  // empty for an account's own association
  std::optional<int> grp_gpus;          // GrpTRES, over its sub-tree
  std::optional<int> max_gpus_per_job;  // MaxTRES
  std::optional<int> grp_jobs;          // GrpJobs, over its sub-tree
  std::optional<int> max_jobs;          // MaxJobs
  SharedTresLimits grp_tres;            // GrpTRES=cpu=N,mem=M,node=K, over its sub-tree
  JobTresLimits per_job;                // MaxTRES=cpu=N,mem=M,node=K
  int gpus_used = 0;
  int jobs_used = 0;
  SharedTresUsed tres_used = {};   // by running jobs of its sub-tree
};

// One of Slurm's advance reservations.
struct SlurmReservation {
  std::string name;
  std::vector<std::string> nodes;
  double start_time = 0;
  double end_time = 0;
  bool maintenance = false;  // Flags=MAINT
  std::string licenses;      // the licenses it holds, "a:1,b:2"
};

// One of the cluster's licenses: how many no job uses, and how many of those reservations
// active now hold.
struct SlurmLicense {
  std::string name;
  int available = 0;
  int reserved = 0;
};

// The CPU and memory fields of a job's request, Slurm's defaults applied.
struct ResourceRequest {
  int min_cpus_per_node = 1;            // tasks per node x CPUs per task, at least
  int cpus_per_task = 1;
  int ntasks_per_node = 0;              // --ntasks-per-node
  int ntasks_per_gpu = 0;               // --ntasks-per-gpu
  std::string cpus_per_tres;            // "gres:gpu:4" with --cpus-per-gpu
  std::int64_t memory_mb_per_node = 0;  // --mem, DefMemPerNode
  std::int64_t memory_mb_per_cpu = 0;   // --mem-per-cpu, DefMemPerCPU
  std::string mem_per_tres;             // "gres:gpu:16000" with --mem-per-gpu
  bool memory_set = false;              // --mem or --mem-per-cpu given: beats --mem-per-gpu
  int default_cpus_per_gpu = 0;         // DefCpuPerGPU (partition, else slurm.conf)
  std::int64_t default_memory_mb_per_gpu = 0;  // DefMemPerGPU
};

// What the job needs on each node, as Slurm's select/cons_tres charges it: DefCpuPerGPU
// where the job gave neither --cpus-per-gpu nor --cpus-per-task, DefMemPerGPU where it gave
// no --mem-per-gpu. No memory request at all means all of a node's memory where memory is
// consumable.
policy::NodeDemand nodeDemandOf(const ResourceRequest& request);

// The fields of a job's GPU request, in each form Slurm takes ("gres:gpu[:TYPE]:N", empty
// when not given) and the counts they multiply with.
struct GpuRequest {
  std::string per_node;    // --gres=gpu:N, --gpus-per-node
  std::string per_job;     // --gpus
  std::string per_task;    // --gpus-per-task
  std::string per_socket;  // --gpus-per-socket (Slurm requires --sockets-per-node with it)
  int nodes = 1;
  int tasks = 1;
  int sockets_per_node = 1;
};

// The GPUs a job asks for in total and their type (empty if untyped): the largest total of
// the forms it used; 0 GPUs without a GPU request.
GpuGres requestedGpus(const GpuRequest& request);

enum class JobState { kPending, kRunning, kOther };
// "pending", "running", "other" (scontrol show pollux, recorded rounds).
const char* toString(JobState state);

struct SlurmJob {
  uint32_t id = 0;
  uint32_t uid = 0;
  JobState state = JobState::kOther;
  bool held = false;                                // priority 0: its user's, an admin's, Slurm's
  uint32_t priority = 0;                            // Slurm's (multifactor)
  std::string state_reason;                         // squeue's Reason
  double submit_time = 0;
  double start_time = 0;
  double eligible_time = 0;                         // kPolluxHoldTime on: Pollux holds it
  int time_limit_min = 0;                           // --time, 0 if unlimited
  double end_time = 0;                              // finished jobs
  bool failed = false;                              // finished as FAILED or NODE_FAIL
  bool completing = false;                          // its last run still releases its nodes
  uint32_t restarts = 0;                            // Slurm's restart count: requeues so far
  std::string comment;
  std::vector<std::string> partitions;              // its partition, or those it may run in
  std::vector<std::string> nodes;                   // allocated nodes (running jobs)
  std::string batch_host;                           // runs the batch script (running jobs)
  std::vector<std::string> requested_nodes;         // ReqNodeList
  std::vector<std::string> excluded_nodes;          // --exclude
  std::string features;                             // --constraint
  std::string reservation;                          // --reservation
  std::string dependency;                           // unfulfilled dependencies
  uint32_t association_id = 0;                      // 0: none (no accounting)
  std::string qos;
  std::string licenses;                             // "a:1,b:2" (all), "a:1|b:1" (any one)
  int num_nodes = 0;
  GpuRequest gpu_request;
  ResourceRequest resources;
  // Read from the above by readRequests():
  std::optional<schema::AdaptiveRequest> adaptive;  // from the comment
  std::string comment_error;                        // set when the comment is malformed
  std::optional<GpuGres> gpus_per_node;             // from gpu_request.per_node (Pollux places so)
  GpuGres requested_gpus;                           // in total, in any form (requestedGpus)
  policy::NodeDemand demand;                        // CPUs and memory per node
};

// Sets the fields of `job` read from its comment and its requests.
void readRequests(SlurmJob& job);

// Gives the GPU requests of running jobs the GPU type of the nodes they run on, as the policy
// names it (kUntypedGpu on nodes with untyped GPUs).
void resolveGpuTypes(std::vector<SlurmJob>& jobs, const std::vector<SlurmNode>& nodes);

}  // namespace pollux::service
