/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sched/pollux's actions on Slurm's jobs: a round's plan carried out, one libslurm call (or
 * two, for a requeue) per action, in the plan's order.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/spank.h>

#include "plugins/slurm_compat.h"
#include "clock_ms.h"
#include "job_actions.h"

static int update_or_errno(job_desc_msg_t *desc)
{
  return slurm_update_job(desc) == SLURM_SUCCESS ? 0 : errno;
}

/* Keeps a pending job from starting until a round places it: its begin time, not its
 * priority, so a hold of its user's or an admin's stays theirs (POLLUX_HOLD_TIME). A time
 * limit, if given, is set too (minutes; 0: left as it is). */
static int hold_job(uint32_t job_id, uint32_t time_limit_min)
{
  job_desc_msg_t desc;

  slurm_init_job_desc_msg(&desc);
  POLLUX_DESC_JOB_ID(&desc) = job_id;
  desc.begin_time = POLLUX_HOLD_TIME;
  if (time_limit_min)
    desc.time_limit = time_limit_min;
  return update_or_errno(&desc);
}

/* Gives a pending job its size, GPUs and nodes, and lets it start at `begin`. The GPU request
 * is untyped: the nodes decide the type (22.05 leaves a pending job unrunnable,
 * BadConstraints, when its typed request changes type). Its task and CPU counts follow its
 * nodes: Slurm raises them for more nodes but keeps them for fewer, BadConstraints again. */
static int place_job(const pollux_action_t *action, time_t begin)
{
  job_desc_msg_t desc;

  slurm_init_job_desc_msg(&desc);
  POLLUX_DESC_JOB_ID(&desc) = action->job_id;
  desc.min_nodes = action->num_nodes;
  desc.max_nodes = action->num_nodes;
  desc.tres_per_node = (char *)action->tres_per_node;
  desc.req_nodes = (char *)action->node_list;
  if (action->num_tasks) {
    desc.num_tasks = action->num_tasks;
    desc.min_cpus = action->min_cpus;
  }
  desc.admin_comment = (char *)action->admin_comment;
  if (action->release)
    desc.priority = INFINITE;
  if (action->time_limit_min)
    desc.time_limit = action->time_limit_min;
  desc.begin_time = begin;
  return update_or_errno(&desc);
}

/* Requeues a running job and places it for its restart. Once its last run is done, Slurm
 * pushes its begin time out by its requeue delay (every release): a later round (an event
 * round, see pollux_service.h) lets it begin. Once requeued, the job counts as requeued even
 * if its placement fails (slurmctld stopping meanwhile, say): a later round places it, and a
 * run that fails at its start is requeued once more, as after any requeue of a round. */
static int requeue_job(const pollux_action_t *action, time_t begin)
{
  int placement_error;

  if (pollux_requeue(action->job_id) != SLURM_SUCCESS)
    return errno;
  placement_error = action->num_nodes ? place_job(action, begin)
                                      : hold_job(action->job_id, action->time_limit_min);
  if (placement_error)
    slurm_error(
        "sched/pollux: JobId=%u requeued, but its placement failed: %s; a later round "
        "places it",
        action->job_id, slurm_strerror(placement_error));
  return 0;
}

/* Asks a running job's steps to checkpoint; its batch script's `pollux-agent --launch` then
 * shrinks the job to the action's nodes (Slurm lets a job's owner do so) and starts the step
 * again there. Shrinking from here first would kill the tasks on the removed nodes before
 * they could checkpoint. */
static int shrink_job(const pollux_action_t *action)
{
  return pollux_signal_steps(action->job_id, SIGTERM) == SLURM_SUCCESS ? 0 : errno;
}

static int perform(const pollux_action_t *action, time_t begin)
{
  switch (action->kind) {
  case POLLUX_ACTION_HOLD: return hold_job(action->job_id, 0);
  case POLLUX_ACTION_START: return place_job(action, begin);
  case POLLUX_ACTION_REQUEUE: return requeue_job(action, begin);
  case POLLUX_ACTION_SHRINK: return shrink_job(action);
  case POLLUX_ACTION_SHRINK_LIVE: return 0; /* the job's agent acts on the decision */
  case POLLUX_ACTION_CANCEL:
    return pollux_cancel(action->job_id) == SLURM_SUCCESS ? 0 : errno;
  case POLLUX_ACTION_CHECKPOINT:
    return pollux_signal_steps(action->job_id, SIGTERM) == SLURM_SUCCESS ? 0 : errno;
  default: return SLURM_ERROR;
  }
}

/* Whether Slurm's job `job_id` has run before (requeued by a round, its user or Slurm). */
static bool ran_before(const job_info_msg_t *jobs, uint32_t job_id)
{
  for (uint32_t i = 0; i < jobs->record_count; i++) {
    if (jobs->job_array[i].job_id == job_id)
      return jobs->job_array[i].restart_cnt > 0;
  }
  return false;
}

/* When a job placed now may begin: at once if it never ran, else from the next second.
 * slurmd refuses a batch launch whose credential is not newer, to the second, than the
 * revocation of the job's last run, and slurmctld then records the job COMPLETED ("race
 * condition on job termination"): a job requeued and started again within one second ended
 * that way. (Its last run is done when a round starts it, so the revocation is in the past.) */
static time_t begin_time(const pollux_action_t *action, const job_info_msg_t *jobs, time_t now)
{
  bool restarts = action->kind == POLLUX_ACTION_REQUEUE ||
                  (action->kind == POLLUX_ACTION_START && ran_before(jobs, action->job_id));

  return restarts ? now + 1 : now;
}

time_t job_actions_carry_out(pollux_plan_t *plan, const job_info_msg_t *jobs, bool start_now,
                             int placement_ms)
{
  time_t now = time(NULL), latest_begin = now;
  bool placed = false;
  double first_placement = 0; /* 0: none yet */

  for (size_t i = 0; i < plan->action_count; i++) {
    pollux_action_t *action = &plan->actions[i];
    bool places = action->num_nodes &&
                  (action->kind == POLLUX_ACTION_START || action->kind == POLLUX_ACTION_REQUEUE);
    time_t begin = begin_time(action, jobs, now);

    /* Requeues to be held wait too: they free the nodes of the placements after them. */
    if (action->kind == POLLUX_ACTION_START || action->kind == POLLUX_ACTION_REQUEUE) {
      if (first_placement && clock_ms() - first_placement > placement_ms) {
        action->error_code = POLLUX_ACTION_DEFERRED;
        action->error_text = NULL;
        continue;
      }
      if (!first_placement)
        first_placement = clock_ms();
    }
    action->error_code = perform(action, begin);
    action->error_text = action->error_code ? slurm_strerror(action->error_code) : NULL;
    if (places && !action->error_code) {
      placed = true;
      if (begin > latest_begin)
        latest_begin = begin;
    }
  }
  if (placed && start_now)
    schedule(false);
  return start_now && latest_begin > now ? latest_begin : 0;
}
