/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The shim's conversions (slurm_round.c) on fake Slurm records: no slurmctld, no RPC. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testing/check.h"
#include "slurm_round.h"

static int has_names(pollux_names_t names, const char *const *expected, size_t count)
{
  if (names.count != count)
    return 0;
  for (size_t i = 0; i < count; i++) {
    if (strcmp(names.names[i], expected[i]))
      return 0;
  }
  return 1;
}

static void test_node(void)
{
  node_info_t node;
  pollux_node_view_t view;

  memset(&node, 0, sizeof(node));
  node.name = "n1";
  node.gres = "gpu:a100:4";
  node.gres_used = "gpu:a100:2(IDX:0-1)";
  node.node_state = NODE_STATE_MIXED;
  node.cpus = 32;
  node.real_memory = 64000;
  node.mem_spec_limit = 1000;

  CHECK(slurm_round_node(&node, 8, 3000, true, &view) == 0);
  CHECK(!strcmp(view.name, "n1") && !strcmp(view.gres, "gpu:a100:4"));
  CHECK(!strcmp(view.gres_used, "gpu:a100:2(IDX:0-1)"));
  CHECK(view.usable && view.registered);
  CHECK(view.free_cpus == 24);
  CHECK(view.memory_mb == 63000 && view.free_memory_mb == 60000);

  CHECK(slurm_round_node(&node, 40, 0, false, &view) == 0); /* more allocated than it has */
  CHECK(view.free_cpus == 0);
  CHECK(view.memory_mb == -1 && view.free_memory_mb == -1); /* memory not consumable */

  node.node_state = NODE_STATE_IDLE | NODE_STATE_DRAIN;
  slurm_round_node(&node, 0, 0, false, &view);
  CHECK(!view.usable && view.registered);
  node.node_state = NODE_STATE_UNKNOWN; /* slurmd not registered since slurmctld started */
  slurm_round_node(&node, 0, 0, false, &view);
  CHECK(!view.usable && !view.registered);
  node.node_state = NODE_STATE_ALLOCATED | NODE_STATE_NO_RESPOND;
  slurm_round_node(&node, 0, 0, false, &view);
  CHECK(!view.usable);
}

static void test_partition(void)
{
  static const char *const expected[] = {"n1", "n2", "n3", "g7"};
  partition_info_t partition;
  pollux_partition_view_t view;

  memset(&partition, 0, sizeof(partition));
  partition.name = "gpu";
  partition.nodes = "n[1-3],g7";
  partition.max_nodes = INFINITE;
  partition.max_time = INFINITE;
  CHECK(slurm_round_partition(&partition, &view) == 0);
  CHECK(!strcmp(view.name, "gpu"));
  CHECK(has_names(view.nodes, expected, 4));
  CHECK(view.max_nodes == 0 && view.max_time_min == 0 && view.qos == NULL);
  slurm_round_partition_free(&view);
  partition.max_nodes = 1;
  partition.max_time = 30;
  partition.qos_char = "gpu-part";
  CHECK(slurm_round_partition(&partition, &view) == 0);
  CHECK(view.max_nodes == 1 && view.max_time_min == 30 && !strcmp(view.qos, "gpu-part"));
  slurm_round_partition_free(&view);
  CHECK(view.nodes.count == 0 && view.nodes.names == NULL);

  partition.nodes = NULL; /* a partition without nodes */
  CHECK(slurm_round_partition(&partition, &view) == 0);
  CHECK(view.nodes.count == 0);
  slurm_round_partition_free(&view);
}

static void test_job(void)
{
  static const char *const partitions_expected[] = {"gpu", "debug"};
  static const char *const nodes_expected[] = {"n1", "n2"};
  static const char *const requested_expected[] = {"n4"};
  job_defaults_t cpus_per_gpu = {.type = JOB_DEF_CPU_PER_GPU, .value = 4};
  partition_info_t partition_array[2];
  partition_info_msg_t partitions = {.record_count = 2, .partition_array = partition_array};
  slurm_round_defaults_t defaults = {.memory_consumable = true, .cpus_per_gpu = 2,
                                     .memory_per_gpu = 8000};
  slurm_job_info_t job;
  pollux_job_view_t view;

  memset(partition_array, 0, sizeof(partition_array));
  partition_array[0].name = "debug";
  partition_array[1].name = "gpu";
  partition_array[1].job_defaults_list = slurm_list_create(NULL);
  slurm_list_append(partition_array[1].job_defaults_list, &cpus_per_gpu);

  memset(&job, 0, sizeof(job));
  job.job_id = 7;
  job.user_id = 1000;
  job.job_state = JOB_RUNNING;
  job.priority = 0;
  job.submit_time = 100;
  job.start_time = 160;
  job.comment = "adaptive:max_gpus=8";
  job.partition = "gpu,debug";
  job.nodes = "n[1-2]";
  job.req_nodes = "n4";
  job.batch_host = "n1";
  job.tres_per_node = "gres:gpu:2";
  job.num_nodes = 2;
  job.num_tasks = NO_VAL;
  job.sockets_per_node = NO_VAL16;
  job.pn_min_cpus = 4;
  job.cpus_per_task = 2;
  job.ntasks_per_node = 2;
  job.ntasks_per_tres = NO_VAL16;
  job.pn_min_memory = 2000 | MEM_PER_CPU;
  job.bitflags = JOB_MEM_SET;

  CHECK(slurm_round_job(&job, &partitions, &defaults, &view) == 0);
  CHECK(view.job_id == 7 && view.user_id == 1000);
  CHECK(view.state == POLLUX_JOB_RUNNING && view.held && !view.failed);
  CHECK(view.submit_time == 100 && view.start_time == 160);
  CHECK(!strcmp(view.comment, "adaptive:max_gpus=8") && !strcmp(view.batch_host, "n1"));
  CHECK(has_names(view.partitions, partitions_expected, 2));
  CHECK(has_names(view.nodes, nodes_expected, 2));
  CHECK(has_names(view.requested_nodes, requested_expected, 1));
  CHECK(!strcmp(view.tres_per_node, "gres:gpu:2") && view.tres_per_job == NULL);
  CHECK(view.num_nodes == 2 && view.num_tasks == 0 && view.sockets_per_node == 0);
  CHECK(view.min_cpus_per_node == 4 && view.cpus_per_task == 2 && view.ntasks_per_gpu == 0);
  CHECK(view.ntasks_per_node == 2);
  CHECK(view.memory_mb_per_cpu == 2000 && view.memory_mb_per_node == 0 && view.memory_set);
  CHECK(view.default_cpus_per_gpu == 4);         /* the partition's DefCpuPerGPU */
  CHECK(view.default_memory_mb_per_gpu == 8000); /* slurm.conf's DefMemPerGPU */
  slurm_round_job_free(&view);

  memset(&job, 0, sizeof(job)); /* a pending job with nothing given, then a failed one */
  job.job_id = 8;
  job.job_state = JOB_PENDING;
  job.priority = 1;
  job.pn_min_memory = 16000;
  defaults.cpus_per_gpu = NO_VAL64;
  defaults.memory_per_gpu = NO_VAL64;
  CHECK(slurm_round_job(&job, &partitions, &defaults, &view) == 0);
  CHECK(view.state == POLLUX_JOB_PENDING && !view.held);
  CHECK(view.partitions.count == 0 && view.nodes.count == 0 && view.requested_nodes.count == 0);
  CHECK(view.memory_mb_per_node == 16000 && view.memory_mb_per_cpu == 0);
  CHECK(view.default_cpus_per_gpu == 0 && view.default_memory_mb_per_gpu == 0);
  slurm_round_job_free(&view);

  job.job_state = JOB_FAILED | JOB_COMPLETING; /* still completing: not yet failed for us */
  job.restart_cnt = 2;
  slurm_round_job(&job, NULL, &defaults, &view);
  CHECK(view.state == POLLUX_JOB_OTHER && !view.failed && view.restarts == 2);
  slurm_round_job_free(&view);
  job.job_state = JOB_NODE_FAIL;
  slurm_round_job(&job, NULL, &defaults, &view);
  CHECK(view.failed);
  slurm_round_job_free(&view);

  CHECK(slurm_round_job_default(partition_array[1].job_defaults_list, JOB_DEF_MEM_PER_GPU) ==
        NO_VAL64);
  slurm_list_destroy(partition_array[1].job_defaults_list);
}

/* A license as the policy reads it. */
static void test_license(void)
{
  slurm_license_info_t license;
  pollux_license_view_t view;

  memset(&license, 0, sizeof(license));
  license.name = "matlab";
  license.total = 4;
  license.in_use = 1;
  license.available = 3;
  license.reserved = 2;
  slurm_round_license(&license, &view);
  CHECK(!strcmp(view.name, "matlab") && view.available == 3 && view.reserved == 2);
}

/* What of a job, a reservation, a QOS and an association the site's policy reads. */
static void test_site_policy(void)
{
  static const char *const excluded[] = {"n1", "n2"};
  static const char *const reserved[] = {"n3", "n4"};
  static char *tres_names[] = {"cpu", "mem", "node", "gres/gpu"};
  uint64_t qos_grp[] = {INFINITE64, 64000, INFINITE64, 16}, qos_user[] = {8, INFINITE64, 1, 2};
  uint64_t none[] = {INFINITE64, INFINITE64, INFINITE64, INFINITE64}, used[] = {4, 900, 1, 5};
  uint64_t user_used[] = {1, 300, 1, 2};
  const slurm_round_tres_t no_tres = {-1, -1, -1, -1};
  slurm_round_tres_t tres;
  slurm_job_info_t job;
  reserve_info_t resv;
  slurmdb_qos_rec_t qos;
  slurmdb_qos_usage_t qos_usage;
  slurmdb_used_limits_t user_usage, account_usage;
  slurmdb_assoc_rec_t assoc;
  slurmdb_assoc_usage_t assoc_usage;
  pollux_job_view_t view;
  pollux_reservation_view_t resv_view;
  pollux_qos_view_t qos_view;
  pollux_association_view_t assoc_view;
  const slurm_round_defaults_t defaults = {false, NO_VAL64, NO_VAL64};

  memset(&job, 0, sizeof(job));
  job.job_id = 9;
  job.job_state = JOB_PENDING;
  job.state_reason = WAIT_HELD_USER;
  job.time_limit = 30;
  job.features = "ib&nvlink";
  job.resv_name = "rv";
  job.exc_nodes = "n[1-2]";
  job.dependency = "afterok:6(unfulfilled)";
  job.assoc_id = 12;
  job.qos = "gpu2";
  job.licenses = "matlab:1,fluent:2";
  CHECK(slurm_round_job(&job, NULL, &defaults, &view) == 0);
  CHECK(!strcmp(view.state_reason, "JobHeldUser"));
  CHECK(view.time_limit_min == 30);
  CHECK(!strcmp(view.features, "ib&nvlink") && !strcmp(view.reservation, "rv"));
  CHECK(has_names(view.excluded_nodes, excluded, 2));
  CHECK(!strcmp(view.dependency, "afterok:6(unfulfilled)"));
  CHECK(view.association_id == 12 && !strcmp(view.qos, "gpu2"));
  CHECK(!strcmp(view.licenses, "matlab:1,fluent:2"));
  slurm_round_job_free(&view);
  job.time_limit = INFINITE;
  CHECK(slurm_round_job(&job, NULL, &defaults, &view) == 0);
  CHECK(view.time_limit_min == 0);
  slurm_round_job_free(&view);

  memset(&resv, 0, sizeof(resv));
  resv.name = "maint";
  resv.node_list = "n[3-4]";
  resv.start_time = 100;
  resv.end_time = 200;
  resv.flags = RESERVE_FLAG_MAINT;
  resv.licenses = "lic:1";
  CHECK(slurm_round_reservation(&resv, &resv_view) == 0);
  CHECK(!strcmp(resv_view.name, "maint") && has_names(resv_view.nodes, reserved, 2));
  CHECK(resv_view.start_time == 100 && resv_view.end_time == 200 && resv_view.maintenance);
  CHECK(!strcmp(resv_view.licenses, "lic:1"));
  slurm_round_reservation_free(&resv_view);

  tres = slurm_round_tres_positions(tres_names, 4);
  CHECK(tres.cpu == 0 && tres.mem == 1 && tres.node == 2 && tres.gpu == 3);
  CHECK(slurm_round_tres_positions(tres_names, 3).gpu == -1);
  memset(&qos, 0, sizeof(qos));
  memset(&qos_usage, 0, sizeof(qos_usage));
  memset(&user_usage, 0, sizeof(user_usage));
  qos.name = "gpu2";
  qos.grp_tres_ctld = qos_grp;
  qos.max_tres_pu_ctld = qos_user;
  qos.max_tres_pj_ctld = none;
  qos.grp_jobs = INFINITE;
  qos.max_jobs_pu = 3;
  qos.usage = &qos_usage;
  qos_usage.grp_used_tres = used;
  qos_usage.grp_used_jobs = 4;
  user_usage.uid = 1000;
  user_usage.jobs = 1;
  user_usage.tres = user_used;
  qos_usage.user_limit_list = slurm_list_create(NULL);
  slurm_list_append(qos_usage.user_limit_list, &user_usage);
  memset(&account_usage, 0, sizeof(account_usage));
  account_usage.acct = "acct1";
  account_usage.jobs = 2;
  account_usage.tres = user_used;
  qos_usage.acct_limit_list = slurm_list_create(NULL);
  slurm_list_append(qos_usage.acct_limit_list, &account_usage);
  qos.max_tres_pa_ctld = qos_user;
  qos.max_jobs_pa = 5;
  CHECK(slurm_round_qos(&qos, &tres, &qos_view) == 0);
  CHECK(qos_view.max_gpus_per_account == 2 && qos_view.max_cpus_per_account == 8);
  CHECK(qos_view.max_nodes_per_account == 1 && qos_view.max_jobs_per_account == 5);
  CHECK(qos_view.account_count == 1 && !strcmp(qos_view.accounts[0].account, "acct1"));
  CHECK(qos_view.accounts[0].gpus_used == 2 && qos_view.accounts[0].jobs_used == 2);
  CHECK(!strcmp(qos_view.name, "gpu2"));
  CHECK(qos_view.grp_gpus == 16 && qos_view.max_gpus_per_user == 2);
  CHECK(qos_view.max_gpus_per_job == -1 && qos_view.grp_jobs == -1);
  CHECK(qos_view.max_jobs_per_user == 3);
  CHECK(qos_view.gpus_used == 5 && qos_view.jobs_used == 4);
  CHECK(qos_view.user_count == 1 && qos_view.users[0].user_id == 1000);
  CHECK(qos_view.users[0].gpus_used == 2 && qos_view.users[0].jobs_used == 1);
  CHECK(qos_view.grp_cpus == -1 && qos_view.grp_memory_mb == 64000);
  CHECK(qos_view.max_cpus_per_user == 8 && qos_view.max_memory_mb_per_user == -1);
  CHECK(qos_view.max_cpus_per_job == -1 && qos_view.max_nodes_per_job == -1);
  CHECK(qos_view.cpus_used == 4 && qos_view.memory_mb_used == 900 && qos_view.nodes_used == 1);
  CHECK(qos_view.grp_nodes == -1 && qos_view.max_nodes_per_user == 1);
  CHECK(qos_view.users[0].cpus_used == 1 && qos_view.users[0].memory_mb_used == 300);
  slurm_round_qos_free(&qos_view);
  CHECK(slurm_round_qos(&qos, &no_tres, &qos_view) == 0); /* no TRES counted: no limits */
  CHECK(qos_view.grp_gpus == -1 && qos_view.users[0].gpus_used == 0);
  CHECK(qos_view.grp_memory_mb == -1 && qos_view.users[0].cpus_used == 0);
  slurm_round_qos_free(&qos_view);
  slurm_list_destroy(qos_usage.user_limit_list);
  slurm_list_destroy(qos_usage.acct_limit_list);

  memset(&assoc, 0, sizeof(assoc));
  memset(&assoc_usage, 0, sizeof(assoc_usage));
  assoc.id = 12;
  assoc.parent_id = 2;
  assoc.acct = "acct1";
  assoc.user = "alice";
  assoc.grp_tres_ctld = qos_grp;
  assoc.max_tres_ctld = qos_user;
  assoc.grp_jobs = NO_VAL;
  assoc.max_jobs = 1;
  assoc.usage = &assoc_usage;
  assoc_usage.grp_used_tres = used;
  assoc_usage.used_jobs = 1;
  slurm_round_association(&assoc, &tres, &assoc_view);
  CHECK(assoc_view.id == 12 && assoc_view.parent_id == 2);
  CHECK(!strcmp(assoc_view.account, "acct1") && !strcmp(assoc_view.user, "alice"));
  CHECK(assoc_view.grp_gpus == 16 && assoc_view.max_gpus_per_job == 2);
  CHECK(assoc_view.grp_jobs == -1 && assoc_view.max_jobs == 1);
  CHECK(assoc_view.gpus_used == 5 && assoc_view.jobs_used == 1);
  CHECK(assoc_view.grp_memory_mb == 64000 && assoc_view.max_cpus_per_job == 8);
  CHECK(assoc_view.max_nodes_per_job == 1 && assoc_view.max_memory_mb_per_job == -1);
  CHECK(assoc_view.cpus_used == 4 && assoc_view.memory_mb_used == 900);
}

static void test_nodes_registered(void)
{
  node_info_t node_array[3];
  node_info_msg_t nodes = {.record_count = 3, .node_array = node_array};

  memset(node_array, 0, sizeof(node_array));
  node_array[0].name = "n1";
  node_array[0].node_state = NODE_STATE_IDLE;
  node_array[0].slurmd_start_time = 1000;
  node_array[1].name = "n2";
  node_array[1].node_state = NODE_STATE_DOWN | NODE_STATE_NO_RESPOND; /* never mind it */
  node_array[2].name = "n3";
  node_array[2].node_state = NODE_STATE_UNKNOWN; /* fresh start: not usable anyway */
  CHECK(slurm_round_nodes_registered(&nodes));
  /* Restored from saved state after a restart, its slurmd not registered again yet. */
  node_array[2].node_state = NODE_STATE_MIXED | NODE_STATE_COMPLETING;
  CHECK(!slurm_round_nodes_registered(&nodes));
  node_array[2].slurmd_start_time = 2000;
  CHECK(slurm_round_nodes_registered(&nodes));
  nodes.record_count = 0;
  CHECK(slurm_round_nodes_registered(&nodes));
}

static void test_event_job(void)
{
  slurm_job_info_t job;
  pollux_event_job_t brief;

  memset(&job, 0, sizeof(job));
  job.job_id = 9;
  job.job_state = JOB_PENDING | JOB_COMPLETING | JOB_REQUEUE; /* requeued, still releasing */
  job.comment = "adaptive:max_gpus=8";
  job.restart_cnt = 2;
  slurm_round_event_job(&job, &brief);
  CHECK(brief.job_id == 9 && brief.state == POLLUX_JOB_PENDING && brief.completing);
  CHECK(brief.restarts == 2 && brief.comment == job.comment);
  job.job_state = JOB_SUSPENDED;
  slurm_round_event_job(&job, &brief);
  CHECK(brief.state == POLLUX_JOB_RUNNING && !brief.completing);
  job.job_state = JOB_RUNNING;
  job.comment = NULL;
  slurm_round_event_job(&job, &brief);
  CHECK(brief.state == POLLUX_JOB_RUNNING && brief.comment == NULL);
  job.job_state = JOB_COMPLETE;
  slurm_round_event_job(&job, &brief);
  CHECK(brief.state == POLLUX_JOB_OTHER && !brief.completing);
}

static void test_event_state(void)
{
  pollux_event_state_t brief;

  slurm_round_event_state(9, JOB_PENDING | JOB_COMPLETING, &brief);
  CHECK(brief.job_id == 9 && brief.state == POLLUX_JOB_PENDING && brief.completing);
  slurm_round_event_state(9, JOB_SUSPENDED, &brief);
  CHECK(brief.state == POLLUX_JOB_RUNNING && !brief.completing);
  slurm_round_event_state(9, JOB_CANCELLED, &brief);
  CHECK(brief.state == POLLUX_JOB_OTHER);
}

static void test_job_needed(void)
{
  slurm_job_info_t job;

  memset(&job, 0, sizeof(job));
  job.job_state = JOB_COMPLETE;
  CHECK(!slurm_round_job_needed(&job)); /* an ended rigid job */
  job.comment = "a note";
  CHECK(!slurm_round_job_needed(&job));
  job.comment = "adaptive:max_gpus=8";
  CHECK(slurm_round_job_needed(&job)); /* ended adaptive jobs: their records end with them */
  job.comment = NULL;
  job.job_state = JOB_FAILED | JOB_COMPLETING;
  CHECK(slurm_round_job_needed(&job)); /* still releasing its nodes */
  job.job_state = JOB_NODE_FAIL;
  CHECK(!slurm_round_job_needed(&job));
  for (uint32_t state = JOB_PENDING; state <= JOB_SUSPENDED; state++) {
    job.job_state = state;
    CHECK(slurm_round_job_needed(&job));
  }
}

int main(void)
{
  test_node();
  test_partition();
  test_job();
  test_site_policy();
  test_license();
  test_nodes_registered();
  test_event_job();
  test_event_state();
  test_job_needed();
  return check_summary("slurm_round_test");
}
