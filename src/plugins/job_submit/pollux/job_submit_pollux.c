/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * job_submit/pollux: recognises adaptive jobs (sbatch --comment=adaptive[:options]) at
 * submission, rejects a malformed comment with the reason, and makes adaptive jobs
 * requeueable, survivors of a failed node (--no-kill) and keeps them from starting until
 * sched/pollux places them: their begin time is POLLUX_HOLD_TIME, so `sbatch --hold` and
 * later holds stay the user's or admin's own.
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/spank.h>

#include "pollux_comment.h"
#include "plugins/slurm_compat.h"
#include "service/pollux_service.h"

const char plugin_name[] = "Pollux adaptive job submission";
const char plugin_type[] = "job_submit/pollux";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/* Slurm's allocator (libslurmfull): err_msg is freed by slurmctld with xfree. */
extern char *slurm_xstrdup(const char *text);

extern int init(void)
{
  return SLURM_SUCCESS;
}

extern void fini(void)
{
}

/* Checks an adaptive job's comment and GPU request; on a problem sets err_msg for the user
 * and returns an error. */
static int check_job(const job_desc_msg_t *job_desc, char **err_msg, int *adaptive)
{
  char reason[512] = "";

  *adaptive = pollux_check_adaptive_job(job_desc->comment, job_desc->tres_per_node,
                                        job_desc->tres_per_job, reason, sizeof(reason));
  if (*adaptive >= 0)
    return SLURM_SUCCESS;
  if (err_msg)
    *err_msg = slurm_xstrdup(reason);
  slurm_info("job_submit/pollux: rejected JobId=%u: %s", POLLUX_DESC_JOB_ID(job_desc), reason);
  return SLURM_ERROR;
}

extern int job_submit(job_desc_msg_t *job_desc, uint32_t submit_uid, char **err_msg)
{
  int adaptive;
  (void)submit_uid;

  if (check_job(job_desc, err_msg, &adaptive) != SLURM_SUCCESS)
    return SLURM_ERROR;
  if (adaptive) {
    job_desc->requeue = 1;
    /* A failed node leaves the job running on its other nodes (as sbatch --no-kill does),
     * where pollux-agent's workers go on live; a job that cannot go on ends FAILED and
     * sched/pollux requeues it. */
    if (job_desc->kill_on_node_fail == NO_VAL16)
      job_desc->kill_on_node_fail = 0;
    /* A user's --begin ahead is kept: sched/pollux holds the job from its first round on and
     * places it no earlier than that time. */
    if (job_desc->begin_time <= time(NULL))
      job_desc->begin_time = POLLUX_HOLD_TIME;
  }
  return SLURM_SUCCESS;
}

/* job_ptr is slurmctld's job_record_t, which this plugin does not need. */
extern int job_modify(job_desc_msg_t *job_desc, void *job_ptr,
                      uint32_t submit_uid POLLUX_JOB_MODIFY_ERR_MSG_PARAM)
{
  int adaptive;
  (void)job_ptr;
  (void)submit_uid;

  if (!job_desc->comment)
    return SLURM_SUCCESS;
  return check_job(job_desc, POLLUX_JOB_MODIFY_ERR_MSG, &adaptive);
}
