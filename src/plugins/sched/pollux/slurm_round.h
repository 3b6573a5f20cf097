/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Slurm's jobs, nodes, partitions, reservations and licenses as one pollux_round_t: the shim's
 * conversions, one function per Slurm object kind. They read only what they are given (no
 * RPC, no slurm.conf), so tests/slurm_round_test.c runs them on fake Slurm records.
 */
#ifndef POLLUX_SLURM_ROUND_H
#define POLLUX_SLURM_ROUND_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <slurm/slurm.h>
#include <slurm/slurmdb.h>

#include "service/pollux_service.h"
#include "plugins/slurm_compat.h"

/* What of slurm.conf the conversions apply. */
typedef struct {
  bool memory_consumable;  /* SelectTypeParameters CR_*_Memory */
  uint64_t cpus_per_gpu;   /* DefCpuPerGPU, NO_VAL64 if unset */
  uint64_t memory_per_gpu; /* DefMemPerGPU (MB), NO_VAL64 if unset */
} slurm_round_defaults_t;

/* A node, given what jobs hold of its CPUs and memory (MB; read through slurm_compat.h).
 * Returns 0, or -1 (ENOMEM). The view points into `node`. */
int slurm_round_node(const node_info_t *node, uint16_t alloc_cpus, uint64_t alloc_memory_mb,
                     bool memory_consumable, pollux_node_view_t *view);

/* A partition with its nodes expanded; 0, or -1 (ENOMEM). */
int slurm_round_partition(const partition_info_t *partition, pollux_partition_view_t *view);

/* A job, with the DefCpuPerGPU and DefMemPerGPU of its partition (among `partitions`) or of
 * `defaults`; 0, or -1 (ENOMEM). The view points into `job`. */
int slurm_round_job(const slurm_job_info_t *job, const partition_info_msg_t *partitions,
                    const slurm_round_defaults_t *defaults, pollux_job_view_t *view);

/* A reservation with its nodes expanded; 0, or -1 (ENOMEM). The view points into `resv`. */
int slurm_round_reservation(const reserve_info_t *resv, pollux_reservation_view_t *view);

/* One of the cluster's licenses. The view points into `license`. */
void slurm_round_license(const slurm_license_info_t *license, pollux_license_view_t *view);

/* The positions of the TRES whose limits the policy applies in assoc_mgr's TRES arrays, each
 * -1 where the cluster does not count it (no limits or usage read for it). */
typedef struct {
  int gpu; /* gres/gpu */
  int cpu;
  int mem;
  int node;
} slurm_round_tres_t;

/* Their positions among `tres_names` (assoc_mgr_info_msg_t's). */
slurm_round_tres_t slurm_round_tres_positions(char **tres_names, uint32_t tres_count);

/* A QOS or an association of slurmctld's assoc_mgr, with its limits and usage of the TRES at
 * `tres`. 0, or -1 (ENOMEM) for the QOS's user array. The views point into the records. */
int slurm_round_qos(const slurmdb_qos_rec_t *qos, const slurm_round_tres_t *tres,
                    pollux_qos_view_t *view);
void slurm_round_association(const slurmdb_assoc_rec_t *assoc, const slurm_round_tres_t *tres,
                             pollux_association_view_t *view);
void slurm_round_qos_free(pollux_qos_view_t *view);

/* The value of a JOB_DEF_* entry (DefCpuPerGPU, DefMemPerGPU) of a job defaults list (of
 * slurm.conf or a partition), or NO_VAL64. */
uint64_t slurm_round_job_default(list_t *defaults, uint16_t type);

/* Whether every node that looks up (not down, drained, failed, not responding, future or
 * unknown) has registered with this slurmctld. After a restart slurmctld shows nodes in their
 * saved state until their slurmd registers again (seconds later), and a job started on one
 * before can fail (its step: "Invalid generic resource (gres) specification"). slurmctld does
 * not save a node's slurmd start time: it is 0 until the slurmd registers (22.05 to 26.05). */
bool slurm_round_nodes_registered(const node_info_msg_t *nodes);

/* Whether a round needs the job: false only for a job that has ended, no longer completes
 * and was not submitted adaptive (no "adaptive" in its comment). The service gives such jobs
 * no record, no GPUs and no status, so rounds leave them out: at a busy site they are most
 * of what slurmctld keeps (MinJobAge), and each cost a round as much as a live one. */
bool slurm_round_job_needed(const slurm_job_info_t *job);

/* What a look for new work (pollux_events_new_work) needs of a job; `brief` points into it. */
void slurm_round_event_job(const slurm_job_info_t *job, pollux_event_job_t *brief);

/* What a look for new work by states alone (pollux_events_new_work_from_states) needs of a
 * job: its id and Slurm's job_state (base state and flags). */
void slurm_round_event_state(uint32_t job_id, uint32_t job_state, pollux_event_state_t *brief);

/* Frees what slurm_round_partition() and slurm_round_job() allocated for a view. */
void slurm_round_partition_free(pollux_partition_view_t *view);
void slurm_round_job_free(pollux_job_view_t *view);
void slurm_round_reservation_free(pollux_reservation_view_t *view);

#endif /* POLLUX_SLURM_ROUND_H */
