/*
 * sched/pollux: Slurm's scheduler ABI for Pollux for Slurm.
 *
 * This shim owns what touches Slurm: the plugin symbols, one scheduling thread started in
 * init() and joined in fini(), the libslurm calls that load jobs and nodes and act on jobs,
 * and the hosted sched/backfill for rigid jobs. slurm_round.c turns Slurm's records into the
 * round the service plans; everything else (REST endpoint, models, policy, state, when new
 * work starts a round before the next regular one) is the C++ service behind
 * pollux_service.h.
 * init() and sched_p_reconfig() run under slurmctld's locks: they make no RPC.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/slurmdb.h>
#include <slurm/spank.h>

#include "service/pollux_service.h"
#include "plugins/slurm_compat.h"
#include "slurm_round.h"

const char plugin_name[] = "Pollux goodput-optimising scheduler";
const char plugin_type[] = "sched/pollux";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/* slurmctld's parsed slurm.conf (defined in the libslurmfull it has loaded). */
extern slurm_conf_t slurm_conf;
/* slurmctld's own: asks its main scheduler to run now (it only queues the request and wakes
 * the scheduler's thread; the same `void schedule(bool full_queue)` in 22.05 through 26.05).
 * A job update only asks for it at the next background pass, up to batch_sched_delay (3 s)
 * after the last one: a job the plugin placed would wait that long. */
extern void schedule(bool full_queue);

typedef struct {
  void *handle;
  int (*init)(void);
  void (*fini)(void);
  int (*reconfig)(void);
} hosted_plugin_t;

static pthread_t scheduler_thread;
static bool thread_running;
static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake_up = PTHREAD_COND_INITIALIZER;
static bool stop_requested;
static bool reconfig_requested;
static char *sched_params_copy;   /* SchedulerParameters as of init or the last reconfig */
static char *conf_path_copy;      /* pollux.conf beside slurm.conf */
static char *state_dir_copy;
static char *auth_info_copy;      /* AuthInfo, or NULL */
static time_t loaded_at;          /* init(): slurmctld started; 0 after a reconfigure's exec */
static uint32_t slurm_user;
static int private_jobs;          /* PrivateData=jobs */
static bool memory_consumable;    /* SelectTypeParameters CR_*_Memory */
static bool limits_enforced;      /* AccountingStorageEnforce has limits or qos */
static uint64_t cluster_cpus_per_gpu;   /* slurm.conf DefCpuPerGPU, NO_VAL64 if unset */
static uint64_t cluster_memory_per_gpu; /* slurm.conf DefMemPerGPU (MB), NO_VAL64 if unset */
static pollux_service_t *service; /* used by the scheduler thread only after init */
/* Event rounds, the scheduler thread's alone after init: what the last round saw and the
 * clock, and Slurm's time of the last job load (a round's or a look for new work's). */
static pollux_events_t *events;
static time_t jobs_loaded_at;
static time_t schedule_due;       /* placed jobs begin then: ask the main scheduler (0: none) */
static hosted_plugin_t backfill;

static void log_line(int level, const char *message)
{
  if (level == POLLUX_LOG_ERROR)
    slurm_error("sched/pollux: %s", message);
  else if (level == POLLUX_LOG_INFO)
    slurm_info("sched/pollux: %s", message);
  else
    slurm_debug("sched/pollux: %s", message);
}

static char *copy_or_empty(const char *text)
{
  return strdup(text ? text : "");
}

/* Copies what the service needs from slurm.conf; runs under slurmctld's config lock. */
static void copy_settings(void)
{
  const char *conf = slurm_conf.slurm_conf ? slurm_conf.slurm_conf : "/etc/slurm/slurm.conf";
  const char *slash = strrchr(conf, '/');
  size_t dir_length = slash ? (size_t)(slash - conf) : 1;

  free(sched_params_copy);
  free(conf_path_copy);
  free(state_dir_copy);
  sched_params_copy = copy_or_empty(slurm_conf.sched_params);
  state_dir_copy = copy_or_empty(slurm_conf.state_save_location);
  conf_path_copy = malloc(dir_length + sizeof("/pollux.conf"));
  if (conf_path_copy)
    snprintf(conf_path_copy, dir_length + sizeof("/pollux.conf"), "%.*s/pollux.conf",
             (int)dir_length, slash ? conf : ".");
  slurm_user = slurm_conf.slurm_user_id;
  private_jobs = (slurm_conf.private_data & PRIVATE_DATA_JOBS) != 0;
  memory_consumable = (slurm_conf.select_type_param & POLLUX_SELECT_MEMORY) != 0;
  limits_enforced = (slurm_conf.accounting_storage_enforce &
                     (POLLUX_ENFORCE_LIMITS | POLLUX_ENFORCE_QOS)) != 0;
  cluster_cpus_per_gpu = slurm_round_job_default(slurm_conf.job_defaults_list, JOB_DEF_CPU_PER_GPU);
  cluster_memory_per_gpu = slurm_round_job_default(slurm_conf.job_defaults_list, JOB_DEF_MEM_PER_GPU);
  free(auth_info_copy);
  auth_info_copy = slurm_conf.authinfo ? strdup(slurm_conf.authinfo) : NULL;
}

/* The lock keeps sched_p_reconfig from replacing the settings while the service copies them. */
static pollux_service_t *create_service(void)
{
  pollux_service_t *created;

  pthread_mutex_lock(&state_lock);
  pollux_settings_t settings = {
    .scheduler_parameters = sched_params_copy,
    .pollux_conf_path = conf_path_copy,
    .state_dir = state_dir_copy,
    .auth_info = auth_info_copy,
    .slurm_user_id = slurm_user,
    .private_jobs = private_jobs,
    .slurmctld_started = loaded_at,
    .log = log_line,
  };
  created = pollux_service_create(&settings);
  pthread_mutex_unlock(&state_lock);
  return created;
}

/* Loads sched_backfill.so from the first PluginDir entry that has it. */
static int load_backfill(void)
{
  char *dirs = copy_or_empty(slurm_conf.plugindir);
  char *save = NULL;
  char path[4096];

  for (char *dir = strtok_r(dirs, ":", &save); dir && !backfill.handle;
       dir = strtok_r(NULL, ":", &save)) {
    snprintf(path, sizeof(path), "%s/sched_backfill.so", dir);
    backfill.handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  }
  free(dirs);
  if (!backfill.handle) {
    slurm_error("sched/pollux: cannot load sched_backfill.so from PluginDir: rigid jobs get no backfill");
    return -1;
  }
  backfill.init = (int (*)(void))dlsym(backfill.handle, "init");
  backfill.fini = (void (*)(void))dlsym(backfill.handle, "fini");
  backfill.reconfig = (int (*)(void))dlsym(backfill.handle, "sched_p_reconfig");
  if (!backfill.init || !backfill.fini || !backfill.reconfig) {
    slurm_error("sched/pollux: %s lacks the sched plugin symbols", path);
    dlclose(backfill.handle);
    memset(&backfill, 0, sizeof(backfill));
    return -1;
  }
  slurm_info("sched/pollux: hosting Slurm's backfill from %s", path);
  return backfill.init();
}

static void unload_backfill(void)
{
  if (!backfill.handle)
    return;
  backfill.fini();
  dlclose(backfill.handle);
  memset(&backfill, 0, sizeof(backfill));
}

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
 * round, see pollux_service.h) lets it begin. */
static int requeue_job(const pollux_action_t *action, time_t begin)
{
  if (pollux_requeue(action->job_id) != SLURM_SUCCESS)
    return errno;
  return action->num_nodes ? place_job(action, begin) :
                             hold_job(action->job_id, action->time_limit_min);
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
  default: return SLURM_ERROR;
  }
}

/* Slurm's xfree (exported by libslurm, not declared in slurm.h). */
extern void slurm_xfree(void **pointer);

/* Slurm before 23.02.5 (SchedMD bug 17246) leaves these job strings allocated in
 * slurm_free_job_info_msg(); the plugin loads every job each round and writes AdminComment,
 * so it would leak them every round (found by tests/valgrind_cluster.sh). Freeing them
 * first is harmless where Slurm frees them itself: xfree leaves NULL behind. */
static void free_jobs(job_info_msg_t *jobs)
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

static void free_views(round_views_t *views)
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

/* Slurm's records of one round. */
typedef struct {
  node_info_msg_t *nodes;
  partition_info_msg_t *partitions;
  job_info_msg_t *jobs;
  reserve_info_msg_t *reservations;
  license_info_msg_t *licenses;
  assoc_mgr_info_msg_t *limits; /* NULL where Slurm enforces none */
} round_records_t;

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
      slurm_round_license(&licenses->lic_array[i],
                          &views->licenses[views->round.license_count++]);
  }
  return 0;
}

/* Fills `views` from Slurm's records (which they point into); 0, or -1 with errno. */
static int fill_views(round_views_t *views, const node_info_msg_t *nodes,
                      const partition_info_msg_t *partitions, const job_info_msg_t *jobs,
                      const reserve_info_msg_t *reservations)
{
  const slurm_round_defaults_t defaults = {
    .memory_consumable = memory_consumable,
    .cpus_per_gpu = cluster_cpus_per_gpu,
    .memory_per_gpu = cluster_memory_per_gpu,
  };
  pollux_round_t *round = &views->round;

  memset(views, 0, sizeof(*views));
  round->now = time(NULL);
  views->nodes = calloc(nodes->record_count + 1, sizeof(*views->nodes));
  views->partitions = calloc(partitions->record_count + 1, sizeof(*views->partitions));
  views->jobs = calloc(jobs->record_count + 1, sizeof(*views->jobs));
  views->reservations = calloc(reservations->record_count + 1, sizeof(*views->reservations));
  if (!views->nodes || !views->partitions || !views->jobs || !views->reservations) {
    errno = ENOMEM;
    return -1;
  }
  round->nodes = views->nodes;
  round->partitions = views->partitions;
  round->jobs = views->jobs;
  round->reservations = views->reservations;
  for (uint32_t i = 0; i < nodes->record_count; i++) {
    const node_info_t *node = &nodes->node_array[i];

    if (node->name)
      slurm_round_node(node, pollux_node_alloc_cpus(node),
                       memory_consumable ? pollux_node_alloc_memory(node) : 0,
                       memory_consumable, &views->nodes[round->node_count++]);
  }
  for (uint32_t i = 0; i < partitions->record_count; i++) {
    if (!partitions->partition_array[i].name)
      continue;
    if (slurm_round_partition(&partitions->partition_array[i],
                              &views->partitions[round->partition_count]))
      return -1;
    round->partition_count++;
  }
  for (uint32_t i = 0; i < jobs->record_count; i++) {
    if (slurm_round_job(&jobs->job_array[i], partitions, &defaults,
                        &views->jobs[round->job_count]))
      return -1;
    round->job_count++;
  }
  for (uint32_t i = 0; i < reservations->record_count; i++) {
    if (!reservations->reservation_array[i].name)
      continue;
    if (slurm_round_reservation(&reservations->reservation_array[i],
                                &views->reservations[round->reservation_count]))
      return -1;
    round->reservation_count++;
  }
  return 0;
}

/* Adds slurmctld's QOS and associations, with their limits and usage, to `views`; 0, or -1
 * with errno. */
static int fill_limit_views(round_views_t *views, const assoc_mgr_info_msg_t *limits)
{
  int gpu_tres = slurm_round_gpu_tres(limits->tres_names, limits->tres_cnt);
  size_t qos_count = limits->qos_list ? slurm_list_count(limits->qos_list) : 0;
  size_t assoc_count = limits->assoc_list ? slurm_list_count(limits->assoc_list) : 0;
  list_itr_t *entries;
  void *record;

  views->qos = calloc(qos_count + 1, sizeof(*views->qos));
  views->associations = calloc(assoc_count + 1, sizeof(*views->associations));
  if (!views->qos || !views->associations) {
    errno = ENOMEM;
    return -1;
  }
  views->round.qos = views->qos;
  views->round.associations = views->associations;
  if (qos_count) {
    int rc = 0;

    entries = slurm_list_iterator_create(limits->qos_list);
    while (rc == 0 && (record = slurm_list_next(entries)) &&
           views->round.qos_count < qos_count) {
      rc = slurm_round_qos(record, gpu_tres, &views->qos[views->round.qos_count]);
      if (rc == 0)
        views->round.qos_count++;
    }
    slurm_list_iterator_destroy(entries);
    if (rc)
      return -1;
  }
  if (assoc_count) {
    entries = slurm_list_iterator_create(limits->assoc_list);
    while ((record = slurm_list_next(entries)) && views->round.association_count < assoc_count)
      slurm_round_association(record, gpu_tres,
                              &views->associations[views->round.association_count++]);
    slurm_list_iterator_destroy(entries);
  }
  return 0;
}

/* Loads slurmctld's QOS and association limits with their usage (the RPC behind `scontrol
 * show assoc_mgr`) where Slurm enforces them; NULL where it does not, or on an error (logged:
 * the round then goes on without them, and Slurm's refusals still protect the limits). */
static assoc_mgr_info_msg_t *load_limits(void)
{
  assoc_mgr_info_request_msg_t request;
  assoc_mgr_info_msg_t *limits = NULL;

  if (!limits_enforced)
    return NULL;
  memset(&request, 0, sizeof(request));
  request.flags = ASSOC_MGR_INFO_FLAG_ASSOC | ASSOC_MGR_INFO_FLAG_QOS;
  if (slurm_load_assoc_mgr_info(&request, &limits) != SLURM_SUCCESS) {
    slurm_error("sched/pollux: cannot load QOS and association limits: %s",
                slurm_strerror(errno));
    return NULL;
  }
  return limits;
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

/* Carries out the plan's actions in order, noting Slurm's answer to each. Jobs it placed are
 * started by Slurm's main scheduler, which is asked to run now, and again when placed jobs
 * may begin, if `start_now` (not while nodes re-register after a restart: Slurm's own pace
 * then). */
static void carry_out(pollux_plan_t *plan, const job_info_msg_t *jobs, bool start_now)
{
  time_t now = time(NULL), latest_begin = now;
  bool placed = false;

  for (size_t i = 0; i < plan->action_count; i++) {
    pollux_action_t *action = &plan->actions[i];
    bool places = action->num_nodes &&
                  (action->kind == POLLUX_ACTION_START || action->kind == POLLUX_ACTION_REQUEUE);
    time_t begin = begin_time(action, jobs, now);

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
  if (start_now && latest_begin > now)
    schedule_due = latest_begin;
}

/* What a look for new work needs of Slurm's jobs (pointing into them), or NULL (ENOMEM). */
static pollux_event_job_t *event_jobs(const job_info_msg_t *jobs)
{
  pollux_event_job_t *briefs = malloc((jobs->record_count + 1) * sizeof(*briefs));

  if (briefs) {
    for (uint32_t i = 0; i < jobs->record_count; i++)
      slurm_round_event_job(&jobs->job_array[i], &briefs[i]);
  }
  return briefs;
}

/* Remembers the round's jobs and what its plan (carried out, or NULL) did: later looks for
 * new work leave them out. */
static void remember_round(const job_info_msg_t *jobs, const pollux_plan_t *plan)
{
  pollux_event_job_t *briefs = event_jobs(jobs);

  jobs_loaded_at = jobs->last_update;
  if (!briefs || pollux_events_record_round(events, briefs, jobs->record_count, plan) != 0) {
    /* Remembers no job: every pending adaptive job then looks new, one more round at most. */
    pollux_events_record_round(events, NULL, 0, NULL);
    slurm_error("sched/pollux: cannot remember the round's jobs: out of memory");
  }
  free(briefs);
}

/* Plans a round on Slurm's records and carries the plan out. */
static void plan_and_act(const round_records_t *records)
{
  round_views_t views;
  pollux_plan_t *plan = NULL;

  if (fill_views(&views, records->nodes, records->partitions, records->jobs,
                 records->reservations) != 0 ||
      fill_license_views(&views, records->licenses) != 0 ||
      (records->limits && fill_limit_views(&views, records->limits) != 0)) {
    slurm_error("sched/pollux: cannot describe the round: %s", strerror(errno));
    remember_round(records->jobs, NULL);
  } else if (pollux_service_plan(service, &views.round, &plan) == 0) {
    carry_out(plan, records->jobs, slurm_round_nodes_registered(records->nodes));
    remember_round(records->jobs, plan);
    pollux_plan_finish(service, plan);
  } else {
    if (errno != EIO) /* EIO: the service has logged why */
      slurm_error("sched/pollux: round not planned: %s", strerror(errno));
    remember_round(records->jobs, NULL);
  }
  free_views(&views);
}

static void free_records(round_records_t *records)
{
  if (records->jobs)
    free_jobs(records->jobs);
  if (records->nodes)
    slurm_free_node_info_msg(records->nodes);
  if (records->partitions)
    slurm_free_partition_info_msg(records->partitions);
  if (records->reservations)
    slurm_free_reservation_info_msg(records->reservations);
  if (records->licenses)
    slurm_free_license_info_msg(records->licenses);
  if (records->limits)
    slurm_free_assoc_mgr_info_msg(records->limits);
}

static void run_round(void)
{
  round_records_t records;

  memset(&records, 0, sizeof(records));
  /* Nodes first: a job that starts in between is then running but not yet counted in its
   * node's GPUs in use, which the service allows for (the other order would not). SHOW_DETAIL
   * gives each node's GPUs in use (gres_used). */
  if (slurm_load_node((time_t)0, &records.nodes, SHOW_ALL | SHOW_DETAIL) != SLURM_SUCCESS ||
      slurm_load_jobs((time_t)0, &records.jobs, SHOW_ALL) != SLURM_SUCCESS ||
      slurm_load_partitions((time_t)0, &records.partitions, SHOW_ALL) != SLURM_SUCCESS ||
      slurm_load_reservations((time_t)0, &records.reservations) != SLURM_SUCCESS ||
      slurm_load_licenses((time_t)0, &records.licenses, SHOW_ALL) != SLURM_SUCCESS)
    slurm_error("sched/pollux: cannot load jobs, nodes, partitions, reservations and licenses: %s",
                slurm_strerror(errno));
  else {
    records.limits = load_limits();
    plan_and_act(&records);
  }
  free_records(&records);
}

/* Recreates the service with the settings copied by the last reconfig. */
static void apply_reconfig(void)
{
  pollux_service_destroy(service);
  service = create_service();
  if (service && pollux_service_start_rest(service) == 0)
    slurm_info("sched/pollux: configuration reloaded");
}

/* Whether every node that looks up has registered with this slurmctld (false also when
 * the nodes cannot be loaded). */
static bool nodes_registered(void)
{
  node_info_msg_t *nodes = NULL;
  bool registered;

  if (slurm_load_node((time_t)0, &nodes, SHOW_ALL) != SLURM_SUCCESS)
    return false;
  registered = slurm_round_nodes_registered(nodes);
  slurm_free_node_info_msg(nodes);
  return registered;
}

/* Whether Slurm's jobs show new work since the last round, with the reason in `reason`. Slurm
 * sends its jobs only if any changed since the last load (else SLURM_NO_CHANGE_IN_DATA, a
 * cheap answer), so an idle or quiet cluster costs one small RPC per look. New work found
 * while nodes re-register after a restart waits for them (the next look sees it again). */
static bool look_for_new_work(char *reason, size_t reason_size)
{
  job_info_msg_t *jobs = NULL;
  pollux_event_job_t *briefs;
  bool found = false;

  if (slurm_load_jobs(jobs_loaded_at, &jobs, SHOW_ALL) != SLURM_SUCCESS) {
    if (errno != SLURM_NO_CHANGE_IN_DATA)
      slurm_debug("sched/pollux: cannot look for new work: %s", slurm_strerror(errno));
    return false;
  }
  briefs = event_jobs(jobs);
  if (briefs)
    found = pollux_events_new_work(events, briefs, jobs->record_count, reason, reason_size) == 1;
  if (found && !nodes_registered()) {
    slurm_debug("sched/pollux: new work (%s) waits until the nodes have registered", reason);
    found = false;
  } else {
    jobs_loaded_at = jobs->last_update;
  }
  free(briefs);
  free_jobs(jobs);
  return found;
}

static int64_t monotonic_ms(void)
{
  struct timespec now;

  clock_gettime(CLOCK_MONOTONIC, &now);
  return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* The monotonic time (ms) at which the real-time clock reaches `wall` (seconds). */
static int64_t monotonic_at(time_t wall)
{
  struct timespec now;

  clock_gettime(CLOCK_REALTIME, &now);
  return monotonic_ms() + (int64_t)(wall - now.tv_sec) * 1000 - now.tv_nsec / 1000000;
}

/* Asks Slurm's main scheduler to run once the jobs placed to begin later may begin (a job
 * update alone would wait for its next pass). */
static void start_jobs_due(void)
{
  if (schedule_due && time(NULL) >= schedule_due) {
    schedule_due = 0;
    schedule(false);
  }
}

enum wake_reason { WAKE_TIME, WAKE_RECONFIG, WAKE_STOP };

/* Sleeps until `until_ms` (monotonic), a reconfig or stop. The condition variable waits on
 * the real-time clock, so the wait is recomputed from the monotonic one after each wake. */
static int sleep_until(int64_t until_ms)
{
  int reason = WAKE_TIME;

  pthread_mutex_lock(&state_lock);
  while (!stop_requested && !reconfig_requested) {
    int64_t left_ms = until_ms - monotonic_ms();
    struct timespec until;

    if (left_ms <= 0)
      break;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += left_ms / 1000;
    until.tv_nsec += (left_ms % 1000) * 1000000;
    if (until.tv_nsec >= 1000000000) {
      until.tv_sec++;
      until.tv_nsec -= 1000000000;
    }
    pthread_cond_timedwait(&wake_up, &state_lock, &until);
  }
  if (stop_requested)
    reason = WAKE_STOP;
  else if (reconfig_requested)
    reason = WAKE_RECONFIG;
  reconfig_requested = false;
  pthread_mutex_unlock(&state_lock);
  return reason;
}

/* Regular rounds every pollux_interval seconds (and at once after a reconfigure); between
 * them, with pollux_event_delay, a look for new work every delay and a round when there is
 * some, at most one per delay. */
static void *scheduler_main(void *unused)
{
  (void)unused;
  bool listening = service && pollux_service_start_rest(service) == 0;
  char reason[256] = "";

  for (;;) {
    int64_t wake_at = pollux_events_wake(events, service);
    int wake, due = POLLUX_DUE_ROUND;
    int64_t now;

    if (schedule_due && monotonic_at(schedule_due) + 5 < wake_at)
      wake_at = monotonic_at(schedule_due) + 5; /* 5 ms: past the second, not just before */
    wake = sleep_until(wake_at);
    now = monotonic_ms();
    if (wake == WAKE_STOP)
      break;
    start_jobs_due();
    if (wake == WAKE_RECONFIG)
      apply_reconfig();
    else
      due = pollux_events_due(events, service, now);
    if (due == POLLUX_DUE_NOTHING)
      continue;
    if (due == POLLUX_DUE_CHECK) {
      pollux_events_checked(events, service, now,
                            service && look_for_new_work(reason, sizeof(reason)));
      continue;
    }
    if (!service)
      service = create_service();
    if (service && !listening)
      listening = pollux_service_start_rest(service) == 0;
    if (service) {
      if (due == POLLUX_DUE_EVENT_ROUND)
        slurm_info("sched/pollux: event round: %s", reason);
      run_round();
    }
    /* From the round's end, as before event rounds: a round longer than the interval is
     * followed by a pause, not by the next round at once. */
    pollux_events_ran(events, service, monotonic_ms());
  }
  jobs_loaded_at = 0;
  schedule_due = 0;
  return NULL;
}

extern int init(void)
{
  /* A slurmctld that exec'd itself for `scontrol reconfigure` (23.11 on; it sets
   * SLURMCTLD_RECONF) saved all its state first: its jobs need no time to settle. */
  loaded_at = getenv("SLURMCTLD_RECONF") ? 0 : time(NULL);
  copy_settings();
  service = create_service();
  if (!service)
    slurm_error("sched/pollux: service unavailable; adaptive jobs stay pending until it starts");
  if ((!service || pollux_service_hosts_backfill(service)) && load_backfill() != SLURM_SUCCESS)
    slurm_error("sched/pollux: hosted backfill did not start");
  events = pollux_events_create(service, monotonic_ms());
  if (!events) {
    slurm_error("sched/pollux: cannot start the scheduling thread: out of memory");
    return SLURM_ERROR;
  }
  stop_requested = false;
  if (pthread_create(&scheduler_thread, NULL, scheduler_main, NULL) != 0) {
    slurm_error("sched/pollux: cannot start the scheduling thread");
    return SLURM_ERROR;
  }
  thread_running = true;
  slurm_info("sched/pollux: %s loaded", plugin_name);
  return SLURM_SUCCESS;
}

extern void fini(void)
{
  pthread_mutex_lock(&state_lock);
  stop_requested = true;
  pthread_cond_broadcast(&wake_up);
  pthread_mutex_unlock(&state_lock);
  if (thread_running)
    pthread_join(scheduler_thread, NULL);
  thread_running = false;
  pollux_events_destroy(events);
  events = NULL;
  unload_backfill();
  pollux_service_destroy(service);
  service = NULL;
  free(sched_params_copy);
  free(conf_path_copy);
  free(state_dir_copy);
  free(auth_info_copy);
  sched_params_copy = conf_path_copy = state_dir_copy = auth_info_copy = NULL;
  slurm_info("sched/pollux: stopped");
}

extern int sched_p_reconfig(void)
{
  pthread_mutex_lock(&state_lock);
  copy_settings();
  reconfig_requested = true;
  pthread_cond_broadcast(&wake_up);
  pthread_mutex_unlock(&state_lock);
  if (backfill.handle)
    backfill.reconfig();
  return SLURM_SUCCESS;
}
