/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test support for the seam's C test (seam_test.c): a recorded round (pollux_dump_rounds, as
 * in tests/data/rounds) as the views the shim hands pollux_service_plan(), made of
 * round_json's reading of it by the conversions of pollux_service.h's field lists, with the
 * settings and job store it was planned with and the actions of its golden plan.
 */
#ifndef POLLUX_RECORDED_ROUND_H
#define POLLUX_RECORDED_ROUND_H

#include <stddef.h>

#include "pollux_service.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct recorded_round recorded_round_t;

/* Reads a round (NAME.round.json) and its golden plan (NAME.plan.json); NULL, the reason on
 * stderr, if either is unreadable or malformed. */
recorded_round_t *recorded_round_load(const char *round_path, const char *plan_path);
void recorded_round_free(recorded_round_t *recorded);

/* The round's views; they live as long as `recorded`. */
const pollux_round_t *recorded_round_views(const recorded_round_t *recorded);
const char *recorded_round_scheduler_parameters(const recorded_round_t *recorded);
const char *recorded_round_pollux_conf(const recorded_round_t *recorded); /* its text */
/* 1 if slurmctld had restarted with jobs less than 30 s before the round. */
int recorded_round_settling(const recorded_round_t *recorded);

/* Saves the job store as it was before the round in `state_dir`, where the service restores
 * it from; 0, or -1 with the reason on stderr. */
int recorded_round_save_state(const recorded_round_t *recorded, const char *state_dir);

/* The golden plan's actions, as the service gives them (error_code 0, error_text NULL). */
const pollux_action_t *recorded_round_golden_actions(const recorded_round_t *recorded,
                                                     size_t *count);

#ifdef __cplusplus
}
#endif

#endif /* POLLUX_RECORDED_ROUND_H */
