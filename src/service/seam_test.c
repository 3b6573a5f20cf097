/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The seam (pollux_service.h) from C: every recorded round of tests/data/rounds (the folder
 * POLLUX_ROUNDS names) replayed through pollux_service_create, _plan and _plan_finish as
 * the shim calls them, on its recorded settings and job store. The plan's actions must be
 * those of the round's golden plan, field by field (tests/replay_rounds.sh checks the rest
 * of the plan: its reasons, waiting jobs and solver status).
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "service/pollux_service.h"
#include "service/recorded_round.h"
#include "testing/check.h"

static const char round_suffix[] = ".round.json";

static void log_errors(int level, const char *message) {
  if (level == POLLUX_LOG_ERROR) fprintf(stderr, "service: %s\n", message);
}

static int same_text(const char *expected, const char *got) {
  return !strcmp(expected ? expected : "", got ? got : "");
}

/* The first field in which `got` differs from `golden`, or NULL. */
static const char *differing_field(const pollux_action_t *golden, const pollux_action_t *got) {
  if (golden->job_id != got->job_id) return "job_id";
  if (golden->kind != got->kind) return "kind";
  if (golden->num_nodes != got->num_nodes) return "num_nodes";
  if (!same_text(golden->tres_per_node, got->tres_per_node)) return "tres_per_node";
  if (!same_text(golden->node_list, got->node_list)) return "node_list";
  if (golden->num_tasks != got->num_tasks) return "num_tasks";
  if (golden->min_cpus != got->min_cpus) return "min_cpus";
  if (!same_text(golden->admin_comment, got->admin_comment)) return "admin_comment";
  if (golden->release != got->release) return "release";
  if (golden->time_limit_min != got->time_limit_min) return "time_limit_min";
  return NULL;
}

/* Whether `plan` holds the golden plan's actions; says where it does not. */
static int is_golden(const char *name, const pollux_plan_t *plan,
                     const recorded_round_t *recorded) {
  size_t count;
  const pollux_action_t *golden = recorded_round_golden_actions(recorded, &count);

  if (plan->action_count != count) {
    fprintf(stderr, "%s: %zu actions, the golden plan has %zu\n", name, plan->action_count, count);
    return 0;
  }
  for (size_t i = 0; i < count; i++) {
    const char *field = differing_field(&golden[i], &plan->actions[i]);

    if (field) {
      fprintf(stderr, "%s: action %zu (JobId=%u): %s differs from the golden plan's\n", name, i,
              golden[i].job_id, field);
      return 0;
    }
  }
  return 1;
}

static int write_text(const char *path, const char *text) {
  FILE *file = fopen(path, "w");
  int written = file && fputs(text, file) >= 0;

  if (file && fclose(file) != 0) written = 0;
  return written ? 0 : -1;
}

/* Creates the service as the shim does, on the round's settings and job store in `dir`. */
static pollux_service_t *create_service(const recorded_round_t *recorded, const char *dir) {
  char conf_path[PATH_MAX];
  pollux_settings_t settings = {
      .scheduler_parameters = recorded_round_scheduler_parameters(recorded),
      .pollux_conf_path = conf_path,
      .state_dir = dir,
      .log = log_errors,
  };

  /* A round that settled had slurmctld restarted with jobs just before it. */
  if (recorded_round_settling(recorded))
    settings.slurmctld_started = recorded_round_views(recorded)->now;
  snprintf(conf_path, sizeof(conf_path), "%s/pollux.conf", dir);
  CHECK(write_text(conf_path, recorded_round_pollux_conf(recorded)) == 0);
  CHECK(recorded_round_save_state(recorded, dir) == 0);
  return pollux_service_create(&settings);
}

/* One round as the shim runs it: plan, every action taken (error_code 0, as the service
 * gave them), plan finished; the service then saves its state and is destroyed. */
static void plan_round(const char *name, const recorded_round_t *recorded, const char *dir) {
  pollux_service_t *service = create_service(recorded, dir);
  pollux_plan_t *plan = NULL;

  CHECK(service != NULL);
  CHECK(pollux_service_plan(service, recorded_round_views(recorded), &plan) == 0);
  if (plan) {
    CHECK(is_golden(name, plan, recorded));
    CHECK(pollux_plan_finish(service, plan) == 0);
  }
  pollux_service_destroy(service);
}

/* Removes the state folder with the two files the round leaves in it. */
static void remove_state(const char *dir) {
  static const char *const files[] = {"pollux.conf", "pollux_state.json"};
  char path[PATH_MAX];

  for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
    snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
    CHECK(unlink(path) == 0);
  }
  CHECK(rmdir(dir) == 0);
}

static void replay(const char *rounds, const char *file) {
  char name[NAME_MAX], round_path[PATH_MAX], plan_path[PATH_MAX];
  char dir[] = "/tmp/pollux-seam-XXXXXX";
  int failures_before = failures;
  recorded_round_t *recorded;
  int ready;

  snprintf(name, sizeof(name), "%.*s", (int)(strlen(file) - strlen(round_suffix)), file);
  snprintf(round_path, sizeof(round_path), "%s/%s", rounds, file);
  snprintf(plan_path, sizeof(plan_path), "%s/%s.plan.json", rounds, name);
  recorded = recorded_round_load(round_path, plan_path);
  ready = recorded && mkdtemp(dir);
  CHECK(ready); /* the round and its golden plan read, a state folder made */
  if (ready) {
    plan_round(name, recorded, dir);
    remove_state(dir);
  }
  recorded_round_free(recorded);
  if (failures > failures_before) fprintf(stderr, "FAIL: %s\n", name);
  else printf("ok: %s\n", name);
}

static int is_round(const struct dirent *entry) {
  size_t length = strlen(entry->d_name);

  return length > strlen(round_suffix) &&
         !strcmp(entry->d_name + length - strlen(round_suffix), round_suffix);
}

int main(void) {
  const char *rounds = getenv("POLLUX_ROUNDS");
  struct dirent **files = NULL;
  int count = rounds ? scandir(rounds, &files, is_round, alphasort) : -1;

  CHECK(count >= 6); /* as tests/replay_rounds.sh: the rounds are there */
  for (int i = 0; i < count; i++) {
    replay(rounds, files[i]->d_name);
    free(files[i]);
  }
  free(files);
  return check_summary("seam_test");
}
