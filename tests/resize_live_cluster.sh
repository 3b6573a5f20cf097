#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A job whose GPUs are all in parts (sbatch --comment=adaptive:resize=live), on the real test
# cluster with sched/pollux: examples/train_ddp.py (the pollux package, CPU/gloo) under
# `pollux-agent --launch`, one worker per fake GPU, 2 GPUs a node. Rigid jobs hold the v100
# nodes. The job's home starts on an a100 node with no GPU (Slurm shows no GPU in its
# request or its allocation), its launcher submits its first part, the plugin places it on
# the a100 node it chose with 2 GPUs, and the launcher starts the training there: that part's
# rank 0's agent leads the job (it reports for the job), the job's store runs in the home.
# The job completes in its part with Restarts 0, every example once per epoch and the
# accuracy of the script alone (within 1 point), and no part of it is left. A second job
# grows through a second part on the other a100 node (scontrol show pollux shows it on both;
# its lead admits the second part's workers only, its own part's having started the
# training), then, for a rigid job that needs that node, drops that part live; it stays
# RUNNING with Restarts 0. With a reservation ahead on its node, it moves live to the other
# a100 node: a part there joins, its first part leaves; no checkpoint, Restarts 0. With one
# ahead there too and a rigid job waiting for that node, it moves back by a restart in new
# parts instead, so that the rigid job starts at once on the GPUs it leaves: its training
# checkpoints in its part, which ends, and resumes in a new part: still RUNNING, Restarts 0.
# It is cancelled: its training checkpoints first (its parts' batch scripts started their
# steps, out of reach of the cancel's SIGTERM), then nothing of it is left. A
# third job, in one part on both a100 nodes, shrinks live to that part's batch host for a
# rigid job that needs the other node: the workers there leave, its agent shrinks the part
# (scontrol update NodeList), the job trains on with Restarts 0 and no checkpoint. Its launcher
# then killed (as its node's failure would), the plugin asks its part's steps to checkpoint
# (SIGTERM, once), the training checkpoints there, and the part is cancelled 30 s on. A
# fourth job's home node fails (its slurmd, the home's slurmstepd and launcher killed, the
# node set DOWN and drained) while it trains in a part on the other a100 node: the part
# checkpoints, the job is requeued, resumes from that checkpoint in a new part and
# completes; its new launcher relays the output the dead one left and removes its directory.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/cluster/lib.sh"
use_ddp_example
# The first job's epochs (it completes at the accuracy of the script alone); the next ones
# train until the test cancels them.
EPOCHS=250
LONG_EPOCHS=8000
setup_test_cluster resize-live

step "start a cluster with sched/pollux, 2 fake GPUs per node"
CLUSTER_GPUS_PER_NODE=2 POLLUX_TEST_PARAMS=pollux_objective=goodput start_pollux_cluster
write_ddp_launch_script

step "the same script alone, $EPOCHS epochs, beside the job: the reference accuracy"
start_reference $EPOCHS

step "rigid jobs hold the v100 nodes: the job's home starts with no GPU, its part with 2"
blockers=
for node in n3 n4; do
  blockers="$blockers $(sbatch --parsable -w $node --gres=gpu:2 -o /dev/null --wrap "sleep 900")"
done
for blocker in $blockers; do wait_until 60 "rigid job $blocker running" is_running "$blocker"; done
job=$(sbatch --parsable --comment=adaptive:resize=live,gpu_type=a100,min_gpus=2,max_gpus=2 \
  -o "$run/job-%j.out" ddp_launch.sh $EPOCHS)
wait_until 60 "job $job's home running" is_running "$job"
home=$(job_field "$job" NodeList)
# Its allocation: TRES= (22.05) or AllocTRES= (later releases).
held=$(scontrol show job "$job" | grep -oE '(Alloc)?TRES=[^ ]*' | head -n 1)
echo "   home on $home: $held"
[ -n "$held" ] || fail "scontrol shows no allocation of job $job"
! echo "$held" | grep -q gpu || fail "job $job's home holds GPUs: $held"
asks=$(job_field "$job" TresPerNode)
[ -z "$asks" ] || fail "job $job's home asks for $asks"
has_running_part() { part=$(running_parts_of "$job"); [ -n "$part" ]; }
wait_until 90 "job $job's first part running" has_running_part
show_part "$part"
grep "JobId=$part start: first part of JobId=$job" log/slurmctld.log |
  sed 's/.*sched\/pollux: /   /'
wait_until 90 "job $job training" grep -q "^epoch 1:" "job-$job.out"
leads_in_part() { grep -q "pollux-agent\[$part\.0\]: report accepted" "job-$job.out"; }
wait_until 60 "the agent in part $part reporting for job $job" leads_in_part
grep "starting the job's training there" "job-$job.out" | sed 's/^/   /'

step "it completes in its part: every example once per epoch, the accuracy of the script alone"
wait_until 600 "job $job ended" all_finished "$job"
state=$(job_field "$job" JobState)
[ "$state" = COMPLETED ] || { tail -20 "job-$job.out"; fail "job $job ended $state"; }
[ "$(job_field "$job" Restarts)" = 0 ] || fail "job $job was requeued"
wait_until 60 "no part of job $job left" sh -c \
  "[ -z \"\$(squeue -h -o '%k' | grep -x 'adaptive:part_of=$job')\" ]"
every_example_once "$job" $EPOCHS
reference_accuracy
final=$(sed -n 's/^final accuracy: //p' "job-$job.out" | tail -n 1)
echo "   in parts $final, alone $alone"
"$python" -c "import sys; sys.exit(abs($final - $alone) > 0.01)" ||
  fail "job $job reached $final, the script alone $alone"
step "a second job grows through a second part, then drops it live"
# Its minimum raised, then lowered: the goodput policy's own choice depends on how fast this
# machine trains it. It is cancelled once it has shrunk.
needs() {  # needs GPUS JOB
  scontrol update JobId="$2" Comment="adaptive:resize=live,gpu_type=a100,min_gpus=$1,max_gpus=4"
}
job=$(sbatch --parsable --comment=adaptive:resize=live,gpu_type=a100,min_gpus=2,max_gpus=4 \
  -o "$run/job-%j.out" ddp_launch.sh $LONG_EPOCHS)
wait_until 90 "job $job's first part running" has_running_part
first_part=$part
first_node=$(job_field "$first_part" NodeList)
wait_until 90 "job $job training" grep -q "^epoch 1:" "job-$job.out"
wait_until 60 "job $job reported" grep -q "pollux-agent\[$first_part\.0\]: report accepted" \
  "job-$job.out"
first=$(workers_of "$job")
needs 4 "$job"
wait_until 180 "job $job grown live to 4 workers through a second part" changed_live "$job" 2 4
wait_until 30 "a report of job $job since its growth" reported_live_change "$job" 2 4
outlive "$first" "the growth"
second_part=$(running_parts_of "$job" | grep -vx "$first_part")
show_part "$second_part"
shows_both() {
  "$build/src/cli/scontrol" show pollux "job=$job" > pollux-job.txt &&
    grep -q "$(job_field "$second_part" NodeList)" pollux-job.txt &&
    grep -q "$first_node" pollux-job.txt
}
wait_until 30 "scontrol show pollux shows job $job on both parts' nodes" shows_both
sed 's/^/   /' pollux-job.txt
needs 2 "$job"
second_node=$(job_field "$second_part" NodeList)
rigid=$(sbatch --parsable -w "$second_node" --gres=gpu:2 -t 10 -o /dev/null --wrap "sleep 900")
wait_until 150 "job $job back to 2 workers live" changed_live "$job" 4 2
grep "JobId=$second_part cancel: live shrink of JobId=$job" log/slurmctld.log |
  sed 's/.*sched\/pollux: /   /'
wait_until 60 "rigid job $rigid running on $second_node" runs_on "$rigid" "$second_node"
outlive "$first" "the shrink"
wait_until 30 "a report of job $job since the change" reported_live_change "$job" 4 2
is_running "$job" || fail "job $job ended with its first part: $(job_field "$job" JobState)"
[ "$(job_field "$job" Restarts)" = 0 ] || fail "job $job was requeued"

step "a reservation ahead on its node: it moves live to the other a100 node"
scancel "$rigid"
wait_until 60 "rigid job $rigid gone" all_finished "$rigid"
scontrol create reservation ReservationName=away StartTime=now+100 Duration=10 \
  Nodes="$first_node" Users=root Flags=MAINT,IGNORE_JOBS
moved_off() {
  parts=$(running_parts_of "$job")
  [ -n "$parts" ] && [ "$(for p in $parts; do job_field "$p" NodeList; done)" = "$second_node" ]
}
wait_until 180 "job $job moved live off $first_node to $second_node" moved_off
grep "sched/pollux: JobId=[0-9]* start: live move of JobId=$job" log/slurmctld.log |
  sed 's/.*sched\/pollux: /   /'
wait_until 30 "the move of job $job done" grep -q "JobId=$job moved live" log/slurmctld.log
grep "JobId=$job moved live" log/slurmctld.log | sed 's/.*sched\/pollux: /   /'
# Its second growth to 4 workers and its second shrink back to 2: the move.
twice() { [ "$(grep -c "world size live: $1 -> $2 replicas" "job-$job.out")" -ge 2 ]; }
twice 2 4 || fail "job $job's workers in its new part did not join live"
wait_until 30 "job $job's old part's workers gone live" twice 4 2
! grep -q "^checkpointed at" "job-$job.out" || fail "job $job checkpointed to move"
is_running "$job" || fail "job $job ended in its move: $(job_field "$job" JobState)"
[ "$(job_field "$job" Restarts)" = 0 ] || fail "job $job was requeued to move"
scontrol delete ReservationName=away

step "a rigid job given the GPUs a move leaves starts at once: the move is a restart"
# The job on $second_node, a rigid job waiting for that node; a reservation ahead on it
# moves the job back to $first_node, and the rigid job, which ends before the reservation,
# is given the GPUs the job leaves: a live move would have it wait for the joiners' start.
needs_just() {  # needs_just GPUS JOB
  scontrol update JobId="$2" Comment="adaptive:resize=live,gpu_type=a100,min_gpus=$1,max_gpus=$1"
}
needs_just 2 "$job"
count() { grep -c "$1" "job-$job.out" || true; }
checkpoints=$(count "^checkpointed at")
resumes=$(count "^resumed from")
rigid=$(sbatch --parsable -w "$second_node" --gres=gpu:2 -t 1 -o /dev/null --wrap "sleep 20")
sleep 3
[ "$(job_field "$rigid" JobState)" = PENDING ] || fail "rigid job $rigid did not wait for job $job"
scontrol create reservation ReservationName=ahead StartTime=now+100 Duration=10 \
  Nodes="$second_node" Users=root Flags=MAINT,IGNORE_JOBS
not_live="restart of JobId=$job in new parts: .*not live: JobId=$rigid starts on the GPUs it leaves"
wait_until 90 "job $job's move made a restart for rigid job $rigid" \
  grep -q "$not_live" log/slurmctld.log
grep "$not_live" log/slurmctld.log | sed 's/.*sched\/pollux: /   /'
wait_until 90 "rigid job $rigid running on $second_node" runs_on "$rigid" "$second_node"
back() { part=$(running_parts_of "$job"); [ "$(job_field "$part" NodeList)" = "$first_node" ]; }
wait_until 120 "job $job's new first part running on $first_node" back
resumed_again() { [ "$(count "^resumed from")" -gt "$resumes" ]; }
wait_until 120 "job $job's training resumed from its checkpoint in its new part" resumed_again
[ "$(count "^checkpointed at")" -gt "$checkpoints" ] || fail "job $job did not checkpoint"
is_running "$job" || fail "job $job ended in its move: $(job_field "$job" JobState)"
[ "$(job_field "$job" Restarts)" = 0 ] || fail "job $job was requeued to move"
scontrol delete ReservationName=ahead

step "scancel of the job ends it and its part; its training checkpoints first"
checkpoints=$(count "^checkpointed at")
cancel_with_parts "$job"
# The part's own batch script started its step: scancel's SIGTERM to the job, which reaches
# every process of the job's batch script, leaves it alone, and the launcher passes it on.
grep -q "the job is cancelled or requeued: its training checkpoints in its parts" "job-$job.out" ||
  fail "job $job's launcher did not pass the cancel's SIGTERM on to its parts' steps"
[ "$(count "^checkpointed at")" -gt "$checkpoints" ] ||
  fail "job $job did not checkpoint when cancelled"
grep -e "cancelled or requeued" -e "^checkpointed at" "job-$job.out" | tail -n 2 | sed 's/^/   /'
# The directory its parts' batch scripts started their steps from went with its launcher.
! ls -A | grep -q "^\.pollux-parts-$job-" || fail "job $job's launcher left its parts' directory"
scancel $blockers

step "a job in one part on both a100 nodes shrinks it live to its batch host for a rigid job"
job=$(sbatch --parsable --comment=adaptive:resize=live,gpu_type=a100,min_gpus=4,max_gpus=4 \
  -o "$run/job-%j.out" ddp_launch.sh $LONG_EPOCHS)
on_both() {
  part=$(running_parts_of "$job")
  [ -n "$part" ] && [ "$(job_field "$part" NumNodes)" = 2 ]
}
wait_until 120 "job $job's first part running on both a100 nodes" on_both
show_part "$part"
batch_host=$(job_field "$part" BatchHost)
other=$(scontrol show hostnames "$(job_field "$part" NodeList)" | grep -vx "$batch_host")
wait_until 90 "job $job training" grep -q "^epoch 1:" "job-$job.out"
wait_until 60 "job $job reported" grep -q "pollux-agent\[$part\.0\]: report accepted" "job-$job.out"
needs 2 "$job"
rigid=$(sbatch --parsable -w "$other" --gres=gpu:2 -t 10 -o /dev/null --wrap "sleep 900")
wait_until 150 "job $job down to 2 workers live" changed_live "$job" 4 2
wait_until 60 "part $part shrunk to its batch host $batch_host" runs_on "$part" "$batch_host"
grep -e "part $part shrinks to" -e "part $part now holds" "job-$job.out" | sed 's/^/   /'
wait_until 30 "the plugin seeing job $job shrunk" grep -q "JobId=$job shrunk live" log/slurmctld.log
grep -e "JobId=$job live shrink: " -e "JobId=$job shrunk live" log/slurmctld.log |
  sed 's/.*sched\/pollux: /   /'
wait_until 60 "rigid job $rigid running on $other" runs_on "$rigid" "$other"
wait_until 30 "a report of job $job since the change" reported_live_change "$job" 4 2
epochs=$(grep -c "^epoch " "job-$job.out")
trains_on() { [ "$(grep -c "^epoch " "job-$job.out")" -gt "$epochs" ]; }
wait_until 60 "job $job training on in part $part" trains_on
! grep -q "^checkpointed at" "job-$job.out" || fail "job $job checkpointed to shrink"
is_running "$job" || fail "job $job ended in its shrink: $(job_field "$job" JobState)"
[ "$(job_field "$job" Restarts)" = 0 ] || fail "job $job was requeued to shrink"
scancel "$rigid"

step "its launcher killed, as with its node: the plugin has its part checkpoint, then ends it"
launcher=
for pid in $(pgrep -f "pollux-agent --launch"); do
  in_job=$(tr '\0' '\n' < "/proc/$pid/environ" 2> /dev/null | sed -n 's/^SLURM_JOB_ID=//p')
  [ "$in_job" = "$job" ] && launcher=$pid
done
[ -n "$launcher" ] || fail "no launcher of job $job"
step_out=$(ls -d .pollux-parts-"$job"-*)/$part.out
kill -KILL "$launcher"
asked="JobId=$part checkpoint: JobId=$job ended or was requeued: its part checkpoints"
wait_until 60 "the plugin asking part $part to checkpoint" grep -q "$asked" log/slurmctld.log
grep "$asked" log/slurmctld.log | sed 's/.*sched\/pollux: /   /'
checkpointed_in_part() { grep -q "^checkpointed at" "$step_out"; }
wait_until 60 "job $job's training checkpointed in part $part" checkpointed_in_part
grep "^checkpointed at" "$step_out" | sed 's/^/   /'
[ "$(grep -c "$asked" log/slurmctld.log)" = 1 ] || fail "part $part was asked more than once"
gone() { [ -z "$(squeue -h -j "$part" 2> /dev/null)" ] && has_no_workers "$job"; }
wait_until 60 "part $part cancelled once its job's grace ran out" gone
# Its launcher died before it could remove the directory its parts started their steps from.
rm -rf .pollux-parts-"$job"-*

step "its home's node fails: its part checkpoints, and it resumes from there in a new part"
# 3,000 epochs outlive its moves; its run after the requeue is shortened below.
job=$(sbatch --parsable --comment=adaptive:resize=live,gpu_type=a100,min_gpus=2,max_gpus=2 \
  -o "$run/job-%j.out" ddp_launch.sh 3000)
wait_until 90 "job $job's first part running" has_running_part
home=$(job_field "$job" BatchHost)
# A reservation ahead on its part's node: it goes on in a part on the other a100 node, its
# home stays.
scontrol create reservation ReservationName=off StartTime=now+100 Duration=10 \
  Nodes="$home" Users=root Flags=MAINT,IGNORE_JOBS
away() {
  part=$(running_parts_of "$job")
  [ "$(echo "$part" | wc -w)" = 1 ] && ! runs_on "$part" "$home"
}
wait_until 180 "job $job's part off its home's node $home" away
scontrol delete ReservationName=off
wait_until 90 "job $job training in part $part" grep -q "pollux-agent\[$part\.0\]" "job-$job.out"
step_out=$(ls -d .pollux-parts-"$job"-*)/$part.out
# With ReturnToService=2, 24.11 and later return a DOWN node to service on any message from
# it (a part's slurmstepd just ending there): the job is alone there first, and the node is
# drained too, as an admin would, so that it stays out of use.
only_home() { [ "$(squeue -h -w "$home" -o %i)" = "$job" ]; }
wait_until 60 "job $job alone on $home (its earlier part there ended)" only_home
# The node's loss: its slurmd, the home's slurmstepd and launcher killed; an admin sets it
# DOWN (Slurm requeues the job) and drains it.
kill -KILL "$(pgrep -f "^slurmd -D -N $home -f $SLURM_CONF\$")"
pkill -KILL -f "slurmstepd: \[$job\." || true
for pid in $(pgrep -f "pollux-agent --launch"); do
  in_job=$(tr '\0' '\n' < "/proc/$pid/environ" 2> /dev/null | sed -n 's/^SLURM_JOB_ID=//p')
  [ "$in_job" = "$job" ] && kill -KILL "$pid"
done
scontrol update NodeName="$home" State=DOWN Reason=home-fault
scontrol update NodeName="$home" State=DRAIN Reason=home-fault
asked="JobId=$part checkpoint: JobId=$job ended or was requeued: its part checkpoints"
wait_until 60 "the plugin asking part $part to checkpoint" grep -q "$asked" log/slurmctld.log
wait_until 60 "job $job's training checkpointed in part $part" checkpointed_in_part
grep "^checkpointed at" "$step_out" | sed 's/^/   /'
# Its next run trains to 100 epochs past its checkpoint (if it has not started yet).
checkpoint_epoch=$(sed -n 's/^checkpointed at epoch \([0-9]*\),.*/\1/p' "$step_out" | tail -n 1)
echo $((checkpoint_epoch + 100)) > "epochs-$job"
wait_until 120 "job $job running again" is_running "$job"
echo "   job $job restarted on $(job_field "$job" BatchHost), Restarts $(job_field "$job" Restarts)"
wait_until 120 "job $job's training resumed" grep -q "^resumed from" "job-$job.out"
grep "^resumed from" "job-$job.out" | sed 's/^/   /'
wait_until 600 "job $job complete" all_finished "$job"
[ "$(job_field "$job" JobState)" = COMPLETED ] || fail "job $job ended $(job_field "$job" JobState)"
grep -q "^final accuracy" "job-$job.out" || fail "job $job's training did not finish"
# Its next run's launcher relayed the output its dead launcher left, then removed it.
relayed="--- the output of part $part's step in an earlier run of the job ---"
grep -qx -- "$relayed" "job-$job.out" || fail "job $job's output lacks its part $part's"
grep "^checkpointed at" "job-$job.out" | sed 's/^/   /'
grep -q "^checkpointed at" "job-$job.out" || fail "job $job's output lacks its part's checkpoint"
[ -z "$(ls -d .pollux-parts-"$job"-* 2> /dev/null)" ] || fail "job $job's directories left"
echo "PASS"
