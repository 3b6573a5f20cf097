// SPDX-License-Identifier: GPL-2.0-or-later
// What rigid (baseline) jobs share: the user's GPU count and batch size, and node packing.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "cluster.hpp"
#include "sim_job.hpp"

namespace pollux::sim {

// Free GPUs per node name.
using FreeGpus = std::map<std::string, int>;

FreeGpus allFree(const Cluster& cluster);
void release(FreeGpus& free, const Assignment& assignment);
void take(FreeGpus& free, const Assignment& assignment);
int freeOfType(const FreeGpus& free, const Cluster& cluster, const std::string& gpu_type);

// GPUs the job asks for, capped at the largest type so that every job can eventually run.
int requestedGpus(const SimJob& job, const Cluster& cluster);

// `total_batch` split over `gpus` GPUs (local_bsz, accum_steps set, no nodes), with gradient
// accumulation when one micro-batch would exceed `max_local_bsz` (the GPU's memory limit).
Assignment splitBatch(long total_batch, int gpus, int max_local_bsz);

// The job's requested total batch split over `gpus` GPUs of `gpu_type`.
Assignment rigidBatch(const SimJob& job, const std::string& gpu_type, int gpus);

// `gpus` GPUs of `gpu_type` on as few nodes as possible (fullest-free nodes first), with the
// job's rigid batch; nullopt if the type lacks that many free GPUs.
std::optional<Assignment> packRigid(const SimJob& job, const Cluster& cluster,
                                    const FreeGpus& free, const std::string& gpu_type, int gpus);

// packRigid on the first GPU type (in cluster order) with room for the job's request.
std::optional<Assignment> packOnAnyType(const SimJob& job, const Cluster& cluster,
                                        const FreeGpus& free);

// Seconds the job would take alone on the cluster with its requested GPUs and batch size, on
// its fastest GPU type, first start delay included (the reference of finish-time fairness).
double isolatedRunTime(const SimJob& job, const Cluster& cluster);

// Seconds the job would take alone with `share_gpus` GPUs (its 1/N share of the cluster, as
// Themis defines finish-time fairness): whole GPUs on its fastest type with its requested
// batch, slowed in proportion below one GPU.
double fairShareRunTime(const SimJob& job, const Cluster& cluster, double share_gpus);

}  // namespace pollux::sim
