/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The actions of a round's plan carried out on Slurm's jobs: start (place), hold, requeue and
 * shrink, each through libslurm (slurm_update_job, the requeue and step signal calls of
 * slurm_compat.h), with Slurm's answer noted on the action.
 */
#ifndef POLLUX_JOB_ACTIONS_H
#define POLLUX_JOB_ACTIONS_H

#include <stdbool.h>
#include <time.h>

#include <slurm/slurm.h>

#include "service/pollux_service.h"

/* slurmctld's own: asks its main scheduler to run now (it only queues the request and wakes
 * the scheduler's thread; the same `void schedule(bool full_queue)` in 22.05 through 26.05).
 * A job update only asks for it at the next background pass, up to batch_sched_delay (3 s)
 * after the last one: a job the plugin placed would wait that long. */
extern void schedule(bool full_queue);

/* Carries out the plan's actions in order, noting Slurm's answer to each. Placements (starts
 * and requeues) go on for at most `placement_ms` after the first; the later ones are left for
 * the next round (POLLUX_ACTION_DEFERRED), since each waits for slurmctld's answer. Jobs it
 * placed are started by Slurm's main scheduler, which is asked to run now if `start_now` (not
 * while nodes re-register after a restart: Slurm's own pace then). Returns when the jobs
 * placed to begin later may begin, for the main scheduler to be asked again then; 0 if none
 * or not `start_now`. */
time_t job_actions_carry_out(pollux_plan_t *plan, const job_info_msg_t *jobs, bool start_now,
                             int placement_ms);

#endif
