/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sched/pollux's host for Slurm's sched/backfill: rigid jobs keep Slurm's own backfill,
 * loaded with dlopen() and started, reconfigured and stopped with the plugin.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/spank.h>

#include "hosted_backfill.h"

typedef struct {
  void *handle;
  int (*init)(void);
  void (*fini)(void);
  int (*reconfig)(void);
} hosted_plugin_t;

static hosted_plugin_t backfill;

int hosted_backfill_load(const char *plugin_dirs)
{
  char *dirs = strdup(plugin_dirs ? plugin_dirs : "");
  char *save = NULL;
  char path[4096];

  for (char *dir = strtok_r(dirs, ":", &save); dir && !backfill.handle;
       dir = strtok_r(NULL, ":", &save)) {
    snprintf(path, sizeof(path), "%s/sched_backfill.so", dir);
    backfill.handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  }
  free(dirs);
  if (!backfill.handle) {
    slurm_error(
        "sched/pollux: cannot load sched_backfill.so from PluginDir: rigid jobs get no backfill");
    return -1;
  }
  backfill.init = (int (*)(void))dlsym(backfill.handle, "init");
  backfill.fini = (void (*)(void))dlsym(backfill.handle, "fini");
  backfill.reconfig = (int (*)(void))dlsym(backfill.handle, "sched_p_reconfig");
  if (!backfill.init || !backfill.fini || !backfill.reconfig) {
    slurm_error("sched/pollux: %s lacks the sched plugin symbols", path);
    dlclose(backfill.handle);
    memset(&backfill, 0, sizeof(backfill));
    return -1;
  }
  slurm_info("sched/pollux: hosting Slurm's backfill from %s", path);
  return backfill.init();
}

void hosted_backfill_reconfig(void)
{
  if (backfill.handle)
    backfill.reconfig();
}

void hosted_backfill_unload(void)
{
  if (!backfill.handle)
    return;
  backfill.fini();
  dlclose(backfill.handle);
  memset(&backfill, 0, sizeof(backfill));
}
