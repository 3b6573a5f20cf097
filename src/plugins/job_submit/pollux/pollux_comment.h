/* The job_submit/pollux shim's one call into the C++ core. */
#ifndef POLLUX_COMMENT_H
#define POLLUX_COMMENT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1: the comment asks for adaptive scheduling; 0: it does not; -1: it does but is malformed,
 * with the reason for the user in `error`. */
int pollux_parse_adaptive_comment(const char *comment, char *error, size_t error_size);

#ifdef __cplusplus
}
#endif

#endif /* POLLUX_COMMENT_H */
