/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sched/pollux: Slurm's scheduler ABI for Pollux for Slurm.
 *
 * This file holds the plugin symbols (init, fini, sched_p_reconfig) and the one scheduling
 * thread started in init() and joined in fini(): its regular and event rounds, and its looks
 * for new work between them. The rest of the shim, which also touches Slurm:
 * round_records.c loads Slurm's records for a round and fills the round's views (with
 * slurm_round.c's conversions), job_actions.c carries the plan out on Slurm's jobs, and
 * hosted_backfill.c hosts sched/backfill for rigid jobs. Everything else (REST endpoint,
 * models, policy, state, when new work starts a round before the next regular one) is the
 * C++ service behind pollux_service.h.
 * init() and sched_p_reconfig() run under slurmctld's locks: they make no RPC.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/spank.h>

#include "service/pollux_service.h"
#include "plugins/slurm_compat.h"
#include "clock_ms.h"
#include "hosted_backfill.h"
#include "job_actions.h"
#include "round_records.h"
#include "slurm_round.h"

const char plugin_name[] = "Pollux goodput-optimising scheduler";
const char plugin_type[] = "sched/pollux";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/* slurmctld's parsed slurm.conf (defined in the libslurmfull it has loaded). */
extern slurm_conf_t slurm_conf;

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
static bool limits_enforced;      /* AccountingStorageEnforce has limits or qos */
static slurm_round_defaults_t round_defaults; /* slurm.conf's memory and per-GPU defaults */
static pollux_service_t *service; /* used by the scheduler thread only after init */
/* Event rounds, the scheduler thread's alone after init: what the last round saw and the
 * clock, and Slurm's time of the last job load (a round's or a look for new work's). */
static pollux_events_t *events;
static round_records_t records;   /* the scheduler thread's: partitions etc. kept between rounds */
static time_t jobs_loaded_at;
static time_t schedule_due;       /* placed jobs begin then: ask the main scheduler (0: none) */

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
  round_defaults.memory_consumable = (slurm_conf.select_type_param & POLLUX_SELECT_MEMORY) != 0;
  limits_enforced = (slurm_conf.accounting_storage_enforce &
                     (POLLUX_ENFORCE_LIMITS | POLLUX_ENFORCE_QOS)) != 0;
  round_defaults.cpus_per_gpu =
      slurm_round_job_default(slurm_conf.job_defaults_list, JOB_DEF_CPU_PER_GPU);
  round_defaults.memory_per_gpu =
      slurm_round_job_default(slurm_conf.job_defaults_list, JOB_DEF_MEM_PER_GPU);
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

/* CPU milliseconds this thread has used. */
static double thread_cpu_ms(void)
{
  struct timespec used;

  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &used);
  return (double)used.tv_sec * 1e3 + (double)used.tv_nsec / 1e6;
}

/* Where a round's time went (ms), for its line in the log. */
typedef struct {
  double started, cpu_started, load, build, plan, act, finish;
} round_clock_t;

/* One line per planned round: its time, each phase's (load: Slurm's records; build: the
 * round's views and the service's inputs; solve: the policy; act: the plan carried out
 * through Slurm; finish: outcomes recorded, the round published, state saved, save its part),
 * its size, and the CPU time this thread used (the rest of the round waited on slurmctld). */
static void log_round(const round_clock_t *clock, const round_records_t *records,
                      size_t actions)
{
  pollux_round_costs_t costs;

  pollux_service_round_costs(service, &costs);
  slurm_info("sched/pollux: round %.1f ms: load %.1f build %.1f solve %.1f act %.1f "
             "finish %.1f (save %.1f) ms; jobs %u nodes %u actions %zu state %" PRIu64
             " bytes; cpu %.1f ms",
             clock->load + clock->build + clock->plan + clock->act + clock->finish, clock->load,
             clock->build + clock->plan - costs.solve_ms, costs.solve_ms, clock->act,
             clock->finish, costs.save_ms, records->jobs->record_count,
             records->nodes->record_count, actions, costs.state_bytes,
             thread_cpu_ms() - clock->cpu_started);
}

/* Plans a round on Slurm's records and carries the plan out. */
static void plan_and_act(const round_records_t *records, round_clock_t *clock)
{
  round_views_t views;
  pollux_plan_t *plan = NULL;
  double mark = clock_ms();
  int described = round_views_fill(&views, records, &round_defaults);

  clock->build = clock_ms() - mark;
  mark = clock_ms();
  if (described != 0) {
    slurm_error("sched/pollux: cannot describe the round: %s", strerror(errno));
    remember_round(records->jobs, NULL);
  } else if (pollux_service_plan(service, &views.round, &plan) == 0) {
    time_t begin;
    size_t actions = plan->action_count; /* for the round's line, after the plan is freed */

    clock->plan = clock_ms() - mark;
    mark = clock_ms();
    begin = job_actions_carry_out(plan, records->jobs, slurm_round_nodes_registered(records->nodes),
                                  pollux_service_placement_ms(service));
    if (begin)
      schedule_due = begin;
    clock->act = clock_ms() - mark;
    mark = clock_ms();
    remember_round(records->jobs, plan);
    pollux_plan_finish(service, plan);
    clock->finish = clock_ms() - mark;
    log_round(clock, records, actions);
  } else {
    if (errno != EIO) /* EIO: the service has logged why */
      slurm_error("sched/pollux: round not planned: %s", strerror(errno));
    remember_round(records->jobs, NULL);
  }
  round_views_free(&views);
}

/* Loads Slurm's records, plans a round on them and carries the plan out. */
static void run_round(void)
{
  round_clock_t clock = { clock_ms(), thread_cpu_ms(), 0, 0, 0, 0, 0 };

  if (round_records_load(&records, limits_enforced) == 0) {
    clock.load = clock_ms() - clock.started;
    plan_and_act(&records, &clock);
  }
  round_records_end_round(&records);
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
 * the nodes cannot be loaded). Once they have, a look for new work asks no more: a round
 * checks its own load of the nodes before it acts. */
static bool nodes_registered(void)
{
  static bool registered_once;
  node_info_msg_t *nodes = NULL;

  if (registered_once)
    return true;
  if (slurm_load_node((time_t)0, &nodes, SHOW_ALL) != SLURM_SUCCESS)
    return false;
  registered_once = slurm_round_nodes_registered(nodes);
  slurm_free_node_info_msg(nodes);
  return registered_once;
}

#if POLLUX_HAVE_JOB_STATES
/* A look by states loads at most this many records one by one (jobs submitted or requeued
 * since the last load); when more are needed, it loads every record. */
#define MOST_RECORDS_ONE_BY_ONE 16

/* Loads, one job at a time, the records the last look by states needed, for the events
 * handle: 0, or -1 when they are too many or one cannot be loaded. */
static int learn_needed_records(void)
{
  uint32_t ids[MOST_RECORDS_ONE_BY_ONE];
  size_t needed = pollux_events_records_needed(events, ids, MOST_RECORDS_ONE_BY_ONE);

  if (needed > MOST_RECORDS_ONE_BY_ONE)
    return -1;
  for (size_t i = 0; i < needed; i++) {
    job_info_msg_t *job = NULL;
    pollux_event_job_t *briefs;
    int learned = -1;

    if (pollux_load_job(&job, ids[i]) != SLURM_SUCCESS) {
      slurm_debug("sched/pollux: cannot load JobId=%u: %s", ids[i], slurm_strerror(errno));
      return -1;
    }
    briefs = event_jobs(job);
    if (briefs)
      learned = pollux_events_learn(events, briefs, job->record_count);
    free(briefs);
    round_records_free_jobs(job);
    if (learned != 0)
      return -1;
  }
  return 0;
}
#endif

/* Looks for new work by every job's state alone (a small reply where every record costs
 * slurmctld and this thread most of their time at a busy site), with the records of the few
 * jobs the states cannot tell loaded one by one: 1 new work, 0 none, -1 when the states
 * cannot tell or Slurm did not answer (look at every record). */
static int look_by_states(char *reason, size_t reason_size)
{
#if POLLUX_HAVE_JOB_STATES
  job_state_response_msg_t *states = NULL;
  pollux_event_state_t *briefs;
  int found = -1;

  if (slurm_load_job_state(0, NULL, &states) != SLURM_SUCCESS) {
    slurm_debug("sched/pollux: cannot load job states: %s", slurm_strerror(errno));
    return -1;
  }
  briefs = malloc((states->jobs_count + 1) * sizeof(*briefs));
  if (briefs) {
    for (uint32_t i = 0; i < states->jobs_count; i++)
      slurm_round_event_state(states->jobs[i].job_id, states->jobs[i].state, &briefs[i]);
    found = pollux_events_new_work_from_states(events, briefs, states->jobs_count, reason,
                                               reason_size);
    if (found == 2 && learn_needed_records() == 0)
      found = pollux_events_new_work_from_states(events, briefs, states->jobs_count, reason,
                                                 reason_size);
    if (found == 2)
      found = -1;
  }
  free(briefs);
  slurm_free_job_state_response_msg(states);
  return found;
#else
  (void)reason;
  (void)reason_size;
  return -1;
#endif
}

/* Looks for new work by every job's record. Slurm sends the records only if any changed since
 * the last load (else SLURM_NO_CHANGE_IN_DATA, a cheap answer). */
static bool look_by_records(char *reason, size_t reason_size)
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
  round_records_free_jobs(jobs);
  return found;
}

/* Whether Slurm's jobs show new work since the last round, with the reason in `reason`: by
 * their states where those tell, else by their records. New work found while nodes
 * re-register after a restart waits for them (the next look sees it again). */
static bool look_for_new_work(char *reason, size_t reason_size)
{
  int found = look_by_states(reason, reason_size);

  if (found < 0)
    return look_by_records(reason, reason_size);
  if (found && !nodes_registered()) {
    slurm_debug("sched/pollux: new work (%s) waits until the nodes have registered", reason);
    return false;
  }
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
  bool listening;
  char reason[256] = "";

  (void)unused;
  /* Named, as slurmctld names its own threads: top -H and /proc/PID/task show its CPU. */
  prctl(PR_SET_NAME, "pollux", 0, 0, 0);
  listening = service && pollux_service_start_rest(service) == 0;

  for (;;) {
    int64_t wake_at = pollux_events_wake(events, service);
    int wake, due = POLLUX_DUE_ROUND;
    int64_t now, round_started;

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
    /* The round's own time, without the main scheduler's pass or a reconfigure before it. */
    round_started = monotonic_ms();
    if (service) {
      if (due == POLLUX_DUE_EVENT_ROUND)
        slurm_info("sched/pollux: event round: %s", reason);
      run_round();
    }
    /* From the round's end, as before event rounds: a round longer than the interval is
     * followed by a pause, not by the next round at once. */
    pollux_events_ran(events, service, round_started, monotonic_ms());
  }
  round_records_free(&records);
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
  if ((!service || pollux_service_hosts_backfill(service)) &&
      hosted_backfill_load(slurm_conf.plugindir) != SLURM_SUCCESS)
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
  hosted_backfill_unload();
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
  hosted_backfill_reconfig();
  return SLURM_SUCCESS;
}
