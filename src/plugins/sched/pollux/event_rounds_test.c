/* When new work starts a round (event_rounds.c), on made-up jobs and times. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "event_rounds.h"

#define COUNT(array) (sizeof(array) / sizeof((array)[0]))

enum { PENDING = EVENT_JOB_PENDING, ACTIVE = EVENT_JOB_ACTIVE, DONE = EVENT_JOB_DONE };

static void test_adaptive_comment(void)
{
  CHECK(event_adaptive_comment("adaptive"));
  CHECK(event_adaptive_comment("adaptive:max_gpus=8"));
  CHECK(event_adaptive_comment("adaptive:")); /* malformed, but the service's to judge */
  CHECK(!event_adaptive_comment("adaptively tuned"));
  CHECK(!event_adaptive_comment("Adaptive"));
  CHECK(!event_adaptive_comment("adapt"));
  CHECK(!event_adaptive_comment(""));
  CHECK(!event_adaptive_comment(NULL));
}

static void test_no_round_yet(void)
{
  event_memory_t memory = {0};
  char reason[200] = "";
  const event_job_t idle[] = {{1, ACTIVE, true, false, 0}, {2, PENDING, false, false, 0}};
  const event_job_t submitted[] = {{1, ACTIVE, true, false, 0}, {3, PENDING, true, false, 0}};

  CHECK(!event_new_work(&memory, NULL, 0, reason, sizeof(reason)));
  /* A running adaptive job and a pending rigid one are nothing new for Pollux. */
  CHECK(!event_new_work(&memory, idle, COUNT(idle), reason, sizeof(reason)));
  CHECK(event_new_work(&memory, submitted, COUNT(submitted), reason, sizeof(reason)));
  CHECK(!strcmp(reason, "JobId=3 adaptive, pending since the last round (1 such job)"));
}

static void test_new_and_requeued_jobs(void)
{
  event_memory_t memory = {0};
  char reason[200] = "";
  const event_job_t round[] = {
    {10, PENDING, true, false, 0}, /* held by the round: it waits */
    {11, ACTIVE, true, false, 0},
    {12, ACTIVE, false, false, 0},
  };
  const event_job_t same[] = {
    {10, PENDING, true, false, 0}, {11, ACTIVE, true, false, 0}, {12, ACTIVE, false, false, 0},
  };
  const event_job_t burst[] = {
    {10, PENDING, true, false, 0}, {11, ACTIVE, true, false, 0}, {12, ACTIVE, false, false, 0},
    {20, PENDING, true, false, 0}, {21, PENDING, true, false, 0}, {22, PENDING, true, false, 0},
    {23, PENDING, false, false, 0}, /* rigid: Slurm's backfill's */
  };
  const event_job_t requeued_completing[] = {
    {10, PENDING, true, false, 0}, {11, PENDING, true, true, 0}, {12, ACTIVE, false, false, 0},
  };
  const event_job_t requeued[] = {
    {10, PENDING, true, false, 0}, {11, PENDING, true, false, 0}, {12, ACTIVE, false, false, 0},
  };

  CHECK(event_memory_record(&memory, round, COUNT(round), NULL, 0) == 0);
  CHECK(!event_new_work(&memory, same, COUNT(same), reason, sizeof(reason)));
  CHECK(event_new_work(&memory, burst, COUNT(burst), reason, sizeof(reason)));
  CHECK(!strcmp(reason, "JobId=20 adaptive, pending since the last round (3 such jobs)"));
  /* Requeued by a user or Slurm: new work once its last run has released its nodes. */
  CHECK(!event_new_work(&memory, requeued_completing, COUNT(requeued_completing), reason,
                        sizeof(reason)));
  CHECK(event_new_work(&memory, requeued, COUNT(requeued), reason, sizeof(reason)));
  CHECK(!strncmp(reason, "JobId=11 adaptive, pending", 26));
  /* After the round that saw the burst, it is nothing new. */
  CHECK(event_memory_record(&memory, burst, COUNT(burst), NULL, 0) == 0);
  CHECK(!event_new_work(&memory, burst, COUNT(burst), reason, sizeof(reason)));
  event_memory_free(&memory);
  CHECK(memory.waiting == NULL && memory.waiting_count == 0 && memory.holding_count == 0);
}

/* What a round did is no new work: a job it started (running), one it shrank, one it held, one
 * it requeued to be held, a placement Slurm did not take. A job it requeued to restart on new
 * nodes is, once its last run is done (Slurm then pushes its begin time out); a job it
 * started that then ends is too. */
static void test_own_actions(void)
{
  event_memory_t memory = {0};
  char reason[200] = "";
  const event_job_t round[] = {
    {30, ACTIVE, true, false, 0},  /* requeued by the round to grow */
    {31, PENDING, true, false, 0}, /* started by the round */
    {32, ACTIVE, true, false, 0},  /* shrunk in place by the round */
    {33, ACTIVE, false, false, 0},
    {34, PENDING, true, false, 0}, /* held by the round */
    {35, PENDING, true, false, 0}, /* placed, but Slurm refused the update */
    {36, ACTIVE, true, false, 0},  /* requeued by the round to be held (preempted) */
  };
  const event_action_t acted[] = {
    {32, false, false, false}, {31, true, false, false}, {30, false, true, true},
    {34, false, false, false}, {35, false, false, false}, {36, false, true, false},
  };
  const event_action_t let_begin[] = {{30, true, false, false}};
  const event_job_t during_requeue[] = {
    {30, PENDING, true, true, 0}, {31, ACTIVE, true, false, 0}, {32, ACTIVE, true, false, 0},
    {33, ACTIVE, false, false, 0}, {34, PENDING, true, false, 0}, {35, PENDING, true, false, 0},
    {36, PENDING, true, true, 0},
  };
  const event_job_t preempted_done[] = {
    {30, PENDING, true, true, 0}, {31, ACTIVE, true, false, 0}, {32, ACTIVE, true, false, 0},
    {33, ACTIVE, false, false, 0}, {34, PENDING, true, false, 0}, {35, PENDING, true, false, 0},
    {36, PENDING, true, false, 0},
  };
  const event_job_t after_requeue[] = {
    {30, PENDING, true, false, 0}, {31, ACTIVE, true, false, 0}, {32, ACTIVE, true, false, 0},
    {33, ACTIVE, false, false, 0}, {34, PENDING, true, false, 0}, {35, PENDING, true, false, 0},
    {36, PENDING, true, false, 0},
  };
  const event_job_t restarted[] = {
    {30, ACTIVE, true, false, 0}, {31, ACTIVE, true, false, 0}, {32, ACTIVE, true, false, 0},
    {33, ACTIVE, false, false, 0}, {34, PENDING, true, false, 0}, {35, PENDING, true, false, 0},
    {36, PENDING, true, false, 0},
  };
  const event_job_t started_then_ended[] = {
    {30, ACTIVE, true, false, 0}, {31, DONE, true, false, 0}, {32, ACTIVE, true, false, 0},
    {33, ACTIVE, false, false, 0}, {34, PENDING, true, false, 0}, {35, PENDING, true, false, 0},
    {36, PENDING, true, false, 0},
  };

  CHECK(event_memory_record(&memory, round, COUNT(round), acted, COUNT(acted)) == 0);
  CHECK(!event_new_work(&memory, round, COUNT(round), reason, sizeof(reason)));
  CHECK(!event_new_work(&memory, during_requeue, COUNT(during_requeue), reason, sizeof(reason)));
  CHECK(!event_new_work(&memory, preempted_done, COUNT(preempted_done), reason, sizeof(reason)));
  CHECK(event_new_work(&memory, after_requeue, COUNT(after_requeue), reason, sizeof(reason)));
  CHECK(!strcmp(reason, "JobId=30 requeued to restart, its last run done (1 such job)"));
  CHECK(!event_new_work(&memory, restarted, COUNT(restarted), reason, sizeof(reason)));
  CHECK(event_new_work(&memory, started_then_ended, COUNT(started_then_ended), reason,
                       sizeof(reason)));
  CHECK(!strcmp(reason, "JobId=31 ended (1 job since the last round), 3 adaptive jobs pending"));
  /* The round that let job 30 begin placed it again: it waits like any job a round started. */
  CHECK(event_memory_record(&memory, after_requeue, COUNT(after_requeue), let_begin,
                            COUNT(let_begin)) == 0);
  CHECK(!event_new_work(&memory, after_requeue, COUNT(after_requeue), reason, sizeof(reason)));
  /* The next round then sees them all running: still nothing new. */
  CHECK(event_memory_record(&memory, restarted, COUNT(restarted), NULL, 0) == 0);
  CHECK(!event_new_work(&memory, restarted, COUNT(restarted), reason, sizeof(reason)));
  event_memory_free(&memory);
}

/* A job requeued (by its user or by Slurm) after the round started it, or while it waited,
 * is new work again once its last run is done: Slurm's restart count tells. */
static void test_requeued_again(void)
{
  event_memory_t memory = {0};
  char reason[200] = "";
  const event_job_t round[] = {{40, PENDING, true, false, 1}, {41, PENDING, true, false, 0}};
  const event_action_t acted[] = {{40, true, false, false}}; /* started again by the round */
  const event_action_t held[] = {{41, false, true, false}};
  const event_job_t running[] = {{40, ACTIVE, true, false, 1}, {41, PENDING, true, false, 0}};
  const event_job_t completing[] = {{40, PENDING, true, true, 2}, {41, PENDING, true, false, 0}};
  const event_job_t requeued[] = {{40, PENDING, true, false, 2}, {41, PENDING, true, false, 0}};
  const event_job_t waiting_requeued[] = {{40, ACTIVE, true, false, 1},
                                          {41, PENDING, true, false, 1}};

  CHECK(event_memory_record(&memory, round, COUNT(round), acted, COUNT(acted)) == 0);
  CHECK(!event_new_work(&memory, round, COUNT(round), reason, sizeof(reason)));
  CHECK(!event_new_work(&memory, running, COUNT(running), reason, sizeof(reason)));
  CHECK(!event_new_work(&memory, completing, COUNT(completing), reason, sizeof(reason)));
  CHECK(event_new_work(&memory, requeued, COUNT(requeued), reason, sizeof(reason)));
  CHECK(!strcmp(reason, "JobId=40 adaptive, pending since the last round (1 such job)"));
  /* A pending job Slurm requeued (a failed launch): a round places it again. */
  CHECK(event_new_work(&memory, waiting_requeued, COUNT(waiting_requeued), reason,
                       sizeof(reason)));
  CHECK(!strncmp(reason, "JobId=41 adaptive", 17));
  /* Requeued by the round to be held: it waits, with the count the requeue gave it. */
  CHECK(event_memory_record(&memory, round, COUNT(round), held, COUNT(held)) == 0);
  CHECK(!event_new_work(&memory, waiting_requeued, COUNT(waiting_requeued), reason,
                        sizeof(reason)));
  event_memory_free(&memory);
}

static void test_ended_jobs(void)
{
  event_memory_t memory = {0};
  char reason[200] = "";
  const event_job_t round[] = {
    {40, PENDING, true, false, 0}, /* waits for GPUs */
    {41, ACTIVE, false, false, 0}, /* rigid */
    {42, ACTIVE, true, false, 0},
    {43, DONE, false, true, 0},    /* ended, still completing at the round */
  };
  const event_job_t rigid_completing[] = {
    {40, PENDING, true, false, 0}, {41, DONE, false, true, 0}, {42, ACTIVE, true, false, 0},
    {43, DONE, false, true, 0},
  };
  const event_job_t rigid_done[] = {
    {40, PENDING, true, false, 0}, {41, DONE, false, false, 0}, {42, ACTIVE, true, false, 0},
    {43, DONE, false, true, 0},
  };
  const event_job_t completed_earlier[] = {
    {40, PENDING, true, false, 0}, {41, ACTIVE, false, false, 0}, {42, ACTIVE, true, false, 0},
    {43, DONE, false, false, 0},
  };
  const event_job_t purged[] = {
    {40, PENDING, true, false, 0}, {41, ACTIVE, false, false, 0}, {42, ACTIVE, true, false, 0},
  };
  const event_job_t nobody_waits_rigid[] = {
    {40, ACTIVE, true, false, 0}, {41, DONE, false, false, 0}, {42, ACTIVE, true, false, 0},
    {43, DONE, false, true, 0},
  };
  const event_job_t nobody_waits_adaptive[] = {
    {40, ACTIVE, true, false, 0}, {41, ACTIVE, false, false, 0}, {42, DONE, true, false, 0},
    {43, DONE, false, true, 0},
  };

  CHECK(event_memory_record(&memory, round, COUNT(round), NULL, 0) == 0);
  CHECK(!event_new_work(&memory, round, COUNT(round), reason, sizeof(reason)));
  /* Its GPUs are freed only once it is done completing. */
  CHECK(!event_new_work(&memory, rigid_completing, COUNT(rigid_completing), reason,
                        sizeof(reason)));
  CHECK(event_new_work(&memory, rigid_done, COUNT(rigid_done), reason, sizeof(reason)));
  CHECK(!strcmp(reason, "JobId=41 ended (1 job since the last round), 1 adaptive job pending"));
  CHECK(event_new_work(&memory, completed_earlier, COUNT(completed_earlier), reason,
                       sizeof(reason)));
  CHECK(!strncmp(reason, "JobId=43 ended", 14));
  CHECK(event_new_work(&memory, purged, COUNT(purged), reason, sizeof(reason)));
  CHECK(!strcmp(reason, "1 job ended since the last round, 1 adaptive job pending"));
  /* A rigid job ending with no adaptive job waiting is Slurm's business. */
  CHECK(!event_new_work(&memory, nobody_waits_rigid, COUNT(nobody_waits_rigid), reason,
                        sizeof(reason)));
  /* An adaptive job ending frees GPUs the others may grow into. */
  CHECK(event_new_work(&memory, nobody_waits_adaptive, COUNT(nobody_waits_adaptive), reason,
                       sizeof(reason)));
  CHECK(!strcmp(reason, "JobId=42 ended (1 job since the last round), 0 adaptive jobs pending"));
  event_memory_free(&memory);
}

static void test_clock_without_events(void)
{
  event_clock_t clock;

  event_clock_start(&clock, 1000, 60, 0);
  CHECK(event_clock_wake(&clock, 0) == 61000);
  CHECK(event_clock_due(&clock, 60999, 0) == EVENT_DUE_NOTHING);
  CHECK(event_clock_due(&clock, 61000, 0) == EVENT_DUE_ROUND);
  event_clock_ran(&clock, 61000, 60, 0);
  CHECK(event_clock_wake(&clock, 0) == 121000);
}

static void test_clock_with_events(void)
{
  event_clock_t clock;

  /* Work found before any round: its round runs at once. */
  event_clock_start(&clock, 5000, 300, 1);
  CHECK(event_clock_due(&clock, 6000, 1) == EVENT_DUE_CHECK);
  event_clock_checked(&clock, 6000, 1, true);
  CHECK(event_clock_wake(&clock, 1) >= 0 && event_clock_wake(&clock, 1) <= 6000);
  CHECK(event_clock_due(&clock, 6000, 1) == EVENT_DUE_EVENT_ROUND);

  /* Checks every second from the start; work found then runs a round at once. */
  event_clock_start(&clock, 0, 300, 1);
  CHECK(event_clock_wake(&clock, 1) == 1000);
  CHECK(event_clock_due(&clock, 999, 1) == EVENT_DUE_NOTHING);
  CHECK(event_clock_due(&clock, 1000, 1) == EVENT_DUE_CHECK);
  event_clock_checked(&clock, 1000, 1, false);
  CHECK(event_clock_wake(&clock, 1) == 2000);
  CHECK(event_clock_due(&clock, 2003, 1) == EVENT_DUE_CHECK);
  event_clock_checked(&clock, 2003, 1, true);
  CHECK(event_clock_due(&clock, 2003, 1) == EVENT_DUE_EVENT_ROUND);
  CHECK(event_clock_wake(&clock, 1) <= 2003);
  event_clock_ran(&clock, 2003, 300, 1);
  /* The next look one second after that round started; its work found waits for the rate
   * limit only if a round ran less than a delay ago. */
  CHECK(event_clock_wake(&clock, 1) == 3003);
  CHECK(event_clock_due(&clock, 3003, 1) == EVENT_DUE_CHECK);
  event_clock_checked(&clock, 3003, 1, true);
  CHECK(event_clock_due(&clock, 3003, 1) == EVENT_DUE_EVENT_ROUND);
  event_clock_ran(&clock, 3003, 300, 1);
  /* A round starts the interval again. */
  CHECK(clock.next_round_ms == 303003);
  /* A regular round comes first, and work found shortly after it waits a delay. */
  event_clock_checked(&clock, 303002, 1, false);
  CHECK(event_clock_due(&clock, 303003, 1) == EVENT_DUE_ROUND);
  event_clock_ran(&clock, 303003, 300, 5);
  event_clock_checked(&clock, 303100, 5, true); /* (a check that came early) */
  CHECK(event_clock_due(&clock, 303100, 5) == EVENT_DUE_NOTHING);
  CHECK(event_clock_wake(&clock, 5) == 308003);
  CHECK(event_clock_due(&clock, 308003, 5) == EVENT_DUE_EVENT_ROUND);
}

/* A burst of submissions over 3 s with checks each second costs at most one round per
 * second; none without new work. */
static void test_burst_is_rate_limited(void)
{
  event_clock_t clock;
  event_memory_t memory = {0};
  event_job_t jobs[64];
  size_t count = 0;
  int rounds = 0, checks = 0;
  char reason[200];

  event_clock_start(&clock, 0, 300, 1);
  for (int64_t now = 0; now <= 10000; now += 50) {
    if (now >= 500 && now < 3500 && count < COUNT(jobs)) { /* two submissions per 100 ms */
      jobs[count] = (event_job_t){(uint32_t)(100 + count), PENDING, true, false, 0};
      count++;
    }
    switch (event_clock_due(&clock, now, 1)) {
    case EVENT_DUE_CHECK:
      checks++;
      event_clock_checked(&clock, now, 1, event_new_work(&memory, jobs, count, reason,
                                                         sizeof(reason)));
      break;
    case EVENT_DUE_EVENT_ROUND:
    case EVENT_DUE_ROUND:
      rounds++;
      CHECK(event_memory_record(&memory, jobs, count, NULL, 0) == 0);
      event_clock_ran(&clock, now, 300, 1);
      break;
    default:
      break;
    }
  }
  CHECK(count == 60);
  CHECK(rounds >= 2 && rounds <= 4);
  CHECK(checks >= 9 && checks <= 11);
  event_memory_free(&memory);
}

int main(void)
{
  test_adaptive_comment();
  test_no_round_yet();
  test_new_and_requeued_jobs();
  test_own_actions();
  test_requeued_again();
  test_ended_jobs();
  test_clock_without_events();
  test_clock_with_events();
  test_burst_is_rate_limited();
  return check_summary("event_rounds_test");
}
