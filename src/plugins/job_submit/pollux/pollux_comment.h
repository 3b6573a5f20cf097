/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The job_submit/pollux shim's one call into the C++ core. */
#ifndef POLLUX_COMMENT_H
#define POLLUX_COMMENT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1: an adaptive job (comment "adaptive[:options]") whose GPU request Pollux may manage;
 * 0: not adaptive; -1: adaptive but unusable, with the reason for the user in `error`:
 * a malformed comment, a typed GPU request (use adaptive:gpu_type=TYPE) or a per-job GPU
 * count (--gpus; Pollux sets GPUs per node). */
int pollux_check_adaptive_job(const char *comment, const char *tres_per_node,
                              const char *tres_per_job, char *error, size_t error_size);

#ifdef __cplusplus
}
#endif

#endif /* POLLUX_COMMENT_H */
