/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The checks of the C unit tests (C has no GoogleTest): CHECK counts a failed
 * condition and names it; check_summary() prints the outcome and gives the exit status. */
#ifndef POLLUX_TESTING_CHECK_H
#define POLLUX_TESTING_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(condition)                                                            \
  do {                                                                              \
    if (!(condition)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #condition); \
      failures++;                                                                   \
    }                                                                               \
  } while (0)

static inline int check_summary(const char *test)
{
  if (failures)
    fprintf(stderr, "%s: %d check(s) failed\n", test, failures);
  else
    printf("%s: all checks passed\n", test);
  return failures ? 1 : 0;
}

#endif
