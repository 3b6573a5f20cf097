/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * LD_PRELOAD library for tests/faults_cluster.sh: makes GLPK fail inside a real slurmctld.
 * glp_intopt and glp_simplex read the file named by POLLUX_GLPK_FAULT_FILE on every call:
 *   "error"   -> raise a GLPK internal error (glp_error), as a GLPK bug would;
 *   "timeout" -> return GLP_ETMLIM without solving, as an exhausted time limit would;
 * anything else, or no file -> the real GLPK function.
 * It links libglpk, so the real functions are the next definitions after this library's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glpk.h>

enum fault { FAULT_NONE, FAULT_ERROR, FAULT_TIMEOUT };

static enum fault current_fault(void)
{
  const char *path = getenv("POLLUX_GLPK_FAULT_FILE");
  char word[16] = "";
  FILE *file = path ? fopen(path, "r") : NULL;

  if (!file)
    return FAULT_NONE;
  if (!fgets(word, sizeof(word), file))
    word[0] = '\0';
  fclose(file);
  if (strncmp(word, "error", 5) == 0)
    return FAULT_ERROR;
  if (strncmp(word, "timeout", 7) == 0)
    return FAULT_TIMEOUT;
  return FAULT_NONE;
}

/* The real GLPK symbol this library hides. */
static void *real(const char *name)
{
  return dlsym(RTLD_NEXT, name);
}

/* Returns 0 to let the real function run, or the code to return instead. Does not return
 * after an "error": glp_error hands control to the caller's error hook. */
static int injected(void)
{
  switch (current_fault()) {
  case FAULT_ERROR:
    glp_error("injected fault (POLLUX_GLPK_FAULT_FILE)\n");
    abort(); /* glp_error never returns */
  case FAULT_TIMEOUT:
    return GLP_ETMLIM;
  case FAULT_NONE:
    break;
  }
  return 0;
}

int glp_intopt(glp_prob *problem, const glp_iocp *parameters)
{
  int code = injected();
  if (code)
    return code;
  return ((int (*)(glp_prob *, const glp_iocp *))real("glp_intopt"))(problem, parameters);
}

int glp_simplex(glp_prob *problem, const glp_smcp *parameters)
{
  int code = injected();
  if (code)
    return code;
  return ((int (*)(glp_prob *, const glp_smcp *))real("glp_simplex"))(problem, parameters);
}
