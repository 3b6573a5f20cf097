/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Slurm's sched/backfill hosted inside sched/pollux for rigid jobs: sched_backfill.so loaded
 * from PluginDir and driven through its own plugin ABI (init, fini, sched_p_reconfig).
 */
#ifndef POLLUX_HOSTED_BACKFILL_H
#define POLLUX_HOSTED_BACKFILL_H

/* Loads sched_backfill.so from the first entry of `plugin_dirs` (PluginDir, colon-separated)
 * that has it and runs its init(); returns its answer, or -1 (logged) if it cannot be
 * loaded. */
int hosted_backfill_load(const char *plugin_dirs);

/* Runs the hosted backfill's sched_p_reconfig(), if one is loaded. */
void hosted_backfill_reconfig(void);

/* Runs the hosted backfill's fini() and unloads it, if one is loaded. */
void hosted_backfill_unload(void);

#endif
