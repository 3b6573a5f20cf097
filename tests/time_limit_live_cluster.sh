#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A job whose GPUs are all in parts (sbatch --comment=adaptive:resize=live) stopped with a
# checkpoint by shortening its time limit, on the real test cluster with sched/pollux:
# examples/train_ddp.py (the pollux package, CPU/gloo) under `pollux-agent --launch
# --grace 10`, 2 fake GPUs a node. Slurm's SIGTERM at the limit would reach the srun of its
# part in the job's batch script, which ends its step with SIGKILL; so the launcher has the
# training checkpoint in its part 40 s (the grace and 30 s) ahead of the limit, through Slurm
# (scancel --signal=TERM of the part's steps). The checkpoint is written, the part ends, and
# the job ends at its limit: TIMEOUT, Restarts 0, no part of it or its workers left.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/cluster/lib.sh"
use_ddp_example
setup_test_cluster time-limit-live

step "start a cluster with sched/pollux, 2 fake GPUs per node"
CLUSTER_GPUS_PER_NODE=2 start_pollux_cluster
write_ddp_launch_script 10

step "a job without a time limit, its GPUs in parts, trains in its first part"
job=$(sbatch --parsable --comment=adaptive:resize=live,gpu_type=a100,min_gpus=2,max_gpus=2 \
  -o "$run/job-%j.out" ddp_launch.sh 100000)
has_running_part() { part=$(running_parts_of "$job"); [ -n "$part" ]; }
wait_until 90 "job $job's first part running" has_running_part
show_part "$part"
wait_until 90 "job $job training" grep -q "^epoch 1:" "job-$job.out"

step "its time limit shortened: its training checkpoints in its part, which ends"
# The limit in whole minutes since its start, 40 to 100 s from now.
ran=$(job_field "$job" RunTime | awk -F: '{ print $1 * 3600 + $2 * 60 + $3 }')
limit=$(((ran + 40 + 59) / 60))
scontrol update JobId="$job" TimeLimit="$limit"
echo "   run for $ran s: TimeLimit=$limit"
checkpointed() { grep -q "^checkpointed at" "job-$job.out"; }
wait_until 120 "job $job's training checkpointed" checkpointed
[ -s "ddp-$job.pt" ] || fail "no checkpoint ddp-$job.pt of job $job's training"
wait_until 30 "no part of job $job left" sh -c \
  "[ -z \"\$(squeue -h -o '%k' | grep -x 'adaptive:part_of=$job')\" ]"
is_running "$job" || fail "job $job ended before its limit: $(job_field "$job" JobState)"

step "the job ends at its limit: TIMEOUT, Restarts 0"
wait_until 120 "job $job ended" all_finished "$job"
grep -e "time limit is due" -e "^checkpointed at" -e "checkpointed ahead of" "job-$job.out" |
  sed 's/^/   /'
grep -q "checkpointed ahead of the job's time limit" "job-$job.out" ||
  fail "job $job's launcher did not wait for its limit"
state=$(job_field "$job" JobState)
[ "$state" = TIMEOUT ] || { tail -20 "job-$job.out"; fail "job $job ended $state"; }
[ "$(job_field "$job" Restarts)" = 0 ] || fail "job $job was requeued"
wait_until 60 "its workers gone" has_no_workers "$job"
echo "PASS"
