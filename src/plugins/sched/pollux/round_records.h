/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Slurm's records for one round, loaded from slurmctld (jobs, nodes, partitions,
 * reservations, licenses and, where Slurm enforces them, QOS and association limits), and the
 * round's views filled from them by slurm_round.c's conversions.
 */
#ifndef POLLUX_ROUND_RECORDS_H
#define POLLUX_ROUND_RECORDS_H

#include <stdbool.h>

#include <slurm/slurm.h>
#include <slurm/slurmdb.h>

#include "service/pollux_service.h"
#include "slurm_round.h"

/* Slurm's records of one round; its partitions, reservations and licenses are kept for the
 * next (zero the struct before the first). */
typedef struct {
  node_info_msg_t *nodes;
  partition_info_msg_t *partitions;
  job_info_msg_t *jobs;
  reserve_info_msg_t *reservations;
  license_info_msg_t *licenses;
  assoc_mgr_info_msg_t *limits; /* NULL where Slurm enforces none */
} round_records_t;

/* Slurm's records as the round's views, with what the views own. */
typedef struct {
  pollux_round_t round;
  pollux_node_view_t *nodes;
  pollux_partition_view_t *partitions;
  pollux_job_view_t *jobs;
  pollux_reservation_view_t *reservations;
  pollux_license_view_t *licenses;
  pollux_qos_view_t *qos;
  pollux_association_view_t *associations;
} round_views_t;

/* Loads `records` from slurmctld: the jobs, nodes and (only if `limits_enforced`) limits
 * afresh; the partitions, reservations and licenses only where Slurm changed them since those
 * kept in `records` (a small reply otherwise). 0, or -1 (logged). round_records_end_round()
 * frees what was loaded afresh either way. */
int round_records_load(round_records_t *records, bool limits_enforced);

/* Frees the round's jobs, nodes and limits; keeps the rest for the next load. */
void round_records_end_round(round_records_t *records);

/* Frees every record, those kept too. */
void round_records_free(round_records_t *records);

/* Frees jobs loaded with slurm_load_jobs(), with the strings older Slurm leaves behind. */
void round_records_free_jobs(job_info_msg_t *jobs);

/* Fills `views` from `records` (which they point into); 0, or -1 with errno.
 * round_views_free() frees them either way. */
int round_views_fill(round_views_t *views, const round_records_t *records,
                     const slurm_round_defaults_t *defaults);

void round_views_free(round_views_t *views);

#endif
