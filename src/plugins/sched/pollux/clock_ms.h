/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The shim's monotonic clock in milliseconds, with fractions: a round's phases and its time
 * for placements. */
#ifndef POLLUX_CLOCK_MS_H
#define POLLUX_CLOCK_MS_H

#include <time.h>

static inline double clock_ms(void)
{
  struct timespec now;

  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec * 1e3 + (double)now.tv_nsec / 1e6;
}

#endif
