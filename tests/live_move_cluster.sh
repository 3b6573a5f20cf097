#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A job whose GPUs are all in parts (sbatch --comment=adaptive:resize=live) grows by a live
# move to a node with more GPUs for it, on the real test cluster with sched/pollux:
# examples/train_ddp.py (the pollux package, CPU/gloo) under `pollux-agent --launch`, one
# worker per fake GPU, 2 GPUs a node. Rigid jobs hold the v100 nodes, n2 and one GPU of n1:
# the job trains in a part with 1 GPU on n1. Its minimum raised to 2 GPUs once n2 is free,
# and no room to double on n1, it moves live to n2 with 2 GPUs: a part there joins with a
# worker for each of its GPUs (1 -> 3 workers), its first part's worker leaves (3 -> 2) and
# that part ends as soon as it has; no checkpoint, Restarts 0, and scontrol show pollux shows
# the job on n2 with both GPUs there and the start-up its joiners took. Then it moves live
# to another GPU type: asked for v100 once n3 is free, a part with n3's 2 v100 GPUs joins
# (2 -> 4 workers) and its part on n2 leaves (4 -> 2), Restarts 0 still. It is cancelled:
# nothing of it is left.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/cluster/lib.sh"
use_ddp_example
setup_test_cluster live-move

step "start a cluster with sched/pollux, 2 fake GPUs and 4 CPUs per node"
# On n1 a task for the job's home, one for its part and one for a rigid job.
CLUSTER_GPUS_PER_NODE=2 CLUSTER_CPUS_PER_NODE=4 POLLUX_TEST_PARAMS=pollux_objective=goodput \
  start_pollux_cluster
write_ddp_launch_script

step "rigid jobs leave one GPU of n1: the job trains there in a part with 1 GPU"
blockers=
for node in n2 n3 n4; do
  blockers="$blockers $(sbatch --parsable -w $node --gres=gpu:2 -o /dev/null --wrap "sleep 900")"
done
set -- $blockers
on_n2=$1
on_n3=$2
n1_one=$(sbatch --parsable -w n1 --gres=gpu:1 -o /dev/null --wrap "sleep 900")
for blocker in $blockers $n1_one; do
  wait_until 60 "rigid job $blocker running" is_running "$blocker"
done
needs() {  # needs GPUS [TYPE]
  scontrol update JobId="$job" \
    Comment="adaptive:resize=live,gpu_type=${2:-a100},min_gpus=$1,max_gpus=$1"
}
job=$(sbatch --parsable --comment=adaptive:resize=live,gpu_type=a100,min_gpus=1,max_gpus=1 \
  -o "$run/job-%j.out" ddp_launch.sh 8000)
has_running_part() { part=$(running_parts_of "$job"); [ -n "$part" ]; }
wait_until 90 "job $job's first part running" has_running_part
first_part=$part
show_part "$first_part"
[ "$(job_field "$first_part" NodeList)" = n1 ] || fail "part $first_part is not on n1"
wait_until 90 "job $job training" grep -q "^epoch 1:" "job-$job.out"
wait_until 60 "job $job reported" grep -q "pollux-agent\[$first_part\.0\]: report accepted" \
  "job-$job.out"

# moves_live_to NODE TYPE OLD_PART BEFORE JOINED: the job's Nth live move (N the moves so
# far) takes it to a part with TYPE's 2 GPUs on NODE: BEFORE -> JOINED workers once that
# part's joined, then OLD_PART's leave (back to 2) and OLD_PART ends; no checkpoint, Restarts
# 0, and scontrol show pollux shows it on NODE with the start-up its joiners took, which the
# policy charges its next growth or move.
moves=0
moves_live_to() {
  node=$1 type=$2 old_part=$3
  moves=$((moves + 1))
  only_on_node() {
    parts=$(running_parts_of "$job")
    [ -n "$parts" ] && [ "$(for p in $parts; do job_field "$p" NodeList; done)" = "$node" ]
  }
  wait_until 180 "job $job moved live to $node" only_on_node
  started="start: live move of JobId=$job: part on $node"
  grep "sched/pollux: JobId=[0-9]* $started" log/slurmctld.log | sed 's/.*sched\/pollux: /   /'
  [ "$(grep -c "start: live move of JobId=$job" log/slurmctld.log)" = $moves ] ||
    fail "job $job did not move to $node by a live move"
  part=$(running_parts_of "$job")
  show_part "$part"
  job_field "$part" TresPerNode | grep -Eq "gpu(:$type)?[:=]2$" ||
    fail "part $part does not hold 2 $type GPUs: $(job_field "$part" TresPerNode)"
  wait_until 30 "its new part's workers joined live" changed_live "$job" "$4" "$5"
  wait_until 30 "its old part's workers gone live" changed_live "$job" "$5" 2
  left="JobId=$old_part cancel: live shrink of JobId=$job: its part on .* ends, its workers left"
  grep "$left" log/slurmctld.log | sed 's/.*sched\/pollux: /   /'
  grep -q "$left" log/slurmctld.log || fail "part $old_part was not ended as its workers left"
  moved() { [ "$(grep -c "JobId=$job moved live" log/slurmctld.log)" = $moves ]; }
  wait_until 30 "the move of job $job to $node done" moved
  ! grep -q "^checkpointed at" "job-$job.out" || fail "job $job checkpointed to move"
  is_running "$job" || fail "job $job ended in its move: $(job_field "$job" JobState)"
  [ "$(job_field "$job" Restarts)" = 0 ] || fail "job $job was requeued to move"
  shows_node() {
    "$build/src/cli/scontrol" show pollux "job=$job" > pollux-job.txt &&
      grep -qF "Allocation=2x$type($node:2)" pollux-job.txt &&
      grep -q " JoinStartupS=" pollux-job.txt
  }
  wait_until 30 "scontrol show pollux shows job $job with 2 $type GPUs on $node" shows_node
  grep "workers joined .* s after it ran" "job-$job.out" | tail -n 1 | sed 's/^/   /'
  sed 's/^/   /' pollux-job.txt
}

step "n2 freed and 2 GPUs needed: it moves live to n2, its part there holding both"
scancel "$on_n2"
wait_until 60 "rigid job $on_n2 gone" all_finished "$on_n2"
needs 2
moves_live_to n2 a100 "$first_part" 1 3

step "n3 freed and v100 asked for: it moves live to n3, another GPU type"
scancel "$on_n3"
wait_until 60 "rigid job $on_n3 gone" all_finished "$on_n3"
needs 2 v100
moves_live_to n3 v100 "$part" 2 4

step "scancel of the job ends it, its part and its workers"
cancel_with_parts "$job"
scancel $blockers $n1_one
echo "PASS"
