/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sched/pollux's load of Slurm's records for a round and the views filled from them: the
 * RPCs that read slurmctld's jobs, nodes, partitions, reservations, licenses and limits, and
 * the arrays of views the service plans on.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/slurmdb.h>
#include <slurm/spank.h>

#include "plugins/slurm_compat.h"
#include "round_records.h"

/* Slurm's xfree (exported by libslurm, not declared in slurm.h). */
extern void slurm_xfree(void **pointer);

/* Slurm before 23.02.5 (SchedMD bug 17246) leaves these job strings allocated in
 * slurm_free_job_info_msg(); the plugin loads every job each round and writes AdminComment,
 * so it would leak them every round (found by tests/valgrind_cluster.sh). Freeing them
 * first is harmless where Slurm frees them itself: xfree leaves NULL behind. */
void round_records_free_jobs(job_info_msg_t *jobs)
{
  for (uint32_t i = 0; i < jobs->record_count; i++) {
    slurm_job_info_t *job = &jobs->job_array[i];

    slurm_xfree((void **)&job->admin_comment);
    slurm_xfree((void **)&job->cluster_features);
    slurm_xfree((void **)&job->cronspec);
    slurm_xfree((void **)&job->prefer);
    slurm_xfree((void **)&job->system_comment);
  }
  slurm_free_job_info_msg(jobs);
}

/* Loads slurmctld's QOS and association limits with their usage (the RPC behind `scontrol
 * show assoc_mgr`); NULL on an error (logged: the round then goes on without them, and
 * Slurm's refusals still protect the limits). */
static assoc_mgr_info_msg_t *load_limits(void)
{
  assoc_mgr_info_request_msg_t request;
  assoc_mgr_info_msg_t *limits = NULL;

  memset(&request, 0, sizeof(request));
  request.flags = ASSOC_MGR_INFO_FLAG_ASSOC | ASSOC_MGR_INFO_FLAG_QOS;
  if (slurm_load_assoc_mgr_info(&request, &limits) != SLURM_SUCCESS) {
    slurm_error("sched/pollux: cannot load QOS and association limits: %s", slurm_strerror(errno));
    return NULL;
  }
  return limits;
}

/* Each kept record's load: Slurm sends it only if it changed since `kept` was loaded (else
 * SLURM_NO_CHANGE_IN_DATA, and `kept` stays). SLURM_SUCCESS or SLURM_ERROR (errno). */
static int load_partitions(partition_info_msg_t **kept)
{
  partition_info_msg_t *loaded = NULL;

  if (slurm_load_partitions(*kept ? (*kept)->last_update : 0, &loaded, SHOW_ALL) != SLURM_SUCCESS)
    return *kept && errno == SLURM_NO_CHANGE_IN_DATA ? SLURM_SUCCESS : SLURM_ERROR;
  if (*kept)
    slurm_free_partition_info_msg(*kept);
  *kept = loaded;
  return SLURM_SUCCESS;
}

static int load_reservations(reserve_info_msg_t **kept)
{
  reserve_info_msg_t *loaded = NULL;

  if (slurm_load_reservations(*kept ? (*kept)->last_update : 0, &loaded) != SLURM_SUCCESS)
    return *kept && errno == SLURM_NO_CHANGE_IN_DATA ? SLURM_SUCCESS : SLURM_ERROR;
  if (*kept)
    slurm_free_reservation_info_msg(*kept);
  *kept = loaded;
  return SLURM_SUCCESS;
}

static int load_licenses(license_info_msg_t **kept)
{
  license_info_msg_t *loaded = NULL;

  if (slurm_load_licenses(*kept ? (*kept)->last_update : 0, &loaded, SHOW_ALL) != SLURM_SUCCESS)
    return *kept && errno == SLURM_NO_CHANGE_IN_DATA ? SLURM_SUCCESS : SLURM_ERROR;
  if (*kept)
    slurm_free_license_info_msg(*kept);
  *kept = loaded;
  return SLURM_SUCCESS;
}

int round_records_load(round_records_t *records, bool limits_enforced)
{
  round_records_end_round(records);
  /* Nodes first: a job that starts in between is then running but not yet counted in its
   * node's GPUs in use, which the service allows for (the other order would not). SHOW_DETAIL
   * gives each node's GPUs in use (gres_used). */
  if (slurm_load_node((time_t)0, &records->nodes, SHOW_ALL | SHOW_DETAIL) != SLURM_SUCCESS ||
      slurm_load_jobs((time_t)0, &records->jobs, SHOW_ALL) != SLURM_SUCCESS ||
      load_partitions(&records->partitions) != SLURM_SUCCESS ||
      load_reservations(&records->reservations) != SLURM_SUCCESS ||
      load_licenses(&records->licenses) != SLURM_SUCCESS) {
    slurm_error("sched/pollux: cannot load jobs, nodes, partitions, reservations and licenses: %s",
                slurm_strerror(errno));
    return -1;
  }
  if (limits_enforced)
    records->limits = load_limits();
  return 0;
}

void round_records_end_round(round_records_t *records)
{
  if (records->jobs)
    round_records_free_jobs(records->jobs);
  if (records->nodes)
    slurm_free_node_info_msg(records->nodes);
  if (records->limits)
    slurm_free_assoc_mgr_info_msg(records->limits);
  records->jobs = NULL;
  records->nodes = NULL;
  records->limits = NULL;
}

void round_records_free(round_records_t *records)
{
  round_records_end_round(records);
  if (records->partitions)
    slurm_free_partition_info_msg(records->partitions);
  if (records->reservations)
    slurm_free_reservation_info_msg(records->reservations);
  if (records->licenses)
    slurm_free_license_info_msg(records->licenses);
  memset(records, 0, sizeof(*records));
}

void round_views_free(round_views_t *views)
{
  for (size_t i = 0; i < views->round.partition_count; i++)
    slurm_round_partition_free(&views->partitions[i]);
  for (size_t i = 0; i < views->round.job_count; i++)
    slurm_round_job_free(&views->jobs[i]);
  for (size_t i = 0; i < views->round.reservation_count; i++)
    slurm_round_reservation_free(&views->reservations[i]);
  for (size_t i = 0; i < views->round.qos_count; i++)
    slurm_round_qos_free(&views->qos[i]);
  free(views->qos);
  free(views->associations);
  free(views->nodes);
  free(views->partitions);
  free(views->jobs);
  free(views->reservations);
  free(views->licenses);
  memset(views, 0, sizeof(*views));
}

/* Allocates the views of the round's nodes, partitions, jobs and reservations, one more of
 * each than Slurm has; 0, or -1 with errno. */
static int allocate_views(round_views_t *views, const round_records_t *records)
{
  views->nodes = calloc(records->nodes->record_count + 1, sizeof(*views->nodes));
  views->partitions = calloc(records->partitions->record_count + 1, sizeof(*views->partitions));
  views->jobs = calloc(records->jobs->record_count + 1, sizeof(*views->jobs));
  views->reservations =
      calloc(records->reservations->record_count + 1, sizeof(*views->reservations));
  if (!views->nodes || !views->partitions || !views->jobs || !views->reservations) {
    errno = ENOMEM;
    return -1;
  }
  views->round.nodes = views->nodes;
  views->round.partitions = views->partitions;
  views->round.jobs = views->jobs;
  views->round.reservations = views->reservations;
  return 0;
}

static void fill_node_views(round_views_t *views, const node_info_msg_t *nodes,
                            bool memory_consumable)
{
  for (uint32_t i = 0; i < nodes->record_count; i++) {
    const node_info_t *node = &nodes->node_array[i];

    if (node->name)
      slurm_round_node(node, pollux_node_alloc_cpus(node),
                       memory_consumable ? pollux_node_alloc_memory(node) : 0, memory_consumable,
                       &views->nodes[views->round.node_count++]);
  }
}

/* 0, or -1 with errno. */
static int fill_partition_views(round_views_t *views, const partition_info_msg_t *partitions)
{
  for (uint32_t i = 0; i < partitions->record_count; i++) {
    if (!partitions->partition_array[i].name)
      continue;
    if (slurm_round_partition(&partitions->partition_array[i],
                              &views->partitions[views->round.partition_count]))
      return -1;
    views->round.partition_count++;
  }
  return 0;
}

/* 0, or -1 with errno. */
static int fill_job_views(round_views_t *views, const job_info_msg_t *jobs,
                          const partition_info_msg_t *partitions,
                          const slurm_round_defaults_t *defaults)
{
  for (uint32_t i = 0; i < jobs->record_count; i++) {
    if (!slurm_round_job_needed(&jobs->job_array[i]))
      continue;
    if (slurm_round_job(&jobs->job_array[i], partitions, defaults,
                        &views->jobs[views->round.job_count]))
      return -1;
    views->round.job_count++;
  }
  return 0;
}

/* 0, or -1 with errno. */
static int fill_reservation_views(round_views_t *views, const reserve_info_msg_t *reservations)
{
  for (uint32_t i = 0; i < reservations->record_count; i++) {
    if (!reservations->reservation_array[i].name)
      continue;
    if (slurm_round_reservation(&reservations->reservation_array[i],
                                &views->reservations[views->round.reservation_count]))
      return -1;
    views->round.reservation_count++;
  }
  return 0;
}

/* Adds the cluster's licenses to `views`; 0, or -1 with errno. */
static int fill_license_views(round_views_t *views, const license_info_msg_t *licenses)
{
  views->licenses = calloc(licenses->num_lic + 1, sizeof(*views->licenses));
  if (!views->licenses) {
    errno = ENOMEM;
    return -1;
  }
  views->round.licenses = views->licenses;
  for (uint32_t i = 0; i < licenses->num_lic; i++) {
    if (licenses->lic_array[i].name)
      slurm_round_license(&licenses->lic_array[i], &views->licenses[views->round.license_count++]);
  }
  return 0;
}

/* 0, or -1 with errno. */
static int fill_qos_views(round_views_t *views, list_t *qos_list, size_t qos_count,
                          const slurm_round_tres_t *tres)
{
  list_itr_t *entries = slurm_list_iterator_create(qos_list);
  void *record;
  int rc = 0;

  while (rc == 0 && (record = slurm_list_next(entries)) && views->round.qos_count < qos_count) {
    rc = slurm_round_qos(record, tres, &views->qos[views->round.qos_count]);
    if (rc == 0)
      views->round.qos_count++;
  }
  slurm_list_iterator_destroy(entries);
  return rc ? -1 : 0;
}

static void fill_association_views(round_views_t *views, list_t *assoc_list, size_t assoc_count,
                                   const slurm_round_tres_t *tres)
{
  list_itr_t *entries = slurm_list_iterator_create(assoc_list);
  void *record;

  while ((record = slurm_list_next(entries)) && views->round.association_count < assoc_count)
    slurm_round_association(record, tres,
                            &views->associations[views->round.association_count++]);
  slurm_list_iterator_destroy(entries);
}

/* Adds slurmctld's QOS and associations, with their limits and usage, to `views`; 0, or -1
 * with errno. */
static int fill_limit_views(round_views_t *views, const assoc_mgr_info_msg_t *limits)
{
  slurm_round_tres_t tres = slurm_round_tres_positions(limits->tres_names, limits->tres_cnt);
  size_t qos_count = limits->qos_list ? slurm_list_count(limits->qos_list) : 0;
  size_t assoc_count = limits->assoc_list ? slurm_list_count(limits->assoc_list) : 0;

  views->qos = calloc(qos_count + 1, sizeof(*views->qos));
  views->associations = calloc(assoc_count + 1, sizeof(*views->associations));
  if (!views->qos || !views->associations) {
    errno = ENOMEM;
    return -1;
  }
  views->round.qos = views->qos;
  views->round.associations = views->associations;
  if (qos_count && fill_qos_views(views, limits->qos_list, qos_count, &tres) != 0)
    return -1;
  if (assoc_count)
    fill_association_views(views, limits->assoc_list, assoc_count, &tres);
  return 0;
}

int round_views_fill(round_views_t *views, const round_records_t *records,
                     const slurm_round_defaults_t *defaults)
{
  memset(views, 0, sizeof(*views));
  views->round.now = time(NULL);
  if (allocate_views(views, records) != 0)
    return -1;
  fill_node_views(views, records->nodes, defaults->memory_consumable);
  if (fill_partition_views(views, records->partitions) != 0 ||
      fill_job_views(views, records->jobs, records->partitions, defaults) != 0 ||
      fill_reservation_views(views, records->reservations) != 0 ||
      fill_license_views(views, records->licenses) != 0)
    return -1;
  return records->limits ? fill_limit_views(views, records->limits) : 0;
}
