/*
 * Event rounds (pollux_event_delay): new work starts a round before the next regular one.
 * New work is an adaptive job pending (and done completing) that the last round did not see
 * so, or that has been requeued since (a new submission, a job requeued by a user or by
 * Slurm, even one the round had started or was waiting), or a job that held resources at
 * the last round (or was started by it) and has ended since, while an adaptive job is pending
 * or the ended job was adaptive. What the last round did (start, hold, shrink a job, or
 * requeue one to be held) is no new work, so those actions never start a round; a job it
 * requeued to restart on new nodes is, once its last run is done: Slurm then pushes the job's
 * begin time out by its requeue delay (two minutes), and a round lets it begin. Pure logic
 * on brief job records and a monotonic clock in milliseconds: no Slurm call, so
 * event_rounds_test.c runs it on made-up jobs. sched_pollux.c loads the jobs
 * (slurm_round_event_job() converts them) and sleeps.
 */
#ifndef POLLUX_EVENT_ROUNDS_H
#define POLLUX_EVENT_ROUNDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a check needs of one of Slurm's jobs. */
enum event_job_state {
  EVENT_JOB_PENDING,
  EVENT_JOB_ACTIVE, /* running or suspended: holds its nodes */
  EVENT_JOB_DONE    /* anything else */
};
typedef struct {
  uint32_t job_id; /* first, as in event_seen_t */
  int state;       /* enum event_job_state */
  bool adaptive;   /* its comment is "adaptive" or "adaptive:..." */
  bool completing; /* still releasing its nodes */
  uint16_t restarts; /* Slurm's restart count: requeues so far */
} event_job_t;

/* A job a round acted on. */
typedef struct {
  uint32_t job_id;
  bool started;  /* a pending job it placed (and Slurm took the update): it will hold nodes */
  bool requeued; /* a running job it requeued (Slurm took it) ... */
  bool restarts; /* ... and placed anew to restart (Slurm took both); else it is held */
} event_action_t;

/* A job waiting at the last round, with its restart count then. */
typedef struct {
  uint32_t job_id;
  uint16_t restarts;
} event_seen_t;

/* What the last round saw (sorted job ids). Zeroed: no round yet (every pending adaptive job
 * is then new work). */
typedef struct {
  event_seen_t *waiting; /* adaptive jobs pending and done completing, and jobs it acted on
                          * (but those it requeued to restart) */
  size_t waiting_count;
  uint32_t *restarting; /* jobs it requeued to restart */
  size_t restarting_count;
  uint32_t *holding;   /* jobs active or completing that it did not act on, and those it
                        * started */
  size_t holding_count;
} event_memory_t;

/* Whether a job comment makes an adaptive job (as job_submit/pollux and the service read it;
 * a malformed option list still counts: one round at most). */
bool event_adaptive_comment(const char *comment);

/* Remembers the jobs a round loaded and those it acted on; replaces what was remembered.
 * 0, or -1 (ENOMEM; the memory is then emptied). */
int event_memory_record(event_memory_t *memory, const event_job_t *jobs, size_t count,
                        const event_action_t *acted, size_t acted_count);

/* Whether `jobs` (loaded now) show new work since the recorded round; if so, a one-line
 * reason for the log ("JobId=N ...") in `reason`. */
bool event_new_work(const event_memory_t *memory, const event_job_t *jobs, size_t count,
                    char *reason, size_t reason_size);

void event_memory_free(event_memory_t *memory);

/* When the scheduling thread wakes and what it does then. Times are milliseconds of a
 * monotonic clock; delay_s is pollux_event_delay (0: regular rounds only). A regular round is
 * due `interval_s` after the end of the last round of either kind; with a delay, the thread
 * checks for new work every delay_s seconds and runs an event round when it found some, at
 * most one round per delay_s seconds (counted from the end of the last round). */
typedef struct {
  int64_t next_round_ms; /* the next regular round */
  int64_t last_round_ms; /* end of the last round of either kind */
  bool had_round;        /* last_round_ms is set */
  int64_t next_check_ms; /* the next look for new work */
  bool work_found;       /* a check found new work that no round has handled yet */
} event_clock_t;

enum event_due {
  EVENT_DUE_NOTHING,
  EVENT_DUE_CHECK,       /* look for new work, then event_clock_checked() */
  EVENT_DUE_EVENT_ROUND, /* run a round for the new work found, then event_clock_ran() */
  EVENT_DUE_ROUND        /* run a regular round, then event_clock_ran() */
};

void event_clock_start(event_clock_t *clock, int64_t now_ms, int interval_s, int delay_s);
/* The time at which something becomes due. */
int64_t event_clock_wake(const event_clock_t *clock, int delay_s);
/* What is due at `now_ms` (enum event_due); a regular round first. */
int event_clock_due(const event_clock_t *clock, int64_t now_ms, int delay_s);
void event_clock_checked(event_clock_t *clock, int64_t now_ms, int delay_s, bool found);
/* A round of either kind ended at `ended_ms` (the delay and the interval count from there). */
void event_clock_ran(event_clock_t *clock, int64_t ended_ms, int interval_s, int delay_s);

/* pollux_event_delay as the service reads it from pollux.conf (a path; a missing file is
 * fine) and SchedulerParameters (may be NULL); its default, 1, on any problem (the service
 * logs bad keys). Defined with the other settings, in src/settings/settings.cpp. */
int pollux_settings_event_delay(const char *pollux_conf_path, const char *scheduler_parameters);

#endif /* POLLUX_EVENT_ROUNDS_H */
