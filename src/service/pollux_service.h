/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one interface between the sched/pollux C shim (Slurm's ABI, its thread, its RPCs)
 * and the C++ service (REST endpoint, job models, policy rounds, saved state).
 * Handles are opaque; no function here lets a C++ exception escape. Every function takes a
 * NULL handle and then does nothing, returning what it returns on an error. A round goes in
 * as one value (pollux_round_t) and one plan comes out (pollux_plan_t), with the -1/errno
 * contract of flux-sched's planner.h.
 */
#ifndef POLLUX_SERVICE_H
#define POLLUX_SERVICE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pollux_service pollux_service_t;

enum pollux_log_level { POLLUX_LOG_ERROR, POLLUX_LOG_INFO, POLLUX_LOG_DEBUG };
typedef void (*pollux_log_fn)(int level, const char *message);

/* Settings the shim reads from slurm.conf. */
typedef struct {
  const char *scheduler_parameters; /* SchedulerParameters, may be NULL */
  const char *pollux_conf_path;     /* pollux.conf beside slurm.conf; a missing file is fine */
  const char *state_dir;            /* StateSaveLocation */
  const char *auth_info;            /* AuthInfo (its socket= names munged's), may be NULL */
  uint32_t slurm_user_id;           /* SlurmUser: may report for and read any job */
  int private_jobs;                 /* PrivateData=jobs: users read only their own jobs */
  time_t slurmctld_started;         /* when slurmctld started and loaded the plugin (init,
                                     * not reconfig); 0 after a reconfigure's exec */
  pollux_log_fn log;                /* one call per log line */
} pollux_settings_t;

/* Parses the settings (bad keys fall back to defaults with one error line each) and restores
 * saved state. NULL only on an internal failure, which has been logged. */
pollux_service_t *pollux_service_create(const pollux_settings_t *settings);
/* Starts the REST endpoint; 0 on success, -1 (reason logged) if it cannot listen. */
int pollux_service_start_rest(pollux_service_t *service);
/* Stops the endpoint, saves state and frees everything. NULL is ignored. */
void pollux_service_destroy(pollux_service_t *service);
/* pollux_interval and pollux_event_delay, in seconds; their defaults on an error. */
int pollux_service_interval(const pollux_service_t *service);
int pollux_service_event_delay(const pollux_service_t *service);
/* pollux_placement_ms: how long a round may place jobs after its first placement (the shim
 * defers the later ones, POLLUX_ACTION_DEFERRED); its default on an error. */
int pollux_service_placement_ms(const pollux_service_t *service);
int pollux_service_hosts_backfill(const pollux_service_t *service); /* 1 (also on error): load
                                                                     * sched/backfill */

/* Names (of nodes, of partitions), as an array. */
typedef struct {
  const char *const *names;
  size_t count;
} pollux_names_t;

/* A pending adaptive job begins no earlier than this (2100-01-01) while Pollux holds it: its
 * begin time, not its priority, so that users' and admins' holds stay theirs and Slurm keeps
 * computing the job's priority. A begin time at or after it is Pollux's hold. */
#define POLLUX_HOLD_TIME ((time_t)4102444800)

/*
 * The fields of a job's and a node's view, each declared once, in the order of the structs:
 *   X(C type, name, kind, presence, JSON key, service member)
 * From these lists follow the structs below, pollux_service.cpp's conversion of a view into
 * the service's SlurmJob or SlurmNode (slurm_view.hpp; `service member` is one of SlurmJob's,
 * of its GpuRequest or of its ResourceRequest for the three lists of a job) and the job's or
 * node's object in a recorded round (round_json.cpp; a job's GPU and resource fields are its
 * "gpu_request" and "resources" objects). `kind` names the conversion (view_fields.hpp).
 * `presence` is how that JSON holds the field: Always (required, always written), Defaulted
 * (always written; its default in rounds recorded before the plugin read it) or Sparse
 * (written only when set; its default where absent). Strings may be NULL.
 */
/* clang-format off */
#define POLLUX_JOB_FIELDS(X)                                                                     \
  X(uint32_t,       job_id,          Id,     Always,    "job_id",          id)                   \
  X(uint32_t,       user_id,         Uint32, Always,    "user_id",         uid)                  \
  /* enum pollux_job_state */                                                                    \
  X(int,            state,           State,  Always,    "state",           state)                \
  /* priority 0: held by its user, an admin or Slurm */                                          \
  X(int,            held,            Flag,   Always,    "held",            held)                 \
  /* Slurm's priority (multifactor), 0 while held */                                             \
  X(uint32_t,       priority,        Uint32, Sparse,    "priority",        priority)             \
  /* why it pends, as squeue's Reason ("Resources", ...) */                                      \
  X(const char *,   state_reason,    Text,   Sparse,    "state_reason",    state_reason)         \
  X(time_t,         submit_time,     Time,   Always,    "submit_time",     submit_time)          \
  X(time_t,         start_time,      Time,   Always,    "start_time",      start_time)           \
  /* pending: when it may start (a requeue pushes this out; POLLUX_HOLD_TIME or later while    \
   * Pollux holds it) */                                                                         \
  X(time_t,         eligible_time,   Time,   Always,    "eligible_time",   eligible_time)        \
  /* --time in minutes, 0 if unlimited */                                                        \
  X(uint32_t,       time_limit_min,  Count,  Sparse,    "time_limit_min",  time_limit_min)       \
  /* finished jobs */                                                                            \
  X(time_t,         end_time,        Time,   Always,    "end_time",        end_time)             \
  /* finished as FAILED or NODE_FAIL, no longer completing */                                    \
  X(int,            failed,          Flag,   Always,    "failed",          failed)               \
  /* its last run still releases its nodes (a requeued job: PENDING) */                          \
  X(int,            completing,      Flag,   Defaulted, "completing",      completing)           \
  /* Slurm's restart count: requeues so far */                                                   \
  X(uint32_t,       restarts,        Uint32, Defaulted, "restarts",        restarts)             \
  X(const char *,   comment,         Text,   Sparse,    "comment",         comment)              \
  /* its partition, or those a pending job may run in */                                         \
  X(pollux_names_t, partitions,      Names,  Always,    "partitions",      partitions)           \
  /* allocated nodes */                                                                          \
  X(pollux_names_t, nodes,           Names,  Always,    "nodes",           nodes)                \
  /* node running the batch script (running jobs) */                                             \
  X(const char *,   batch_host,      Text,   Sparse,    "batch_host",      batch_host)           \
  /* ReqNodeList */                                                                              \
  X(pollux_names_t, requested_nodes, Names,  Always,    "requested_nodes", requested_nodes)      \
  /* ExcNodeList (--exclude) */                                                                  \
  X(pollux_names_t, excluded_nodes,  Names,  Sparse,    "excluded_nodes",  excluded_nodes)       \
  /* --constraint, e.g. "ib&nvlink" */                                                           \
  X(const char *,   features,        Text,   Sparse,    "features",        features)             \
  /* --reservation */                                                                            \
  X(const char *,   reservation,     Text,   Sparse,    "reservation",     reservation)          \
  /* unfulfilled dependencies, e.g. "afterok:6(unfulfilled)" */                                  \
  X(const char *,   dependency,      Text,   Sparse,    "dependency",      dependency)           \
  /* its association (user, account, partition), 0 if none */                                   \
  X(uint32_t,       association_id,  Uint32, Sparse,    "association_id",  association_id)       \
  /* its QOS */                                                                                  \
  X(const char *,   qos,             Text,   Sparse,    "qos",             qos)                  \
  /* --licenses as Slurm keeps it: "a:1,b:2", or "a:1|b:1" for any one of them */                \
  X(const char *,   licenses,        Text,   Sparse,    "licenses",        licenses)

/* The GPU request in each form Slurm takes, NULL where not given, and the counts those
 * multiply with; num_nodes is also the job's own (its "num_nodes", SlurmJob::num_nodes). */
#define POLLUX_JOB_GPU_FIELDS(X)                                                                 \
  /* --gres=gpu:a100:2, --gpus-per-node: "gres:gpu:a100:2" */                                    \
  X(const char *,   tres_per_node,    Text,  Sparse,    "per_node",         per_node)            \
  /* --gpus */                                                                                   \
  X(const char *,   tres_per_job,     Text,  Sparse,    "per_job",          per_job)             \
  /* --gpus-per-task */                                                                          \
  X(const char *,   tres_per_task,    Text,  Sparse,    "per_task",         per_task)            \
  /* --gpus-per-socket */                                                                        \
  X(const char *,   tres_per_socket,  Text,  Sparse,    "per_socket",       per_socket)          \
  X(uint32_t,       num_nodes,        Count, Always,    "nodes",            nodes)               \
  X(uint32_t,       num_tasks,        Count, Always,    "tasks",            tasks)               \
  /* --sockets-per-node, 0 if none */                                                            \
  X(int,            sockets_per_node, Count, Always,    "sockets_per_node", sockets_per_node)

/* CPUs and memory per node, Slurm's defaults applied. */
#define POLLUX_JOB_RESOURCE_FIELDS(X)                                                            \
  /* tasks per node x CPUs per task, at least */                                                 \
  X(int,          min_cpus_per_node,  Count,       Always,    "min_cpus_per_node",               \
    min_cpus_per_node)                                                                           \
  X(int,          cpus_per_task,      CpusPerTask, Always,    "cpus_per_task", cpus_per_task)    \
  /* --ntasks-per-node, 0 if none */                                                             \
  X(int,          ntasks_per_node,    Count,       Defaulted, "ntasks_per_node", ntasks_per_node)\
  /* --ntasks-per-gpu, 0 if none */                                                              \
  X(int,          ntasks_per_gpu,     Count,       Always,    "ntasks_per_gpu", ntasks_per_gpu)  \
  /* "gres:gpu:4" with --cpus-per-gpu */                                                         \
  X(const char *, cpus_per_tres,      Text,        Sparse,    "cpus_per_tres", cpus_per_tres)    \
  /* --mem or DefMemPerNode, 0 if none */                                                        \
  X(uint64_t,     memory_mb_per_node, Megabytes,   Always,    "memory_mb_per_node",              \
    memory_mb_per_node)                                                                          \
  /* --mem-per-cpu or DefMemPerCPU, 0 if none */                                                 \
  X(uint64_t,     memory_mb_per_cpu,  Megabytes,   Always,    "memory_mb_per_cpu",               \
    memory_mb_per_cpu)                                                                           \
  /* "gres:gpu:16000" with --mem-per-gpu (MB) */                                                 \
  X(const char *, mem_per_tres,       Text,        Sparse,    "mem_per_tres", mem_per_tres)      \
  /* the user gave --mem or --mem-per-cpu */                                                     \
  X(int,          memory_set,         Flag,        Always,    "memory_set", memory_set)          \
  /* DefCpuPerGPU and DefMemPerGPU (MB) of the job's partition or slurm.conf, 0 if unset:        \
   * select/cons_tres applies them where the job gave no --cpus-per-gpu, --mem-per-gpu. */       \
  X(uint64_t,     default_cpus_per_gpu, Count,     Always,    "default_cpus_per_gpu",            \
    default_cpus_per_gpu)                                                                        \
  X(uint64_t,     default_memory_mb_per_gpu, Megabytes, Always, "default_memory_mb_per_gpu",     \
    default_memory_mb_per_gpu)

#define POLLUX_NODE_FIELDS(X)                                                                    \
  X(const char *, name,           Text,            Always, "name",           name)               \
  /* e.g. "gpu:a100:4" */                                                                        \
  X(const char *, gres,           GpuGres,         Always, "gpus",           gpus)               \
  /* GPUs jobs hold, e.g. "gpu:a100:2(IDX:0-1)"; may be NULL */                                  \
  X(const char *, gres_used,      GpusUsed,        Always, "gpus_used",      gpus_used)          \
  /* up and not drained */                                                                       \
  X(int,          usable,         Flag,            Always, "usable",         usable)             \
  /* its slurmd has registered since slurmctld started */                                        \
  X(int,          registered,     Flag,            Always, "registered",     registered)         \
  /* CPUs no job holds (a node without any takes no job) */                                      \
  X(int,          free_cpus,      Count,           Always, "free_cpus",      free_cpus)          \
  /* RealMemory - MemSpecLimit; -1 if memory is not consumable */                                \
  X(int64_t,      memory_mb,      MegabytesOrNone, Sparse, "memory_mb",      memory_mb)          \
  /* of it, what no job holds; -1 if memory is not consumable */                                 \
  X(int64_t,      free_memory_mb, MegabytesOrNone, Sparse, "free_memory_mb", free_memory_mb)     \
  /* active features, e.g. "ib,nvlink"; may be NULL */                                           \
  X(const char *, features,       Features,        Sparse, "features",       features)
/* clang-format on */

/* A field of the lists above as a struct member. */
#define POLLUX_VIEW_MEMBER(type, name, kind, presence, key, member) type name;

/* Slurm's view of one job, as the shim loaded it. */
enum pollux_job_state { POLLUX_JOB_PENDING, POLLUX_JOB_RUNNING, POLLUX_JOB_OTHER };
typedef struct {
  POLLUX_JOB_FIELDS(POLLUX_VIEW_MEMBER)
  POLLUX_JOB_GPU_FIELDS(POLLUX_VIEW_MEMBER)
  POLLUX_JOB_RESOURCE_FIELDS(POLLUX_VIEW_MEMBER)
} pollux_job_view_t;

/* Slurm's view of one node. */
typedef struct {
  POLLUX_NODE_FIELDS(POLLUX_VIEW_MEMBER)
} pollux_node_view_t;

/* Slurm's view of one partition. */
typedef struct {
  const char *name;
  pollux_names_t nodes;
  uint32_t max_nodes;    /* MaxNodes per job, 0 if unlimited */
  uint32_t max_time_min; /* MaxTime in minutes, 0 if unlimited */
  const char *qos;       /* its QOS (QOS=), whose limits its jobs are under too; may be NULL */
} pollux_partition_view_t;

/* One of Slurm's advance reservations. */
typedef struct {
  const char *name;
  pollux_names_t nodes;
  time_t start_time;
  time_t end_time;
  int maintenance; /* Flags=MAINT */
  const char *licenses; /* licenses it holds, "a:1,b:2"; may be NULL */
} pollux_reservation_view_t;

/* One of the cluster's licenses (slurm.conf Licenses=, or remote ones of slurmdbd). */
typedef struct {
  const char *name;
  uint32_t available; /* not in use by jobs (Slurm's count) */
  uint32_t reserved;  /* held by reservations active now */
} pollux_license_view_t;

/* A QOS or association limit is -1 where none is set. GPUs are the TRES gres/gpu
 * (AccountingStorageTRES), CPUs the TRES cpu, memory the TRES mem (MB), nodes the TRES node;
 * "used" counts what Slurm charges running jobs. */
typedef struct {
  uint32_t user_id;
  int64_t gpus_used;  /* GPUs of the user's running jobs under the QOS */
  int64_t jobs_used;  /* the user's running jobs under the QOS */
  int64_t cpus_used;
  int64_t memory_mb_used;
  int64_t nodes_used;
} pollux_user_usage_t;

/* What Slurm charges one account's running jobs under a QOS (its MaxTRESPerAccount). */
typedef struct {
  const char *account;
  int64_t gpus_used;
  int64_t jobs_used;
  int64_t cpus_used;
  int64_t memory_mb_used;
  int64_t nodes_used;
} pollux_account_usage_t;

typedef struct {
  const char *name;
  int64_t grp_gpus;          /* GrpTRES=gres/gpu=N */
  int64_t max_gpus_per_user; /* MaxTRESPerUser=gres/gpu=N */
  int64_t max_gpus_per_job;  /* MaxTRESPerJob=gres/gpu=N */
  int64_t grp_jobs;          /* GrpJobs */
  int64_t max_jobs_per_user; /* MaxJobsPerUser */
  int64_t gpus_used;
  int64_t jobs_used;
  const pollux_user_usage_t *users;
  size_t user_count;
  int64_t grp_cpus;               /* GrpTRES=cpu=N */
  int64_t grp_memory_mb;          /* GrpTRES=mem=M */
  int64_t grp_nodes;              /* GrpTRES=node=N */
  int64_t max_cpus_per_user;      /* MaxTRESPerUser=cpu=N */
  int64_t max_memory_mb_per_user; /* MaxTRESPerUser=mem=M */
  int64_t max_nodes_per_user;     /* MaxTRESPerUser=node=N */
  int64_t max_cpus_per_job;       /* MaxTRESPerJob=cpu=N */
  int64_t max_memory_mb_per_job;  /* MaxTRESPerJob=mem=M */
  int64_t max_nodes_per_job;      /* MaxTRESPerJob=node=N */
  int64_t cpus_used;
  int64_t memory_mb_used;
  int64_t nodes_used;
  int64_t max_gpus_per_account;      /* MaxTRESPerAccount=gres/gpu=N */
  int64_t max_cpus_per_account;      /* MaxTRESPerAccount=cpu=N */
  int64_t max_memory_mb_per_account; /* MaxTRESPerAccount=mem=M */
  int64_t max_nodes_per_account;     /* MaxTRESPerAccount=node=N */
  int64_t max_jobs_per_account;      /* MaxJobsPerAccount */
  const pollux_account_usage_t *accounts;
  size_t account_count;
} pollux_qos_view_t;

typedef struct {
  uint32_t id;
  uint32_t parent_id;        /* its parent account's association; 0 for the root */
  const char *account;
  const char *user;          /* NULL for an account's own association */
  int64_t grp_gpus;          /* GrpTRES=gres/gpu=N, over its whole sub-tree */
  int64_t max_gpus_per_job;  /* MaxTRES=gres/gpu=N */
  int64_t grp_jobs;          /* GrpJobs, over its sub-tree */
  int64_t max_jobs;          /* MaxJobs */
  int64_t gpus_used;         /* by running jobs of its sub-tree */
  int64_t jobs_used;         /* running jobs of its sub-tree */
  int64_t grp_cpus;              /* GrpTRES=cpu=N, over its sub-tree */
  int64_t grp_memory_mb;         /* GrpTRES=mem=M, over its sub-tree */
  int64_t grp_nodes;             /* GrpTRES=node=N, over its sub-tree */
  int64_t max_cpus_per_job;      /* MaxTRES=cpu=N */
  int64_t max_memory_mb_per_job; /* MaxTRES=mem=M */
  int64_t max_nodes_per_job;     /* MaxTRES=node=N */
  int64_t cpus_used;             /* by running jobs of its sub-tree */
  int64_t memory_mb_used;
  int64_t nodes_used;
} pollux_association_view_t;

/* Everything a scheduling round reads from Slurm, at one time. */
typedef struct {
  time_t now;
  const pollux_node_view_t *nodes;
  size_t node_count;
  const pollux_partition_view_t *partitions;
  size_t partition_count;
  const pollux_job_view_t *jobs; /* all but rigid jobs that have ended and released their
                                  * nodes (the shim leaves those out) */
  size_t job_count;
  const pollux_reservation_view_t *reservations;
  size_t reservation_count;
  const pollux_license_view_t *licenses;
  size_t license_count;
  /* Where AccountingStorageEnforce has limits or qos (else empty): */
  const pollux_qos_view_t *qos;
  size_t qos_count;
  const pollux_association_view_t *associations;
  size_t association_count;
} pollux_round_t;

/* What the shim must do to one job. */
enum pollux_action_kind {
  POLLUX_ACTION_HOLD,    /* keep a pending adaptive job from starting until it is placed
                          * (its begin time set to POLLUX_HOLD_TIME; its priority and any
                          * hold of its user's or an admin's are left as they are) */
  POLLUX_ACTION_START,   /* pending job: set size, GPUs and nodes, begin now */
  POLLUX_ACTION_REQUEUE, /* running job: requeue, then as START (or HOLD if no nodes) */
  POLLUX_ACTION_SHRINK,  /* running job: SIGTERM to its steps (not the batch script), whose
                          * checkpoint lets `pollux-agent --launch` shrink the job to
                          * node_list and start its step again there */
  POLLUX_ACTION_SHRINK_LIVE, /* running job whose trainer changes its world size live: nothing
                              * to send; its rank-0 agent has the workers on the nodes not in
                              * node_list leave and shrinks the job to node_list itself */
  POLLUX_ACTION_CANCEL,      /* a part of an adaptive job (comment adaptive:part_of=J): cancel
                              * it, as scancel would; its workers' loss is a live shrink */
  POLLUX_ACTION_CHECKPOINT   /* a running part of a job whose GPUs are all in parts: SIGTERM
                              * to its steps (not its batch script), whose lead checkpoints
                              * the training; the job's launcher then cancels its parts */
};
typedef struct {
  uint32_t job_id;
  int kind;                  /* enum pollux_action_kind */
  uint32_t num_nodes;
  const char *tres_per_node; /* "gres:gpu:N": untyped, the nodes decide the GPU type */
  const char *node_list;     /* "n1,n2" */
  /* START and REQUEUE with nodes: the job's task count on them (--ntasks-per-node, else 1,
   * per node) and its minimum CPUs (tasks x CPUs per task), which Slurm raises when a job
   * gains nodes but never lowers; 0: left as Slurm has them (--ntasks-per-gpu). */
  uint32_t num_tasks;
  uint32_t min_cpus;
  const char *admin_comment; /* status for scontrol show job */
  /* START and REQUEUE: also release the hold Slurm set when it found an earlier placement
   * unusable (Reason=BadConstraints); no other hold is ever released. */
  int release;
  /* REQUEUE: the time limit (minutes) its next run gets, the training time the job has left
   * plus its restart, so requeues neither extend nor cut its --time; 0: left as it is. */
  uint32_t time_limit_min;
  /* Set by the shim once it has acted: 0, Slurm's error code and its text, or
   * POLLUX_ACTION_DEFERRED (error_text NULL). */
  int error_code;
  const char *error_text;
} pollux_action_t;

/* An action's error_code when the shim left it for the next round: a placement (START or
 * REQUEUE) once the round's time for placements was spent, so that a round of many starts
 * does not hold slurmctld's attention for seconds. The job is left as it was; the next round
 * (an event round: the job is new work) decides it again. */
#define POLLUX_ACTION_DEFERRED (-1)

/* The service's answer to a round: actions to carry out in order. */
typedef struct {
  pollux_action_t *actions;
  size_t action_count;
} pollux_plan_t;

/*
 * Decides one round. Returns 0 and sets *plan, which the shim carries out and then hands to
 * pollux_plan_finish(); or returns -1 and sets errno:
 *   EINVAL  service, round or plan is NULL, or an array of the round is NULL with a count;
 *   ENOMEM  out of memory;
 *   EIO     the policy failed: nothing changes this round (the reason is logged and shown by
 *           `scontrol show pollux`; the round is ended, there is no plan to finish).
 * The round is only read during the call.
 */
int pollux_service_plan(pollux_service_t *service, const pollux_round_t *round,
                        pollux_plan_t **plan);

/* Records each action's outcome (its error_code and error_text), publishes the round for
 * the status, saves state (after a round that acted, else once per pollux_interval) and
 * frees the plan (also when service is NULL). Returns 0, or -1 with
 * errno EINVAL (NULL service or plan) or EIO (an internal failure, logged). */
int pollux_plan_finish(pollux_service_t *service, pollux_plan_t *plan);

/* What the service's part of the last round cost, for the shim's line per round. */
typedef struct {
  double solve_ms;      /* the policy's solver, within pollux_service_plan() */
  double save_ms;       /* writing the state file, within pollux_plan_finish() */
  uint64_t state_bytes; /* the state file's size; 0 if not saved */
} pollux_round_costs_t;
/* 0, or -1 with errno EINVAL (NULL service or costs); *costs is zeroed on an error. */
int pollux_service_round_costs(const pollux_service_t *service, pollux_round_costs_t *costs);

/*
 * Event rounds (pollux_event_delay): new work (a pending adaptive job the last round did not
 * see so, a job requeued since by its user or Slurm, a job the round requeued to restart once
 * its last run is done, a job that ended while adaptive work waits or that was adaptive)
 * starts a round before the next regular one; the rules are event_rounds.hpp's. The handle
 * remembers what the last round saw and did, and keeps the clock: times are milliseconds of
 * a monotonic clock; the settings come from `service` (their defaults if it is NULL). It
 * outlives the service, which a reconfigure replaces. A NULL handle does nothing.
 */
typedef struct pollux_events pollux_events_t;

/* What a look for new work needs of one of Slurm's jobs. */
typedef struct {
  uint32_t job_id;
  int state;           /* enum pollux_job_state; POLLUX_JOB_RUNNING also when suspended */
  int completing;      /* still releasing its nodes */
  uint32_t restarts;   /* Slurm's restart count: requeues so far */
  const char *comment; /* may be NULL */
} pollux_event_job_t;

/* A job's state alone, as slurm_load_job_state() (Slurm 23.02 on) gives it. */
typedef struct {
  uint32_t job_id;
  int state;      /* enum pollux_job_state; POLLUX_JOB_RUNNING also when suspended */
  int completing; /* still releasing its nodes */
} pollux_event_state_t;

enum pollux_due {
  POLLUX_DUE_NOTHING,
  POLLUX_DUE_CHECK,       /* look for new work, then pollux_events_checked() */
  POLLUX_DUE_EVENT_ROUND, /* run a round for the new work found, then pollux_events_ran() */
  POLLUX_DUE_ROUND        /* run a regular round, then pollux_events_ran() */
};

/* No round yet: every pending adaptive job is new work. NULL when out of memory. */
pollux_events_t *pollux_events_create(const pollux_service_t *service, int64_t now_ms);
void pollux_events_destroy(pollux_events_t *events);
/* The time at which something becomes due (now_ms's clock); INT64_MAX for a NULL handle. */
int64_t pollux_events_wake(const pollux_events_t *events, const pollux_service_t *service);
/* What is due at `now_ms` (enum pollux_due); a regular round first. */
int pollux_events_due(const pollux_events_t *events, const pollux_service_t *service,
                      int64_t now_ms);
/* 1 when `jobs` (every job's record, loaded now) show new work since the recorded round, with
 * a one-line reason for the log ("JobId=N ...") in `reason`; 0 when they do not; -1 with
 * errno (EINVAL, ENOMEM). The handle keeps what they show of each job. */
int pollux_events_new_work(pollux_events_t *events, const pollux_event_job_t *jobs,
                           size_t count, char *reason, size_t reason_size);
/* The same from every job's state alone (a cheaper query than every record) and what the
 * records loaded (a round's, pollux_events_new_work's or pollux_events_learn's) showed of
 * each job: 1 and 0 as above; 2 when the states cannot tell (a job no record showed, or one
 * pending again since: requeued): then load those jobs' records
 * (pollux_events_records_needed) for pollux_events_learn and ask again, or every record for
 * pollux_events_new_work; -1 with errno. */
int pollux_events_new_work_from_states(pollux_events_t *events,
                                       const pollux_event_state_t *states, size_t count,
                                       char *reason, size_t reason_size);
/* How many jobs' records the last pollux_events_new_work_from_states that returned 2
 * needed; the first `capacity` of their ids are written to `ids`. 0 for a NULL handle. */
size_t pollux_events_records_needed(const pollux_events_t *events, uint32_t *ids,
                                    size_t capacity);
/* Keeps what some jobs' records, loaded one by one, show (the others' are kept as they
 * were). 0, or -1 with errno (EINVAL, ENOMEM). */
int pollux_events_learn(pollux_events_t *events, const pollux_event_job_t *jobs, size_t count);
/* A look for new work at `now_ms` found some (`found` non-zero: what the last
 * pollux_events_new_work* call found) or none. */
void pollux_events_checked(pollux_events_t *events, const pollux_service_t *service,
                           int64_t now_ms, int found);
/* Remembers the jobs a round loaded and what its plan (carried out: each action's error_code
 * set; NULL if none) did to them. 0, or -1 with errno (EINVAL, ENOMEM: the memory is then
 * emptied, and every pending adaptive job looks new: one more round at most). */
int pollux_events_record_round(pollux_events_t *events, const pollux_event_job_t *jobs,
                               size_t count, const pollux_plan_t *plan);
/* A round of either kind ran from `started_ms` to `ended_ms`: the delay and the interval
 * count from its end. After rounds for ended jobs alone whose plans Slurm took no action of
 * (pollux_events_record_round), the next such round waits 2, 4, 8, then 16 delays; an event
 * round waits nine times as long as the last round took (at most four delays). */
void pollux_events_ran(pollux_events_t *events, const pollux_service_t *service,
                       int64_t started_ms, int64_t ended_ms);

#ifdef __cplusplus
}
#endif

#endif /* POLLUX_SERVICE_H */
