/* Event rounds: when new work starts a round (see event_rounds.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event_rounds.h"

bool event_adaptive_comment(const char *comment)
{
  static const char keyword[] = "adaptive";

  return comment && !strncmp(comment, keyword, sizeof(keyword) - 1) &&
         (comment[sizeof(keyword) - 1] == '\0' || comment[sizeof(keyword) - 1] == ':');
}

static int compare_ids(const void *a, const void *b)
{
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

  return (x > y) - (x < y);
}

static bool has_id(const uint32_t *ids, size_t count, uint32_t id)
{
  return count && bsearch(&id, ids, count, sizeof(*ids), compare_ids) != NULL;
}

/* event_seen_t and event_job_t start with the job id: compare_ids orders both. */
static const event_seen_t *find_seen(const event_seen_t *seen, size_t count, uint32_t id)
{
  return count ? bsearch(&id, seen, count, sizeof(*seen), compare_ids) : NULL;
}

/* A pending adaptive job that may start now (a requeued one releases its nodes first). */
static bool waits_to_start(const event_job_t *job)
{
  return job->adaptive && job->state == EVENT_JOB_PENDING && !job->completing;
}

void event_memory_free(event_memory_t *memory)
{
  free(memory->waiting);
  free(memory->holding);
  free(memory->restarting);
  memset(memory, 0, sizeof(*memory));
}

/* The restart count Slurm shows for a job after the round's action on it. */
static uint16_t restarts_after(const event_action_t *action, const event_job_t *sorted_jobs,
                               size_t count)
{
  const event_job_t *job =
    count ? bsearch(&action->job_id, sorted_jobs, count, sizeof(*sorted_jobs), compare_ids) : NULL;

  return (uint16_t)((job ? job->restarts : 0) + (action->requeued ? 1 : 0));
}

int event_memory_record(event_memory_t *memory, const event_job_t *jobs, size_t count,
                        const event_action_t *acted, size_t acted_count)
{
  uint32_t *acted_ids = malloc((acted_count + 1) * sizeof(*acted_ids));
  event_job_t *sorted_jobs = malloc((count + 1) * sizeof(*sorted_jobs));
  event_seen_t *waiting = malloc((count + acted_count + 1) * sizeof(*waiting));
  uint32_t *holding = malloc((count + acted_count + 1) * sizeof(*holding));
  uint32_t *restarting = malloc((acted_count + 1) * sizeof(*restarting));
  size_t waiting_count = 0, holding_count = 0, restarting_count = 0;

  if (!acted_ids || !sorted_jobs || !waiting || !holding || !restarting) {
    free(acted_ids);
    free(sorted_jobs);
    free(waiting);
    free(holding);
    free(restarting);
    event_memory_free(memory);
    errno = ENOMEM;
    return -1;
  }
  if (count)
    memcpy(sorted_jobs, jobs, count * sizeof(*jobs));
  qsort(sorted_jobs, count, sizeof(*sorted_jobs), compare_ids);
  for (size_t i = 0; i < acted_count; i++) {
    acted_ids[i] = acted[i].job_id;
    if (acted[i].restarts) {
      restarting[restarting_count++] = acted[i].job_id;
    } else {
      waiting[waiting_count].job_id = acted[i].job_id;
      waiting[waiting_count++].restarts = restarts_after(&acted[i], sorted_jobs, count);
    }
    if (acted[i].started)
      holding[holding_count++] = acted[i].job_id;
  }
  free(sorted_jobs);
  qsort(acted_ids, acted_count, sizeof(*acted_ids), compare_ids);
  for (size_t i = 0; i < count; i++) {
    const event_job_t *job = &jobs[i];

    if (has_id(acted_ids, acted_count, job->job_id))
      continue;
    if (waits_to_start(job)) {
      waiting[waiting_count].job_id = job->job_id;
      waiting[waiting_count++].restarts = job->restarts;
    } else if (job->state == EVENT_JOB_ACTIVE || job->completing) {
      holding[holding_count++] = job->job_id;
    }
  }
  free(acted_ids);
  qsort(waiting, waiting_count, sizeof(*waiting), compare_ids);
  qsort(holding, holding_count, sizeof(*holding), compare_ids);
  qsort(restarting, restarting_count, sizeof(*restarting), compare_ids);
  event_memory_free(memory);
  memory->waiting = waiting;
  memory->waiting_count = waiting_count;
  memory->holding = holding;
  memory->holding_count = holding_count;
  memory->restarting = restarting;
  memory->restarting_count = restarting_count;
  return 0;
}

/* Not waiting at the last round, or requeued since (by its user or by Slurm). */
static bool is_new(const event_memory_t *memory, const event_job_t *job)
{
  const event_seen_t *seen = find_seen(memory->waiting, memory->waiting_count, job->job_id);

  return !seen || job->restarts > seen->restarts;
}

static const char *plural(size_t count)
{
  return count == 1 ? "" : "s";
}

bool event_new_work(const event_memory_t *memory, const event_job_t *jobs, size_t count,
                    char *reason, size_t reason_size)
{
  size_t new_jobs = 0, restarting = 0, pending_adaptive = 0, ended = 0, still_held = 0;
  uint32_t first_new = 0, first_restarting = 0, first_ended = 0;
  bool adaptive_ended = false;

  for (size_t i = 0; i < count; i++) {
    const event_job_t *job = &jobs[i];

    if (waits_to_start(job)) {
      pending_adaptive++;
      if (has_id(memory->restarting, memory->restarting_count, job->job_id)) {
        if (!restarting++)
          first_restarting = job->job_id;
      } else if (is_new(memory, job) && !new_jobs++) {
        first_new = job->job_id;
      }
    }
    if (!has_id(memory->holding, memory->holding_count, job->job_id))
      continue;
    /* Ended and done completing; a job pending again (requeued) is new work above, if
     * adaptive, once it is done completing. */
    if (job->state != EVENT_JOB_DONE || job->completing) {
      still_held++;
    } else {
      if (!ended++)
        first_ended = job->job_id;
      adaptive_ended |= job->adaptive;
    }
  }
  /* Jobs of the last round Slurm no longer has (purged after MinJobAge) ended too. */
  if (still_held + ended < memory->holding_count)
    ended = memory->holding_count - still_held;
  if (new_jobs) {
    snprintf(reason, reason_size,
             "JobId=%u adaptive, pending since the last round (%zu such job%s)",
             first_new, new_jobs, plural(new_jobs));
    return true;
  }
  if (restarting) {
    snprintf(reason, reason_size,
             "JobId=%u requeued to restart, its last run done (%zu such job%s)",
             first_restarting, restarting, plural(restarting));
    return true;
  }
  if (ended && (pending_adaptive || adaptive_ended)) {
    if (first_ended)
      snprintf(reason, reason_size,
               "JobId=%u ended (%zu job%s since the last round), %zu adaptive job%s pending",
               first_ended, ended, plural(ended), pending_adaptive, plural(pending_adaptive));
    else
      snprintf(reason, reason_size, "%zu job%s ended since the last round, %zu adaptive job%s pending",
               ended, plural(ended), pending_adaptive, plural(pending_adaptive));
    return true;
  }
  return false;
}

void event_clock_start(event_clock_t *clock, int64_t now_ms, int interval_s, int delay_s)
{
  memset(clock, 0, sizeof(*clock));
  clock->next_round_ms = now_ms + (int64_t)interval_s * 1000;
  clock->next_check_ms = now_ms + (int64_t)delay_s * 1000;
}

/* When an event round for work found may run: one delay after the last round, or at once
 * (0: the monotonic clock is past it) before the first. */
static int64_t event_round_allowed(const event_clock_t *clock, int delay_s)
{
  return clock->had_round ? clock->last_round_ms + (int64_t)delay_s * 1000 : 0;
}

int64_t event_clock_wake(const event_clock_t *clock, int delay_s)
{
  int64_t event;

  if (delay_s <= 0)
    return clock->next_round_ms;
  event = clock->work_found ? event_round_allowed(clock, delay_s) : clock->next_check_ms;
  return event < clock->next_round_ms ? event : clock->next_round_ms;
}

int event_clock_due(const event_clock_t *clock, int64_t now_ms, int delay_s)
{
  if (now_ms >= clock->next_round_ms)
    return EVENT_DUE_ROUND;
  if (delay_s <= 0)
    return EVENT_DUE_NOTHING;
  if (clock->work_found)
    return now_ms >= event_round_allowed(clock, delay_s) ? EVENT_DUE_EVENT_ROUND : EVENT_DUE_NOTHING;
  return now_ms >= clock->next_check_ms ? EVENT_DUE_CHECK : EVENT_DUE_NOTHING;
}

void event_clock_checked(event_clock_t *clock, int64_t now_ms, int delay_s, bool found)
{
  clock->next_check_ms = now_ms + (int64_t)delay_s * 1000;
  clock->work_found = found;
}

void event_clock_ran(event_clock_t *clock, int64_t ended_ms, int interval_s, int delay_s)
{
  clock->last_round_ms = ended_ms;
  clock->had_round = true;
  clock->next_round_ms = ended_ms + (int64_t)interval_s * 1000;
  clock->next_check_ms = ended_ms + (int64_t)delay_s * 1000;
  clock->work_found = false;
}
