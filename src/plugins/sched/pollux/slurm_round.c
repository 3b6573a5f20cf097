/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Slurm's records as the views of pollux_service.h (see slurm_round.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/slurm_compat.h"
#include "slurm_round.h"

/* Frees a names array this file allocated. */
static void free_names(pollux_names_t *names)
{
  for (size_t i = 0; i < names->count; i++)
    free((char *)names->names[i]);
  free((char **)names->names);
  names->names = NULL;
  names->count = 0;
}

static int append_name(pollux_names_t *names, const char *name)
{
  char **grown = realloc((char **)names->names, (names->count + 1) * sizeof(char *));
  char *copy;

  if (!grown)
    return -1;
  names->names = (const char *const *)grown;
  if (!(copy = strdup(name)))
    return -1;
  grown[names->count++] = copy;
  return 0;
}

/* Slurm's host list "n[1-2],n4" as {"n1", "n2", "n4"}; 0, or -1 (ENOMEM). */
static int names_from_hostlist(const char *compact, pollux_names_t *names)
{
  pollux_hostlist_t *list;
  char *host;
  int rc = 0;

  names->names = NULL;
  names->count = 0;
  if (!compact || !compact[0])
    return 0;
  if (!(list = slurm_hostlist_create(compact))) {
    errno = ENOMEM;
    return -1;
  }
  while (rc == 0 && (host = slurm_hostlist_shift(list))) {
    rc = append_name(names, host);
    free(host);
  }
  slurm_hostlist_destroy(list);
  if (rc) {
    free_names(names);
    errno = ENOMEM;
  }
  return rc;
}

/* "a,b" as {"a", "b"}; 0, or -1 (ENOMEM). */
static int names_from_commas(const char *text, pollux_names_t *names)
{
  char *copy, *save = NULL;
  int rc = 0;

  names->names = NULL;
  names->count = 0;
  if (!text || !text[0])
    return 0;
  if (!(copy = strdup(text))) {
    errno = ENOMEM;
    return -1;
  }
  for (char *name = strtok_r(copy, ",", &save); name && rc == 0; name = strtok_r(NULL, ",", &save))
    rc = append_name(names, name);
  free(copy);
  if (rc) {
    free_names(names);
    errno = ENOMEM;
  }
  return rc;
}

static int node_usable(uint32_t state)
{
  uint32_t base = state & NODE_STATE_BASE;

  if (base == NODE_STATE_DOWN || base == NODE_STATE_FUTURE || base == NODE_STATE_UNKNOWN)
    return 0;
  return !(state & (NODE_STATE_DRAIN | NODE_STATE_FAIL | NODE_STATE_NO_RESPOND));
}

int slurm_round_node(const node_info_t *node, uint16_t alloc_cpus, uint64_t alloc_memory_mb,
                     bool memory_consumable, pollux_node_view_t *view)
{
  memset(view, 0, sizeof(*view));
  view->name = node->name;
  view->gres = node->gres;
  view->gres_used = node->gres_used;
  view->usable = node_usable(node->node_state);
  view->registered = (node->node_state & NODE_STATE_BASE) != NODE_STATE_UNKNOWN;
  view->free_cpus = alloc_cpus < node->cpus ? node->cpus - alloc_cpus : 0;
  view->features = node->features_act ? node->features_act : node->features;
  view->memory_mb = view->free_memory_mb = -1;
  if (memory_consumable) {
    view->memory_mb = node->real_memory > node->mem_spec_limit ?
                        (int64_t)(node->real_memory - node->mem_spec_limit) : 0;
    view->free_memory_mb = (uint64_t)view->memory_mb > alloc_memory_mb ?
                             view->memory_mb - (int64_t)alloc_memory_mb : 0;
  }
  return 0;
}

/* A 32-bit count Slurm leaves unset as NO_VAL or INFINITE, as 0. */
static uint32_t count32_or_zero(uint32_t value)
{
  return value == NO_VAL || value == INFINITE ? 0 : value;
}

int slurm_round_partition(const partition_info_t *partition, pollux_partition_view_t *view)
{
  view->name = partition->name;
  view->max_nodes = count32_or_zero(partition->max_nodes);
  view->max_time_min = count32_or_zero(partition->max_time);
  view->qos = partition->qos_char;
  return names_from_hostlist(partition->nodes, &view->nodes);
}

void slurm_round_partition_free(pollux_partition_view_t *view)
{
  free_names(&view->nodes);
}

int slurm_round_reservation(const reserve_info_t *resv, pollux_reservation_view_t *view)
{
  view->name = resv->name;
  view->start_time = resv->start_time;
  view->end_time = resv->end_time;
  view->maintenance = (resv->flags & RESERVE_FLAG_MAINT) != 0;
  view->licenses = resv->licenses;
  return names_from_hostlist(resv->node_list, &view->nodes);
}

void slurm_round_reservation_free(pollux_reservation_view_t *view)
{
  free_names(&view->nodes);
}

void slurm_round_license(const slurm_license_info_t *license, pollux_license_view_t *view)
{
  view->name = license->name;
  view->available = license->available;
  view->reserved = license->reserved;
}

static int tres_position(char **tres_names, uint32_t tres_count, const char *name)
{
  for (uint32_t i = 0; tres_names && i < tres_count; i++) {
    if (tres_names[i] && !strcmp(tres_names[i], name))
      return (int)i;
  }
  return -1;
}

slurm_round_tres_t slurm_round_tres_positions(char **tres_names, uint32_t tres_count)
{
  slurm_round_tres_t positions;

  positions.gpu = tres_position(tres_names, tres_count, "gres/gpu");
  positions.cpu = tres_position(tres_names, tres_count, "cpu");
  positions.mem = tres_position(tres_names, tres_count, "mem");
  positions.node = tres_position(tres_names, tres_count, "node");
  return positions;
}

/* A limit of an assoc_mgr TRES array at `index`, or -1 where none is set. */
static int64_t tres_limit(const uint64_t *limits, int index)
{
  if (!limits || index < 0 || limits[index] == INFINITE64 || limits[index] == NO_VAL64)
    return -1;
  return (int64_t)limits[index];
}

static int64_t tres_used(const uint64_t *used, int index)
{
  return used && index >= 0 ? (int64_t)used[index] : 0;
}

/* A job count limit, or -1 where none is set. */
static int64_t count_limit(uint32_t limit)
{
  return limit == INFINITE || limit == NO_VAL ? -1 : (int64_t)limit;
}

/* The usage a QOS keeps per user: 0, or -1 (ENOMEM). */
static int fill_qos_users(list_t *used_limits, const slurm_round_tres_t *tres,
                          pollux_qos_view_t *view)
{
  pollux_user_usage_t *users;
  list_itr_t *entries;
  slurmdb_used_limits_t *used;
  size_t count = 0;

  if (!used_limits || slurm_list_count(used_limits) == 0)
    return 0;
  users = calloc(slurm_list_count(used_limits), sizeof(*users));
  if (!users) {
    errno = ENOMEM;
    return -1;
  }
  entries = slurm_list_iterator_create(used_limits);
  while ((used = slurm_list_next(entries))) {
    users[count].user_id = used->uid;
    users[count].gpus_used = tres_used(used->tres, tres->gpu);
    users[count].jobs_used = used->jobs;
    users[count].cpus_used = tres_used(used->tres, tres->cpu);
    users[count].memory_mb_used = tres_used(used->tres, tres->mem);
    users[count].nodes_used = tres_used(used->tres, tres->node);
    count++;
  }
  slurm_list_iterator_destroy(entries);
  view->users = users;
  view->user_count = count;
  return 0;
}

/* The usage a QOS keeps per account: 0, or -1 (ENOMEM). */
static int fill_qos_accounts(list_t *used_limits, const slurm_round_tres_t *tres,
                             pollux_qos_view_t *view)
{
  pollux_account_usage_t *accounts;
  list_itr_t *entries;
  slurmdb_used_limits_t *used;
  size_t count = 0;

  if (!used_limits || slurm_list_count(used_limits) == 0)
    return 0;
  accounts = calloc(slurm_list_count(used_limits), sizeof(*accounts));
  if (!accounts) {
    errno = ENOMEM;
    return -1;
  }
  entries = slurm_list_iterator_create(used_limits);
  while ((used = slurm_list_next(entries))) {
    if (!used->acct)
      continue;
    accounts[count].account = used->acct;
    accounts[count].gpus_used = tres_used(used->tres, tres->gpu);
    accounts[count].jobs_used = used->jobs;
    accounts[count].cpus_used = tres_used(used->tres, tres->cpu);
    accounts[count].memory_mb_used = tres_used(used->tres, tres->mem);
    accounts[count].nodes_used = tres_used(used->tres, tres->node);
    count++;
  }
  slurm_list_iterator_destroy(entries);
  view->accounts = accounts;
  view->account_count = count;
  return 0;
}

int slurm_round_qos(const slurmdb_qos_rec_t *qos, const slurm_round_tres_t *tres,
                    pollux_qos_view_t *view)
{
  const slurmdb_qos_usage_t *usage = qos->usage;

  memset(view, 0, sizeof(*view));
  view->name = qos->name;
  view->grp_gpus = tres_limit(qos->grp_tres_ctld, tres->gpu);
  view->max_gpus_per_user = tres_limit(qos->max_tres_pu_ctld, tres->gpu);
  view->max_gpus_per_job = tres_limit(qos->max_tres_pj_ctld, tres->gpu);
  view->grp_jobs = count_limit(qos->grp_jobs);
  view->max_jobs_per_user = count_limit(qos->max_jobs_pu);
  view->grp_cpus = tres_limit(qos->grp_tres_ctld, tres->cpu);
  view->grp_memory_mb = tres_limit(qos->grp_tres_ctld, tres->mem);
  view->grp_nodes = tres_limit(qos->grp_tres_ctld, tres->node);
  view->max_cpus_per_user = tres_limit(qos->max_tres_pu_ctld, tres->cpu);
  view->max_memory_mb_per_user = tres_limit(qos->max_tres_pu_ctld, tres->mem);
  view->max_nodes_per_user = tres_limit(qos->max_tres_pu_ctld, tres->node);
  view->max_cpus_per_job = tres_limit(qos->max_tres_pj_ctld, tres->cpu);
  view->max_memory_mb_per_job = tres_limit(qos->max_tres_pj_ctld, tres->mem);
  view->max_nodes_per_job = tres_limit(qos->max_tres_pj_ctld, tres->node);
  view->max_gpus_per_account = tres_limit(qos->max_tres_pa_ctld, tres->gpu);
  view->max_cpus_per_account = tres_limit(qos->max_tres_pa_ctld, tres->cpu);
  view->max_memory_mb_per_account = tres_limit(qos->max_tres_pa_ctld, tres->mem);
  view->max_nodes_per_account = tres_limit(qos->max_tres_pa_ctld, tres->node);
  view->max_jobs_per_account = count_limit(qos->max_jobs_pa);
  if (!usage)
    return 0;
  view->gpus_used = tres_used(usage->grp_used_tres, tres->gpu);
  view->jobs_used = usage->grp_used_jobs;
  view->cpus_used = tres_used(usage->grp_used_tres, tres->cpu);
  view->memory_mb_used = tres_used(usage->grp_used_tres, tres->mem);
  view->nodes_used = tres_used(usage->grp_used_tres, tres->node);
  if (fill_qos_users(usage->user_limit_list, tres, view) != 0 ||
      fill_qos_accounts(usage->acct_limit_list, tres, view) != 0) {
    slurm_round_qos_free(view);
    return -1;
  }
  return 0;
}

void slurm_round_qos_free(pollux_qos_view_t *view)
{
  free((pollux_user_usage_t *)view->users);
  view->users = NULL;
  view->user_count = 0;
  free((pollux_account_usage_t *)view->accounts);
  view->accounts = NULL;
  view->account_count = 0;
}

void slurm_round_association(const slurmdb_assoc_rec_t *assoc, const slurm_round_tres_t *tres,
                             pollux_association_view_t *view)
{
  memset(view, 0, sizeof(*view));
  view->id = assoc->id;
  view->parent_id = assoc->parent_id;
  view->account = assoc->acct;
  view->user = assoc->user;
  view->grp_gpus = tres_limit(assoc->grp_tres_ctld, tres->gpu);
  view->max_gpus_per_job = tres_limit(assoc->max_tres_ctld, tres->gpu);
  view->grp_jobs = count_limit(assoc->grp_jobs);
  view->max_jobs = count_limit(assoc->max_jobs);
  view->grp_cpus = tres_limit(assoc->grp_tres_ctld, tres->cpu);
  view->grp_memory_mb = tres_limit(assoc->grp_tres_ctld, tres->mem);
  view->grp_nodes = tres_limit(assoc->grp_tres_ctld, tres->node);
  view->max_cpus_per_job = tres_limit(assoc->max_tres_ctld, tres->cpu);
  view->max_memory_mb_per_job = tres_limit(assoc->max_tres_ctld, tres->mem);
  view->max_nodes_per_job = tres_limit(assoc->max_tres_ctld, tres->node);
  if (assoc->usage) {
    view->gpus_used = tres_used(assoc->usage->grp_used_tres, tres->gpu);
    view->jobs_used = assoc->usage->used_jobs;
    view->cpus_used = tres_used(assoc->usage->grp_used_tres, tres->cpu);
    view->memory_mb_used = tres_used(assoc->usage->grp_used_tres, tres->mem);
    view->nodes_used = tres_used(assoc->usage->grp_used_tres, tres->node);
  }
}

uint64_t slurm_round_job_default(list_t *defaults, uint16_t type)
{
  uint64_t value = NO_VAL64;
  list_itr_t *entries;
  job_defaults_t *entry;

  if (!defaults)
    return value;
  entries = slurm_list_iterator_create(defaults);
  while ((entry = slurm_list_next(entries))) {
    if (entry->type == type) {
      value = entry->value;
      break;
    }
  }
  slurm_list_iterator_destroy(entries);
  return value;
}

/* The partition a job runs in, or the first it may run in; NULL if not found. */
static const partition_info_t *partition_of(const slurm_job_info_t *job,
                                            const partition_info_msg_t *partitions)
{
  size_t length;

  if (!job->partition || !partitions)
    return NULL;
  length = strcspn(job->partition, ",");
  for (uint32_t i = 0; i < partitions->record_count; i++) {
    const char *name = partitions->partition_array[i].name;

    if (name && strlen(name) == length && !strncmp(name, job->partition, length))
      return &partitions->partition_array[i];
  }
  return NULL;
}

/* DefCpuPerGPU or DefMemPerGPU as select/cons_tres applies it to a job: its partition's,
 * else slurm.conf's; 0 if neither is set. */
static uint64_t gpu_default(const partition_info_t *partition, uint16_t type,
                            uint64_t cluster_value)
{
  uint64_t value = partition ? slurm_round_job_default(partition->job_defaults_list, type) : NO_VAL64;

  if (value == NO_VAL64)
    value = cluster_value;
  return value == NO_VAL64 ? 0 : value;
}

/* A 16-bit count Slurm leaves unset as NO_VAL16 or INFINITE16, as 0. */
static int count_or_zero(uint16_t value)
{
  return value == NO_VAL16 || value == INFINITE16 ? 0 : value;
}

static int job_state_of(uint32_t state)
{
  switch (state & JOB_STATE_BASE) {
  case JOB_PENDING: return POLLUX_JOB_PENDING;
  case JOB_RUNNING: return POLLUX_JOB_RUNNING;
  default: return POLLUX_JOB_OTHER;
  }
}

/* Ended FAILED or NODE_FAIL, and done completing: requeued while still completing, a job
 * could start before Slurm released its GPUs on the dead node, and its steps fail. */
static int job_failed(uint32_t state)
{
  uint32_t base = state & JOB_STATE_BASE;

  return (base == JOB_FAILED || base == JOB_NODE_FAIL) && !(state & JOB_COMPLETING);
}

/* A time limit in minutes, 0 where Slurm has none (NO_VAL, INFINITE). */
static uint32_t minutes_or_zero(uint32_t limit)
{
  return limit == NO_VAL || limit == INFINITE ? 0 : limit;
}

/* The job's memory per node or per CPU (MB, the other 0; both 0 without a request). */
static void memory_request(const slurm_job_info_t *job, pollux_job_view_t *view)
{
  uint64_t request = job->pn_min_memory == NO_VAL64 ? 0 : job->pn_min_memory;

  view->memory_mb_per_node = (request & MEM_PER_CPU) ? 0 : request;
  view->memory_mb_per_cpu = (request & MEM_PER_CPU) ? request & ~MEM_PER_CPU : 0;
}

int slurm_round_job(const slurm_job_info_t *job, const partition_info_msg_t *partitions,
                    const slurm_round_defaults_t *defaults, pollux_job_view_t *view)
{
  const partition_info_t *partition = partition_of(job, partitions);

  memset(view, 0, sizeof(*view));
  view->job_id = job->job_id;
  view->user_id = job->user_id;
  view->state = job_state_of(job->job_state);
  view->held = job->priority == 0;
  view->priority = job->priority;
  view->state_reason = pollux_job_reason(job->state_reason);
  view->submit_time = job->submit_time;
  view->start_time = job->start_time;
  view->eligible_time = job->eligible_time;
  view->time_limit_min = minutes_or_zero(job->time_limit);
  view->features = job->features;
  view->reservation = job->resv_name;
  view->dependency = job->dependency;
  view->association_id = job->assoc_id;
  view->qos = job->qos;
  view->licenses = job->licenses;
  view->end_time = job->end_time;
  view->failed = job_failed(job->job_state);
  view->completing = (job->job_state & JOB_COMPLETING) != 0;
  view->restarts = job->restart_cnt;
  view->comment = job->comment;
  view->batch_host = job->batch_host;
  view->tres_per_node = job->tres_per_node;
  view->tres_per_job = job->tres_per_job;
  view->tres_per_task = job->tres_per_task;
  view->tres_per_socket = job->tres_per_socket;
  view->num_nodes = count32_or_zero(job->num_nodes);
  view->num_tasks = count32_or_zero(job->num_tasks);
  view->sockets_per_node = count_or_zero(job->sockets_per_node);
  view->min_cpus_per_node = count_or_zero(job->pn_min_cpus);
  view->cpus_per_task = count_or_zero(job->cpus_per_task);
  view->ntasks_per_node = count_or_zero(job->ntasks_per_node);
  view->ntasks_per_gpu = count_or_zero(job->ntasks_per_tres);
  view->cpus_per_tres = job->cpus_per_tres;
  view->mem_per_tres = job->mem_per_tres;
  view->memory_set = (job->bitflags & JOB_MEM_SET) != 0;
  view->default_cpus_per_gpu = gpu_default(partition, JOB_DEF_CPU_PER_GPU, defaults->cpus_per_gpu);
  view->default_memory_mb_per_gpu =
    gpu_default(partition, JOB_DEF_MEM_PER_GPU, defaults->memory_per_gpu);
  memory_request(job, view);
  if (names_from_commas(job->partition, &view->partitions) ||
      names_from_hostlist(job->nodes, &view->nodes) ||
      names_from_hostlist(job->req_nodes, &view->requested_nodes) ||
      names_from_hostlist(job->exc_nodes, &view->excluded_nodes)) {
    slurm_round_job_free(view);
    return -1;
  }
  return 0;
}

bool slurm_round_nodes_registered(const node_info_msg_t *nodes)
{
  for (uint32_t i = 0; i < nodes->record_count; i++) {
    const node_info_t *node = &nodes->node_array[i];

    if (node->name && node_usable(node->node_state) && !node->slurmd_start_time)
      return false;
  }
  return true;
}

bool slurm_round_job_needed(const slurm_job_info_t *job)
{
  uint32_t base = job->job_state & JOB_STATE_BASE;

  return base == JOB_PENDING || base == JOB_RUNNING || base == JOB_SUSPENDED ||
         (job->job_state & JOB_COMPLETING) || (job->comment && strstr(job->comment, "adaptive"));
}

/* enum pollux_job_state of Slurm's job_state: running also when suspended. */
static int event_state_of(uint32_t job_state)
{
  uint32_t base = job_state & JOB_STATE_BASE;

  return base == JOB_PENDING ? POLLUX_JOB_PENDING :
         base == JOB_RUNNING || base == JOB_SUSPENDED ? POLLUX_JOB_RUNNING :
         POLLUX_JOB_OTHER;
}

void slurm_round_event_job(const slurm_job_info_t *job, pollux_event_job_t *brief)
{
  brief->job_id = job->job_id;
  brief->state = event_state_of(job->job_state);
  brief->completing = (job->job_state & JOB_COMPLETING) != 0;
  brief->restarts = job->restart_cnt;
  brief->comment = job->comment;
}

void slurm_round_event_state(uint32_t job_id, uint32_t job_state, pollux_event_state_t *brief)
{
  brief->job_id = job_id;
  brief->state = event_state_of(job_state);
  brief->completing = (job_state & JOB_COMPLETING) != 0;
}

void slurm_round_job_free(pollux_job_view_t *view)
{
  free_names(&view->partitions);
  free_names(&view->nodes);
  free_names(&view->requested_nodes);
  free_names(&view->excluded_nodes);
}
