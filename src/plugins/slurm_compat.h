/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Every difference between the Slurm releases the plugins are built against (22.05, 24.11,
 * 25.11, 26.05), in one place: the only file with SLURM_VERSION_NUMBER checks. The shims
 * use the names below and stay the same for every release. A symbol a release lacks is a
 * plugin that does not load (they link with -z now), so nothing here may warn.
 */
#ifndef POLLUX_SLURM_COMPAT_H
#define POLLUX_SLURM_COMPAT_H

#include <signal.h>
#include <stdint.h>

#include <slurm/slurm.h>
#include <slurm/slurm_version.h>

/* List and ListIterator became list_t * and list_itr_t * in 23.02 (old names gone in 24.11).
 * hostlist_t was a pointer type until 23.11; `struct hostlist *` works with either. */
#if SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(23, 2, 0)
typedef struct xlist list_t;
typedef struct listIterator list_itr_t;
#endif
typedef struct hostlist pollux_hostlist_t;

/* CR_MEMORY (memory is a consumable resource) was renamed SELECT_MEMORY in 25.11. */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 11, 0)
#define POLLUX_SELECT_MEMORY SELECT_MEMORY
#else
#define POLLUX_SELECT_MEMORY CR_MEMORY
#endif

/* A node's allocated CPUs and memory (MB): fields of node_info_t from 25.05 on, before that
 * read through slurm_get_select_nodeinfo() (which 25.05 removed). Both return 0 on failure. */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 5, 0)
static inline uint16_t pollux_node_alloc_cpus(const node_info_t *node)
{
  return node->alloc_cpus;
}

static inline uint64_t pollux_node_alloc_memory(const node_info_t *node)
{
  return node->alloc_memory;
}
#else
static inline uint16_t pollux_node_alloc_cpus(const node_info_t *node)
{
  uint16_t allocated = 0;

  if (slurm_get_select_nodeinfo(node->select_nodeinfo, SELECT_NODEDATA_SUBCNT,
                                NODE_STATE_ALLOCATED, &allocated) != SLURM_SUCCESS)
    return 0;
  return allocated;
}

static inline uint64_t pollux_node_alloc_memory(const node_info_t *node)
{
  uint64_t allocated = 0;

  if (slurm_get_select_nodeinfo(node->select_nodeinfo, SELECT_NODEDATA_MEM_ALLOC,
                                NODE_STATE_ALLOCATED, &allocated) != SLURM_SUCCESS)
    return 0;
  return allocated;
}
#endif

/* job_desc_msg_t.job_id moved into step_id in 25.11. */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 11, 0)
#define POLLUX_DESC_JOB_ID(desc) ((desc)->step_id.job_id)
#else
#define POLLUX_DESC_JOB_ID(desc) ((desc)->job_id)
#endif

/* slurm_requeue() and slurm_kill_job() take a slurm_step_id_t from 26.05 on. */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 5, 0)
#define POLLUX_JOB_STEP_ID(job_id) \
  ((slurm_step_id_t){ .job_id = (job_id), .step_id = NO_VAL, .step_het_comp = NO_VAL })
#else
#define POLLUX_JOB_STEP_ID(job_id) (job_id)
#endif

static inline int pollux_requeue(uint32_t job_id)
{
  return slurm_requeue(POLLUX_JOB_STEP_ID(job_id), 0);
}

/* One job's record (every record of a job array's id), this cluster's alone: without
 * SHOW_LOCAL, slurm_load_job() asks slurmctld for the federation first. */
static inline int pollux_load_job(job_info_msg_t **records, uint32_t job_id)
{
  return slurm_load_job(records, POLLUX_JOB_STEP_ID(job_id), SHOW_ALL | SHOW_LOCAL);
}

/* Signals every step of a running job but its batch script (and extern step). */
static inline int pollux_signal_steps(uint32_t job_id, uint16_t signal_number)
{
  return slurm_kill_job(POLLUX_JOB_STEP_ID(job_id), signal_number, KILL_STEPS_ONLY);
}

/* Cancels a job as scancel does (SIGKILL: Slurm sends its steps SIGTERM first, then KillWait). */
static inline int pollux_cancel(uint32_t job_id)
{
  return slurm_kill_job(POLLUX_JOB_STEP_ID(job_id), SIGKILL, 0);
}

/* job_submit's job_modify() gained `char **err_msg` (the reason shown to the user) in 23.02:
 * declare it as job_modify(job_desc, job_ptr, submit_uid POLLUX_JOB_MODIFY_ERR_MSG_PARAM)
 * and pass POLLUX_JOB_MODIFY_ERR_MSG where a char ** is wanted (NULL before 23.02). */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0)
#define POLLUX_JOB_MODIFY_ERR_MSG_PARAM , char **err_msg
#define POLLUX_JOB_MODIFY_ERR_MSG err_msg
#else
#define POLLUX_JOB_MODIFY_ERR_MSG_PARAM
#define POLLUX_JOB_MODIFY_ERR_MSG NULL
#endif

/* AccountingStorageEnforce's limits and qos bits (Slurm's ACCOUNTING_ENFORCE_LIMITS and
 * _QOS, read_config.h: the same bits from 22.05 to 26.05, not in the public headers). */
#define POLLUX_ENFORCE_LIMITS 0x0002
#define POLLUX_ENFORCE_QOS 0x0008

/* The name of a pending job's reason (squeue's Reason): libslurm's slurm_job_reason_string
 * in 22.05, slurm_job_state_reason_string from 24.11 on (neither declared in slurm.h). */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(24, 11, 0)
extern const char *slurm_job_state_reason_string(enum job_state_reason reason);
#define pollux_job_reason(reason) slurm_job_state_reason_string(reason)
#else
extern char *slurm_job_reason_string(enum job_state_reason reason);
#define pollux_job_reason(reason) ((const char *)slurm_job_reason_string(reason))
#endif

/* slurm_load_job_state(): every job's id and state, without its record, from 23.02 on. */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0)
#define POLLUX_HAVE_JOB_STATES 1
#else
#define POLLUX_HAVE_JOB_STATES 0
#endif

#endif /* POLLUX_SLURM_COMPAT_H */
