// SPDX-License-Identifier: GPL-2.0-or-later
// The training processes pollux-agent starts on its node, as torchrun would: by default one
// per GPU the job holds there, each with torchrun's environment contract (RANK, LOCAL_RANK,
// WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT, and OMP_NUM_THREADS=1
// where several share a node and the job sets none), so that a script calling
// torch.distributed.init_process_group("env://") runs as it does under torchrun.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "slurm_env.hpp"

namespace pollux::agent {

struct NodeWorkers {
  int per_node = 1;               // workers on each node of the step
  int node_rank = 0;              // SLURM_NODEID: GROUP_RANK
  int nodes = 1;                  // nodes of the step
  std::string master_addr;        // MASTER_ADDR if set, else first host of SLURM_JOB_NODELIST
  int master_port = 0;            // MASTER_PORT if set, else masterPort(SLURM_JOB_ID)
  std::vector<std::string> gpus;  // this node's GPUs (CUDA_VISIBLE_DEVICES), empty if none
  bool threads_given = false;     // the job sets OMP_NUM_THREADS itself
};

// MASTER_ADDR and MASTER_PORT already in the environment (set by the job script) are kept.
// `per_node`: the --nproc-per-node value, 0 for auto (the GPUs the job holds on this node:
// SLURM_GPUS_ON_NODE, else CUDA_VISIBLE_DEVICES' entries; at least 1). Throws
// pollux::InvalidInput for a malformed variable or more workers than GPUs listed.
NodeWorkers readNodeWorkers(const GetEnv& getenv, int per_node);

// The port every node derives from the job id alone: 20000 + job id mod 10000 (below
// Linux's ephemeral ports, so that no outgoing connection holds it).
int masterPort(const std::string& job_id);

// The first port from `derived` on, within masterPort's range and wrapping around in it, that
// `is_free` says is free; `derived` if none is. The launcher's choice on the batch host, which
// runs rank 0, so that two jobs whose ids are equal mod 10000 do not share one there.
int firstFreeMasterPort(int derived, const std::function<bool(int)>& is_free);

// "n1" of Slurm's host lists "n1", "n[1-3],g7", "gpu[07-09]" ("gpu07"); throws
// pollux::InvalidInput for an empty or malformed one.
std::string firstHost(const std::string& host_list);

// The environment of worker `local_rank` of this node. With one worker per listed GPU,
// CUDA_VISIBLE_DEVICES is narrowed to the worker's own; with fewer (--nproc-per-node 1 on a
// node of 4 GPUs, say) every worker sees them all, as under torchrun. OMP_NUM_THREADS is 1
// where the node has several workers and the job sets none, as under torchrun: each worker's
// CPU operators would otherwise start a thread per core of the node.
std::map<std::string, std::string> workerEnvironment(const NodeWorkers& workers, int local_rank);

}  // namespace pollux::agent
