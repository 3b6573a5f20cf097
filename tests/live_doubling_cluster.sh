#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A job that holds a part doubles its GPUs on its node live through a second part, on the real
# test cluster with sched/pollux: examples/train_ddp.py (the pollux package, CPU/gloo) under
# `pollux-agent --launch`, one worker per fake GPU, 4 GPUs a node. Rigid jobs hold every node
# but one GPU of n1, where the job starts with one worker; it grows live to 2 workers through
# a part on n1, then to 4 through a second part on n1 with 2 GPUs (the first keeps running):
# the job stays RUNNING with Restarts 0 and its first worker keeps its process id. A rigid job
# needing 2 GPUs of n1 shrinks it live off that newest part; it is cancelled: nothing of it or
# its parts is left running or pending.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/cluster/lib.sh"
use_ddp_example
setup_test_cluster live-doubling

step "start a cluster with sched/pollux, 4 fake GPUs and 4 CPUs per node"
# A task on n1 for the job, one for each of its parts, and one for a rigid job.
CLUSTER_GPUS_PER_NODE=4 CLUSTER_CPUS_PER_NODE=4 POLLUX_TEST_PARAMS=pollux_objective=goodput \
  start_pollux_cluster
write_ddp_launch_script

step "rigid jobs leave one GPU of n1: the job starts there with one worker"
holders=
for node in n2 n3 n4; do
  holders="$holders $(sbatch --parsable -w $node --gres=gpu:4 -o /dev/null --wrap "sleep 900")"
done
# Two GPUs of n1 held until the second growth, one until the first.
n1_two=$(sbatch --parsable -w n1 --gres=gpu:2 -o /dev/null --wrap "sleep 900")
n1_one=$(sbatch --parsable -w n1 --gres=gpu:1 -o /dev/null --wrap "sleep 900")
for holder in $holders $n1_two $n1_one; do
  wait_until 60 "rigid job $holder running" is_running "$holder"
done
job=$(sbatch --parsable --comment=adaptive:gpu_type=a100,min_gpus=1,max_gpus=4 \
  -o "$run/job-%j.out" ddp_launch.sh 8000)
wait_until 60 "job $job running on n1" runs_on "$job" n1
wait_until 90 "job $job training" grep -q "^epoch 1:" "job-$job.out"
# Its agent's report tells the plugin that its workers can join it live.
wait_until 60 "job $job reported" grep -q "report accepted" "job-$job.out"
first=$(workers_of "$job")
# Its minimum raised at each step: the goodput policy's own choice would wait for its model.
at_least() {  # at_least GPUS
  scontrol update JobId="$job" Comment="adaptive:gpu_type=a100,min_gpus=$1,max_gpus=4"
}

step "it doubles live on n1 through a part, then again through a second part"
scancel "$n1_one"
at_least 2
wait_until 180 "job $job grown live to 2 workers" changed_live "$job" 1 2
first_part=$(running_parts_of "$job")
show_part "$first_part"
[ "$(job_field "$first_part" NodeList)" = n1 ] || fail "part $first_part is not on n1"
scancel "$n1_two"
at_least 4
wait_until 180 "job $job grown live to 4 workers through a second part" changed_live "$job" 2 4
# A report since the growth, so that the plugin counts the part's workers as joined before
# the shrink (the agent reports a live change at once).
wait_until 10 "a report of job $job since its growth" reported_live_change "$job" 2 4
second_part=$(running_parts_of "$job" | grep -vx "$first_part")
show_part "$second_part"
grep "JobId=$second_part start: live growth of JobId=$job" log/slurmctld.log |
  sed 's/.*sched\/pollux: /   /'
[ "$(job_field "$second_part" NodeList)" = n1 ] || fail "part $second_part is not on n1"
job_field "$second_part" TresPerNode | grep -Eq "gpu(:a100)?[:=]2$" ||
  fail "part $second_part does not hold 2 GPUs: $(job_field "$second_part" TresPerNode)"
is_running "$first_part" || fail "part $first_part ended when the job grew again"
runs_on "$job" n1 || fail "job $job left n1: $(job_field "$job" NodeList)"
[ "$(job_field "$job" Restarts)" = 0 ] || fail "job $job was requeued to grow"
outlive "$first" "the growths"

step "a rigid job needing 2 GPUs of n1 shrinks the job off its newest part, live"
at_least 2
rigid=$(sbatch --parsable -w n1 --gres=gpu:2 -t 10 -o /dev/null --wrap "sleep 900")
wait_until 150 "job $job back to 2 workers live" changed_live "$job" 4 2
grep "JobId=$second_part cancel: live shrink of JobId=$job" log/slurmctld.log |
  sed 's/.*sched\/pollux: /   /'
wait_until 60 "rigid job $rigid running on n1" is_running "$rigid"
is_running "$first_part" || fail "part $first_part ended with the newest part"
[ "$(job_field "$job" Restarts)" = 0 ] || fail "job $job was requeued to shrink"
outlive "$first" "the shrink"

step "scancel of the job ends it, its part and its workers"
cancel_with_parts "$job"
scancel "$rigid" $holders
echo "PASS"
