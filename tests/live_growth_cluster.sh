#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A live growth onto a node the job does not hold, on the real test cluster with sched/pollux:
# examples/train_ddp.py (the pollux package, CPU/gloo) under `pollux-agent --launch`, one
# worker per fake GPU, 2 GPUs a node. Rigid jobs hold the v100 nodes and, at first, n2, so the
# job (max_gpus=4) starts on n1 with 2 workers; once n2 is free and its minimum is raised to 4
# GPUs, Pollux grows it there through a part: the launcher submits a job of the same user
# with the comment adaptive:part_of=JOB, the plugin places it on n2, the launcher starts 2
# workers in it, and they join the job's trainer live (2 -> 4 replicas): the job stays RUNNING
# with Restarts 0 and its first workers keep their process ids. Its minimum lowered to 2 and a
# rigid job that needs n2 submitted as soon as the part runs, the job shrinks off the part
# once its workers have joined: they leave live (4 -> 2), the plugin cancels the part, and the
# job completes with every example once per epoch and the accuracy of the script alone
# (within 1 point); slurmdbd (a real MariaDB) accounts the part to the job's user, account and
# name, with its GPUs, within the job's time. A second job, grown onto n2 the same way, loses
# its part's node (DOWN): it goes on live on n1 and completes. A third, on one GPU of n1,
# grows live to both of n1's through a part on n1 itself, then to n2's through a second part
# (the first keeps running); a rigid job needing n2 shrinks it live off that newest part; its
# own worker is killed and its training goes on live in the first part; it is cancelled:
# nothing of it or its parts is left running or pending.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/cluster/lib.sh"
use_ddp_example
EPOCHS=1000
setup_test_cluster live-growth

step "start MariaDB, slurmdbd and a cluster with sched/pollux, 2 fake GPUs per node"
"$here/cluster/cluster.sh" plugindir > /dev/null
"$here/cluster/accounting.sh" start "$run" > /dev/null
. "$run/dbd/env"
CLUSTER_GPUS_PER_NODE=2 POLLUX_TEST_PARAMS=pollux_objective=goodput start_pollux_cluster \
  "$ACCOUNTING_CONF\nAccountingStorageTRES=gres/gpu\nAccountingStoreFlags=job_comment"
wait_until 30 "slurmctld registered with slurmdbd" \
  sh -c "sacctmgr -n -P list cluster format=cluster,controlport | grep -qx '$ACCOUNTING_CLUSTER|$(cat port_base)'"
write_ddp_launch_script

# parts_of JOB: the ids of JOB's parts that Slurm shows (pending or running).
parts_of() { squeue -h -o "%i %k" | awk -v c="adaptive:part_of=$1" '$2 == c { print $1 }'; }
has_running_part() { part=$(running_parts_of "$1"); [ -n "$part" ]; }

step "the same script alone, $EPOCHS epochs, beside the first job: the reference accuracy"
start_reference $EPOCHS

# needs GPUS JOB: JOB's minimum set to GPUS (of at most 4): a growth to 4 GPUs is then the
# policy's only choice, whatever this machine's speed makes the job's goodput.
needs() {
  scontrol update JobId="$2" Comment="adaptive:gpu_type=a100,min_gpus=$1,max_gpus=4"
}

# starts_on_n1 EPOCHS: a job that starts on n1 (a rigid job holds n2 until it trains), in $job.
starts_on_n1() {
  holder=$(sbatch --parsable -w n2 --gres=gpu:2 -o /dev/null --wrap "sleep 900")
  wait_until 60 "rigid job $holder on n2" is_running "$holder"
  job=$(sbatch --parsable --comment=adaptive:gpu_type=a100,min_gpus=2,max_gpus=4 \
    -o "$run/job-%j.out" ddp_launch.sh "$1")
  wait_until 60 "job $job running on n1" runs_on "$job" n1
  wait_until 90 "job $job training" grep -q "^epoch 1:" "job-$job.out"
  # Its agent's report tells the plugin that its workers can join it live.
  wait_until 60 "job $job reported" grep -q "report accepted" "job-$job.out"
  scancel "$holder"
}

step "rigid jobs hold the v100 nodes: the job starts on n1 and grows live onto n2"
blockers=
for node in n3 n4; do
  blockers="$blockers $(sbatch --parsable -w $node --gres=gpu:2 -o /dev/null --wrap "sleep 900")"
done
for blocker in $blockers; do wait_until 60 "rigid job $blocker running" is_running "$blocker"; done
starts_on_n1 $EPOCHS
first=$(workers_of "$job")
needs 4 "$job"
wait_until 180 "a part of job $job running" has_running_part "$job"
echo "   part $part on $(job_field "$part" NodeList), comment $(job_field "$part" Comment)"
[ "$(job_field "$part" UserId)" = "$(job_field "$job" UserId)" ] || fail "part $part of another user"
# Before the part's workers have joined: the shrink waits for the join, which may end after
# the job's last report (a part cancelled then would take them from the trainer mid-join).
needs 2 "$job"
rigid=$(sbatch --parsable -w n2 --gres=gpu:2 -t 10 -o /dev/null --wrap "sleep 900")
wait_until 120 "job $job grown live to 4 workers" changed_live "$job" 2 4
grep "pollux: live change to generation .*: 2 -> 4 replicas" "job-$job.out" | sed 's/^/   /'
grep "JobId=$part start: live growth of JobId=$job" log/slurmctld.log | sed 's/.*sched\/pollux: /   /'
runs_on "$job" n1 || fail "job $job left n1 or its node list changed: $(job_field "$job" NodeList)"
[ "$(job_field "$job" Restarts)" = 0 ] || fail "job $job was requeued to grow"
outlive "$first" "the growth"

step "the rigid job needing n2 shrinks the job off its part, live, once its workers joined"
wait_until 150 "job $job back to 2 workers live" changed_live "$job" 4 2
grep "JobId=$part cancel: live shrink of JobId=$job" log/slurmctld.log | sed 's/.*sched\/pollux: /   /'
wait_until 60 "rigid job $rigid running on n2" runs_on "$rigid" n2
outlive "$first" "the shrink"
wait_until 600 "job $job ended" all_finished "$job"
scancel "$rigid"
state=$(job_field "$job" JobState)
[ "$state" = COMPLETED ] || { tail -20 "job-$job.out"; fail "job $job ended $state"; }
[ "$(job_field "$job" Restarts)" = 0 ] || fail "job $job was requeued"
! grep -q "^resumed from" "job-$job.out" || fail "job $job restarted from its checkpoint"
[ -z "$(parts_of "$job")" ] || fail "parts of job $job left: $(parts_of "$job")"
every_example_once "$job" $EPOCHS
reference_accuracy
final=$(sed -n 's/^final accuracy: //p' "job-$job.out" | tail -n 1)
echo "   adaptive $final, alone $alone"
"$python" -c "import sys; sys.exit(abs($final - $alone) > 0.01)" ||
  fail "job $job reached $final, the script alone $alone"

step "sacct shows the part beside its job: its user, account and name, its GPUs in the job's time"
# accounted JOB: sacct's row of JOB once slurmdbd has its end.
accounted() {
  sacct -n -P -X -j "$1" -o JobName,User,Account,AllocTRES,Start,End,State,Comment > "sacct-$1"
  grep -q -e '|COMPLETED|' -e '|CANCELLED' "sacct-$1"
}
wait_until 60 "slurmdbd recording job $job's end" accounted "$job"
wait_until 60 "slurmdbd recording part $part's end" accounted "$part"
sed 's/^/   /' "sacct-$job" "sacct-$part"
IFS='|' read -r name user account tres start end _ < "sacct-$job"
IFS='|' read -r part_name part_user part_account part_tres part_start part_end _ comment < "sacct-$part"
[ "$part_name|$part_user|$part_account" = "$name|$user|$account" ] ||
  fail "part $part is accounted as $part_name|$part_user|$part_account, job $job as $name|$user|$account"
[ "$comment" = "adaptive:part_of=$job" ] || fail "part $part's comment in sacct: $comment"
for held in "$tres" "$part_tres"; do
  echo "$held" | grep -q "gres/gpu=2" || fail "sacct shows no 2 GPUs in $held"
done
# ISO times compare as text: the part ran within its job.
[ ! "$part_start" \< "$start" ] && [ ! "$part_end" \> "$end" ] ||
  fail "part $part ran $part_start-$part_end, outside job $job's $start-$end"
gpu_s() { sacct -n -P -X -j "$1" -o ElapsedRaw | awk '{ print 2 * $1 }'; }
echo "   GPU-seconds: job $(gpu_s "$job"), part $(gpu_s "$part")"

step "a job grown live loses its part's node (DOWN): it goes on live on n1"
wait_until 60 "rigid job $rigid ended" all_finished "$rigid"
starts_on_n1 $EPOCHS
failing=$job
# Lowered again once grown, so that losing the part leaves it a size it may have.
needs 4 "$failing"
wait_until 180 "job $failing grown live to 4 workers" changed_live "$failing" 2 4
needs 2 "$failing"
scontrol update NodeName=n2 State=DOWN Reason=pollux-test
scontrol update NodeName=n2 State=DRAIN Reason=pollux-test
wait_until 120 "job $failing back to 2 workers live" changed_live "$failing" 4 2
wait_until 400 "job $failing ended" all_finished "$failing"
scontrol update NodeName=n2 State=RESUME
state=$(job_field "$failing" JobState)
[ "$state" = COMPLETED ] || { tail -20 "job-$failing.out"; fail "job $failing ended $state"; }
[ "$(job_field "$failing" Restarts)" = 0 ] || fail "job $failing was requeued"
wait_until 60 "no part of job $failing left" sh -c "[ -z \"\$(squeue -h -o '%k' | grep -x 'adaptive:part_of=$failing')\" ]"

step "a job on one GPU of n1 grows live through a part on n1, then through a second on n2"
wait_until 60 "n2 back" sh -c "sinfo -h -n n2 -o %T | grep -q idle"
n2_holder=$(sbatch --parsable -w n2 --gres=gpu:2 -o /dev/null --wrap "sleep 900")
n1_holder=$(sbatch --parsable -w n1 --gres=gpu:1 -o /dev/null --wrap "sleep 900")
wait_until 60 "rigid jobs on n1 and n2" sh -c "squeue -h -t R -j $n2_holder,$n1_holder | wc -l | grep -qx 2"
# Long enough to grow twice on a busy machine: it is cancelled once it has.
stacked=$(sbatch --parsable --comment=adaptive:gpu_type=a100,min_gpus=1,max_gpus=4 \
  -o "$run/job-%j.out" ddp_launch.sh $((4 * EPOCHS)))
wait_until 60 "job $stacked running on n1" runs_on "$stacked" n1
wait_until 90 "job $stacked training" grep -q "^epoch 1:" "job-$stacked.out"
# Its agent's report tells the plugin that its workers can join it live.
wait_until 60 "job $stacked reported" grep -q "report accepted" "job-$stacked.out"
first=$(workers_of "$stacked")
# Its minimum raised at each step: the goodput policy's own choice would wait for its model.
scancel "$n1_holder"
needs 2 "$stacked"
wait_until 180 "job $stacked grown live to 2 workers" changed_live "$stacked" 1 2
own_part=$(running_parts_of "$stacked")
show_part "$own_part"
[ "$(job_field "$own_part" NodeList)" = n1 ] || fail "part $own_part is not on the job's node n1"
scancel "$n2_holder"
needs 4 "$stacked"
wait_until 180 "job $stacked grown live to 4 workers through a second part" \
  changed_live "$stacked" 2 4
wait_until 30 "a report of job $stacked since its growth" reported_live_change "$stacked" 2 4
new_part=$(running_parts_of "$stacked" | grep -vx "$own_part")
show_part "$new_part"
[ "$(job_field "$new_part" NodeList)" = n2 ] || fail "part $new_part is not on n2"
is_running "$own_part" || fail "part $own_part ended when the job grew again"
runs_on "$stacked" n1 || fail "job $stacked left n1: $(job_field "$stacked" NodeList)"
[ "$(job_field "$stacked" Restarts)" = 0 ] || fail "job $stacked was requeued to grow"
outlive "$first" "the growths"
shows_n2() {
  "$build/src/cli/scontrol" show pollux "job=$stacked" > pollux-job.txt &&
    grep -q "n2" pollux-job.txt
}
wait_until 30 "scontrol show pollux shows job $stacked with n2's GPUs" shows_n2

step "a rigid job needing n2 shrinks the job off its newest part, live; then it is cancelled"
needs 2 "$stacked"
rigid=$(sbatch --parsable -w n2 --gres=gpu:2 -t 10 -o /dev/null --wrap "sleep 900")
wait_until 150 "job $stacked back to 2 workers live" changed_live "$stacked" 4 2
grep "JobId=$new_part cancel: live shrink of JobId=$stacked" log/slurmctld.log |
  sed 's/.*sched\/pollux: /   /'
wait_until 60 "rigid job $rigid running on n2" runs_on "$rigid" n2
is_running "$own_part" || fail "part $own_part ended with the newest part"
[ "$(job_field "$stacked" Restarts)" = 0 ] || fail "job $stacked was requeued to shrink"
outlive "$first" "the shrink"

step "the job's own worker is killed: its training goes on live in part $own_part, then scancel"
# The job's own step (the batch script's) then has no worker left: the launcher follows the
# part's, whose agent leads (the store runs apart, in the launcher).
home_worker=
for pid in $(workers_of "$stacked"); do
  in_job=$(tr '\0' '\n' < "/proc/$pid/environ" 2> /dev/null | sed -n 's/^SLURM_JOB_ID=//p')
  [ "$in_job" = "$stacked" ] && home_worker=$pid
done
[ -n "$home_worker" ] || fail "no worker of job $stacked in its own allocation"
kill -KILL "$home_worker"
wait_until 120 "job $stacked's worker in part $own_part going on alone" changed_live "$stacked" 2 1
goes_on_in_parts() { grep -q "before its training did: the training goes on in the job's parts" \
  "job-$stacked.out"; }
wait_until 60 "job $stacked's launcher following its part" goes_on_in_parts
part_leads() { grep -q "pollux-agent\[$own_part\..*this node's worker is the job's rank 0 now" \
  "job-$stacked.out"; }
wait_until 30 "the agent in part $own_part taking the lead" part_leads
wait_until 30 "a report of job $stacked since the change" reported_live_change "$stacked" 2 1
grep -e "the training goes on in the job's parts" -e "rank 0 now" "job-$stacked.out" |
  sed 's/^/   /'
is_running "$stacked" ||
  fail "job $stacked ended with its own step: $(job_field "$stacked" JobState)"
[ "$(job_field "$stacked" Restarts)" = 0 ] || fail "job $stacked was requeued"
cancel_with_parts "$stacked"
scancel "$rigid"
scancel $blockers
echo "PASS"
