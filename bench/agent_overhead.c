/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agent_overhead: a training loop for bench/agent-overhead. Each step is a calibrated amount of
 * busy CPU work (not a sleep), then pollux_report_step with every key and the decision and
 * checkpoint checks a real loop makes; under pollux-agent they talk to it, without it they are
 * the header's no-ops.
 *
 *   agent_overhead --calibrate MS
 *       prints the work units one MS-millisecond step takes on this machine
 *   agent_overhead --units U --steps N --times FILE [--warmup W]
 *       runs W untimed then N timed steps of U units; writes one line per timed step to FILE:
 *       "STEP_US REPORT_US" (the whole step, and the report and checks alone); prints
 *       "agent=0|1 dropped=D" (D: reports the agent could not take at once)
 *
 * Exits 0 early (after `checkpointed`) if the agent asks for a checkpoint.
 */
#include <pollux/pollux_train.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct options {
  double calibrate_ms; /* > 0: calibrate only */
  long units;
  long steps;
  long warmup;
  const char* times_path;
} options;

static double now_seconds(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

/* The step's "computation": a dependent xorshift chain the compiler cannot shorten. */
static volatile uint64_t work_sink;
static void busy_work(long units) {
  uint64_t state = work_sink | 1;
  for (long i = 0; i < units; ++i) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
  }
  work_sink = state;
}

static double seconds_of_work(long units) {
  const double start = now_seconds();
  busy_work(units);
  return now_seconds() - start;
}

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* Units of work per `step_ms` milliseconds: the median rate of 9 samples of >= 50 ms each. */
static long calibrate(double step_ms) {
  long units = 1L << 16;
  while (seconds_of_work(units) < 0.05) units *= 2;
  double seconds_per_unit[9];
  for (int i = 0; i < 9; ++i) seconds_per_unit[i] = seconds_of_work(units) / (double)units;
  qsort(seconds_per_unit, 9, sizeof seconds_per_unit[0], compare_doubles);
  return (long)(step_ms * 1e-3 / seconds_per_unit[4]);
}

/* Reports the step and makes the checks a training loop makes after each step. Returns
 * non-zero once the agent asks for a checkpoint. */
static int report(pollux_trainer* trainer, double work_seconds, long step, long* dropped) {
  const int local_bsz = 64;
  const pollux_step message = {work_seconds, local_bsz, 0, (double)(step * local_bsz),
                               (double)step / 1000.0, work_seconds, 0.5, 12.5};
  if (pollux_report_step(trainer, &message) != 0) ++*dropped;
  pollux_decision decision;
  pollux_decision_get(trainer, &decision);
  return pollux_checkpoint_requested(trainer);
}

static int run(const options* opts) {
  FILE* times = fopen(opts->times_path, "w");
  if (times == NULL) {
    perror(opts->times_path);
    return 1;
  }
  const pollux_limits limits = {64, 4096, 8, 256, 1};
  pollux_trainer trainer;
  if (pollux_connect(&trainer, &limits) != 0) {
    perror("agent_overhead: cannot connect to POLLUX_AGENT_SOCKET");
    fclose(times);
    return 1;
  }
  long dropped = 0;
  for (long step = 1; step <= opts->warmup + opts->steps; ++step) {
    const double start = now_seconds();
    busy_work(opts->units);
    const double worked = now_seconds();
    const int checkpoint = report(&trainer, worked - start, step, &dropped);
    const double end = now_seconds();
    if (step > opts->warmup)
      fprintf(times, "%.3f %.3f\n", (end - start) * 1e6, (end - worked) * 1e6);
    if (checkpoint) {
      pollux_checkpointed(&trainer);
      break;
    }
  }
  printf("agent=%d dropped=%ld\n", trainer.fd >= 0, dropped);
  pollux_close(&trainer);
  return fclose(times) == 0 ? 0 : 1;
}

static int parse_options(int argc, char** argv, options* opts) {
  memset(opts, 0, sizeof *opts);
  for (int i = 1; i + 1 < argc; i += 2) {
    const char* value = argv[i + 1];
    if (strcmp(argv[i], "--calibrate") == 0) opts->calibrate_ms = atof(value);
    else if (strcmp(argv[i], "--units") == 0) opts->units = atol(value);
    else if (strcmp(argv[i], "--steps") == 0) opts->steps = atol(value);
    else if (strcmp(argv[i], "--warmup") == 0) opts->warmup = atol(value);
    else if (strcmp(argv[i], "--times") == 0) opts->times_path = value;
    else return -1;
  }
  if (argc % 2 == 0) return -1;
  if (opts->calibrate_ms > 0) return 0;
  return opts->units > 0 && opts->steps > 0 && opts->warmup >= 0 && opts->times_path ? 0 : -1;
}

int main(int argc, char** argv) {
  options opts;
  if (parse_options(argc, argv, &opts) != 0) {
    fprintf(stderr,
            "usage: agent_overhead --calibrate MS\n"
            "       agent_overhead --units U --steps N --times FILE [--warmup W]\n");
    return 2;
  }
  if (opts.calibrate_ms > 0) {
    printf("%ld\n", calibrate(opts.calibrate_ms));
    return 0;
  }
  return run(&opts);
}
