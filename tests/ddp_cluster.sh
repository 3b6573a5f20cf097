#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# examples/train_ddp.py as an ML user submits it, on the real test cluster with sched/pollux:
# CPU workers (gloo), one per fake GPU, started by `srun pollux-agent` with torchrun's
# environment. Nodes get 2 GPUs each. Rigid jobs hold the v100 nodes and one GPU of each a100
# node, so the job (max_gpus=4) starts on one worker and Pollux can only grow it across the
# two a100 nodes: through a requeue, it resumes from its checkpoint with a worker on each node
# (one process group over two nodes), repeats or skips no example (from what the script
# logs), and ends with the accuracy of the same script run alone for the same epochs (within
# 1 point). The script declares its epochs (scontrol show pollux shows its length and
# remaining time). The cluster runs pollux_objective=goodput: under jct a growth must pay for
# its restart in the time the job has left, which depends on the machine's speed (in CI the
# 1,000 epochs took 37 s on one worker and the job was rightly never grown), and this test is
# about the growth and the resume. A second job of 4 GPUs trains on two nodes (2 workers each); one of its workers
# (rank 3, on the second node) is killed: the trainer says `hello ... elastic=1`, so its agent
# lets its sibling go on, the three survivors re-form their process group live
# (pollux.elastic: 4 -> 3 replicas, no restart, no checkpoint), and the job completes. A third
# job, under `pollux-agent --launch` on both a100 nodes (its MASTER_PORT derived from its id
# taken on this machine: its launcher takes the next free port), is shrunk in place for a rigid job:
# live (its workers on n2 leave, rank 0's process goes on, Restarts unchanged, no step
# restarted), every example once per epoch, and the accuracy of the script alone. A fourth,
# under --launch on both a100 nodes, loses n2 (an admin sets it DOWN, which kills its tasks
# there): Slurm keeps the job on n1 (job_submit/pollux makes adaptive jobs --no-kill), its
# workers there re-form live, and the job completes with Restarts 0. A fifth, likewise, loses
# its workers on n1 (killed), rank 0's among them: those on n2 re-form live around a new rank
# 0, whose agent reports for the job from then on and, as the job keeps n1's GPUs, chooses the
# batch for the 2 workers that train; the job completes with Restarts 0.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/cluster/lib.sh"
use_ddp_example
EPOCHS=1000
setup_test_cluster ddp

step "start a cluster with sched/pollux, 2 fake GPUs per node"
CLUSTER_GPUS_PER_NODE=2 POLLUX_TEST_PARAMS=pollux_objective=goodput start_pollux_cluster
# The test cluster's node names do not resolve: all its nodes are this machine.
cat > ddp.sh <<JOB
#!/bin/sh
#SBATCH --ntasks-per-node=1
export MASTER_ADDR=127.0.0.1 PYTHONPATH='$pythonpath' OMP_NUM_THREADS=1
srun --ntasks="\$SLURM_JOB_NUM_NODES" --ntasks-per-node=1 --kill-on-bad-exit=1 \\
  '$build/src/agent/pollux-agent' --report-interval 1 --grace 20 -v -- \\
    '$python' '$example' --checkpoint '$run'/ddp-\$SLURM_JOB_ID.pt --epochs "\$1" \\
      --log-examples '$run'/examples-\$SLURM_JOB_ID
JOB
# The same under `pollux-agent --launch`, which lets Pollux shrink the job in place.
write_ddp_launch_script

step "the same script alone, $EPOCHS epochs, beside the first job: the reference accuracy"
start_reference $EPOCHS

step "rigid jobs leave one free GPU on each a100 node and none elsewhere"
blockers=
for node in n1 n2 n3 n4; do
  gpus=2; case $node in n1|n2) gpus=1 ;; esac
  blockers="$blockers $(sbatch --parsable -w $node --gres=gpu:$gpus -o /dev/null --wrap "sleep 600")"
done
for blocker in $blockers; do wait_until 60 "rigid job $blocker running" is_running "$blocker"; done

step "an adaptive DDP job starts on one worker and Pollux grows it across two nodes"
job=$(sbatch --parsable --comment=adaptive:max_gpus=4 --open-mode=append -o "$run/job-%j.out" \
  ddp.sh $EPOCHS)
wait_until 60 "job $job running" is_running "$job"
[ "$(job_gpus "$job")" -eq 1 ] || fail "job $job started on $(job_gpus "$job") GPUs, not 1"
grows_across() { grep -q "JobId=$job requeue: resize 1xa100 on n[12] -> 2xa100 on n1,n2" log/slurmctld.log; }
wait_until 120 "job $job grown by requeue to n1,n2" grows_across
echo "   $(grep -o "JobId=$job requeue: .*" log/slurmctld.log | head -n 1)"
# The declared epochs reach scontrol show pollux as progress, target and remaining time.
shows_length() {
  "$build/src/cli/scontrol" show pollux "job=$job" > length.txt &&
    grep -Eq "^   Length Progress=[0-9.e+]+ TargetProgress=[0-9.e+]+ \([0-9.]+ %\) Remaining=([0-9]+-)?[0-9]{2}:[0-9]{2}:[0-9]{2}$" length.txt
}
wait_until 60 "scontrol show pollux shows job $job's length" shows_length
echo "   length: $(sed -n "s/^ *Length //p" length.txt)"
wait_until 300 "job $job complete" all_finished "$job"
scancel $blockers
state=$(job_field "$job" JobState)
[ "$state" = COMPLETED ] || { tail -20 "job-$job.out"; fail "job $job ended $state"; }

step "it resumed from its checkpoint with more workers, every example once per epoch"
grep "^resumed from\|^checkpointed at\|started [0-9]* workers" "job-$job.out" | sed 's/^/   /'
grep -Eq "^resumed from .* with ([2-9]|[1-9][0-9]+) worker" "job-$job.out" ||
  fail "job $job never resumed with more than one worker"
grep -q "pollux-agent\[$job\.1\]" "job-$job.out" ||
  fail "job $job never ran an agent on a second node"
every_example_once "$job" $EPOCHS

step "the same final accuracy as alone (within 1 point)"
reference_accuracy
final=$(sed -n 's/^final accuracy: //p' "job-$job.out" | tail -n 1)
echo "   adaptive $final, alone $alone"
"$python" -c "import sys; sys.exit(abs($final - $alone) > 0.01)" ||
  fail "job $job reached $final, the script alone $alone"

step "a job of 4 workers on two nodes trains; one worker killed: the others go on live"
wait_until 60 "the rigid jobs ended" all_finished $blockers
doomed=$(sbatch --parsable --comment=adaptive:min_gpus=4,max_gpus=4 --open-mode=append \
  -o "$run/job-%j.out" ddp.sh 100)
wait_until 90 "job $doomed training" grep -q "^epoch 1:" "job-$doomed.out"
for rank in 0 1; do
  grep -q "pollux-agent\[$doomed\.$rank\]: started 2 workers (RANK $((rank * 2))..., WORLD_SIZE 4" \
    "job-$doomed.out" || fail "job $doomed: no 2 workers of 4 on node $rank"
done
# A worker's command line starts with the interpreter (srun's and the agents' hold it later);
# rank 3 (on the second node; rank 0 hosts the job's store) is the one killed.
worker= survivor=
for pid in $(pgrep -f "^$python .*ddp-$doomed.pt"); do
  rank=$(tr '\0' '\n' < "/proc/$pid/environ" 2> /dev/null | sed -n 's/^RANK=//p')
  case $rank in 3) worker=$pid ;; 2) survivor=$pid ;; esac
done
[ -n "$worker" ] && [ -n "$survivor" ] || fail "no workers of ranks 2 and 3 of job $doomed found"
kill -KILL "$worker"
agent_saw_kill() { grep -q "exited with status 137; the others go on" "job-$doomed.out"; }
wait_until 30 "job $doomed's agent on n2 seeing its worker $worker killed" agent_saw_kill
reformed() { grep -q "pollux: live change to generation .*: 4 -> 3 replicas" "job-$doomed.out"; }
wait_until 120 "job $doomed's survivors re-formed live" reformed
kill -0 "$survivor" 2> /dev/null || fail "rank 2's process $survivor did not outlive the change"
wait_until 300 "job $doomed ended" all_finished "$doomed"
state=$(job_field "$doomed" JobState)
[ "$state" = COMPLETED ] || { tail -20 "job-$doomed.out"; fail "job $doomed ended $state, not COMPLETED"; }
grep -q "exited with status 137; the others go on" "job-$doomed.out" ||
  fail "no agent line about the killed worker: $(grep pollux-agent "job-$doomed.out" | tail -3)"
grep "pollux: live change to generation .*: 4 -> 3 replicas" "job-$doomed.out" | sed 's/^/   /'
grep -q "pollux: live change to generation .*: 4 -> 3 replicas" "job-$doomed.out" ||
  fail "job $doomed's survivors did not re-form live: $(grep pollux: "job-$doomed.out" | tail -3)"
! grep -q "^resumed from" "job-$doomed.out" || fail "job $doomed restarted from its checkpoint"
[ "$(job_field "$doomed" Restarts)" = 0 ] || fail "job $doomed was requeued"
grep -q "^final accuracy: " "job-$doomed.out" || fail "job $doomed did not finish its training"
echo "   rank 2 (pid $survivor) went on to the end: $(grep '^final accuracy' "job-$doomed.out")"

step "a job under --launch on both a100 nodes is shrunk live to one for a rigid job"
# min_gpus=4 places the job on both nodes itself (a growth would add a part, see
# live_growth_cluster.sh); its comment then lets it shrink to 2 GPUs, and
# POLLUX_MIN_REPLICAS=2 (the job's own, exported by sbatch) its trainer to 2 workers.
# Held until its derived MASTER_PORT (20000 + id mod 10000) is taken here, as another job's
# rank 0 on its batch host would take it: its launcher takes the next free port.
live=$(POLLUX_MIN_REPLICAS=2 sbatch --parsable --hold \
  --comment=adaptive:gpu_type=a100,min_gpus=4,max_gpus=4 \
  --open-mode=append -o "$run/job-%j.out" ddp_launch.sh $EPOCHS)
taken_port=$((20000 + live % 10000))
"$python" -c 'import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1]))); s.listen(); time.sleep(3600)' $taken_port &
port_holder=$!
background_pids="$background_pids $port_holder"
listens() { "$python" -c 'import socket, sys
sys.exit(socket.socket().connect_ex(("127.0.0.1", int(sys.argv[1]))) != 0)' "$1"; }
wait_until 30 "port $taken_port taken" listens $taken_port
scontrol release "$live"
wait_until 180 "job $live on both a100 nodes" runs_on "$live" "n[1-2]"
# has_leader JOB: the job's rank 0 of 4 workers runs; its process id in $leader.
has_leader() {
  leader=
  for pid in $(pgrep -f "^$python .*ddp-$1.pt"); do
    rank=$(tr '\0' '\n' < "/proc/$pid/environ" 2> /dev/null | sed -n 's/^RANK=//p')
    world=$(tr '\0' '\n' < "/proc/$pid/environ" 2> /dev/null | sed -n 's/^WORLD_SIZE=//p')
    [ "$rank" = 0 ] && [ "$world" = 4 ] && leader=$pid
  done
  [ -n "$leader" ]
}
wait_until 60 "job $live's rank 0 of 4 workers" has_leader "$live"
# reported_on_4: the grown run's trainer said hello and its agent reported (before that, a
# shrink would wait for the trainer).
reported_on_4() { sed -n '/WORLD_SIZE 4/,$p' "job-$live.out" | grep -q "report accepted"; }
wait_until 60 "job $live reporting on 4 workers" reported_on_4
restarts=$(job_field "$live" Restarts)
scontrol update JobId="$live" Comment=adaptive:gpu_type=a100,min_gpus=2,max_gpus=4
# The rigid job holds n2 until the adaptive job ends, so that nothing grows it back.
rigid=$(sbatch --parsable -w n2 --gres=gpu:2 -t 10 -o /dev/null --wrap "sleep 600")
wait_until 150 "the live shrink decided" grep -q "JobId=$live shrink: in place .* live" log/slurmctld.log
wait_until 90 "job $live shrunk to n1" runs_on "$live" n1
wait_until 60 "rigid job $rigid running on n2" runs_on "$rigid" n2
grep "pollux: live change to generation .*: 4 -> 2 replicas" "job-$live.out" | sed 's/^/   /'
grep -q "pollux: live change to generation .*: 4 -> 2 replicas" "job-$live.out" ||
  fail "job $live did not change live: $(grep 'pollux' "job-$live.out" | tail -5)"
grep "live in-place shrink" "job-$live.out" | sed 's/^/   /'
grep -q "live in-place shrink: the job now holds n1" "job-$live.out" ||
  fail "job $live's agent did not shrink it"
kill -0 "$leader" 2> /dev/null || fail "rank 0's process $leader did not outlive the shrink"
[ "$(job_field "$live" Restarts)" = "$restarts" ] || fail "job $live was requeued"
wait_until 400 "job $live ended" all_finished "$live"
scancel "$rigid"
kill "$port_holder"
grep "MASTER_PORT=" "job-$live.out" | sed 's/^/   /'
# The next free port: taken_port + 1 unless another test's cluster on this machine holds it.
grep -Eq "port $taken_port is in use on this host; MASTER_PORT=2[0-9]{4}$" "job-$live.out" ||
  fail "job $live's launcher did not move off the taken port $taken_port"
state=$(job_field "$live" JobState)
[ "$state" = COMPLETED ] || { tail -20 "job-$live.out"; fail "job $live ended $state"; }
! grep -q "starting it again on" "job-$live.out" || fail "the launcher restarted job $live's step"
[ "$(job_field "$live" Restarts)" = "$restarts" ] || fail "job $live was requeued"
every_example_once "$live" $EPOCHS
final=$(sed -n 's/^final accuracy: //p' "job-$live.out" | tail -n 1)
echo "   rank 0 (pid $leader) went on to the end: adaptive $final, alone $alone"
"$python" -c "import sys; sys.exit(abs($final - $alone) > 0.01)" ||
  fail "job $live reached $final, the script alone $alone"

step "a --launch job on both a100 nodes loses n2 (set DOWN): its workers on n1 go on live"
wait_until 60 "the earlier jobs ended" all_finished "$rigid"
# min_gpus=4 places the job on both nodes at once; POLLUX_MIN_REPLICAS=2 (the job's own,
# exported to it by sbatch) lets 2 workers go on where the default, its min_gpus, would not.
# It trains fewer epochs: what is checked is that it completes, not its accuracy.
failing=$(POLLUX_MIN_REPLICAS=2 sbatch --parsable --comment=adaptive:gpu_type=a100,min_gpus=4,max_gpus=4 \
  --open-mode=append -o "$run/job-%j.out" ddp_launch.sh $((EPOCHS * 2 / 5)))
wait_until 120 "job $failing on both a100 nodes" runs_on "$failing" "n[1-2]"
wait_until 60 "job $failing's rank 0 of 4 workers" has_leader "$failing"
wait_until 90 "job $failing training" grep -q "^epoch 1:" "job-$failing.out"
# DOWN kills the job's tasks on n2 (its slurmd still answers, so Slurm would soon return it to
# service); DRAIN keeps it out until the end, so that nothing grows onto it again.
scontrol update NodeName=n2 State=DOWN Reason=pollux-test
scontrol update NodeName=n2 State=DRAIN Reason=pollux-test
failed_over() { grep -q "pollux: live change to generation .*: 4 -> 2 replicas" "job-$failing.out"; }
wait_until 120 "job $failing's workers on n1 re-formed live" failed_over
grep "pollux: live change to generation .*: 4 -> 2 replicas" "job-$failing.out" | sed 's/^/   /'
wait_until 30 "Slurm removing n2 from job $failing" runs_on "$failing" n1
kill -0 "$leader" 2> /dev/null || fail "rank 0's process $leader did not outlive the failure"
wait_until 400 "job $failing ended" all_finished "$failing"
scontrol update NodeName=n2 State=RESUME
state=$(job_field "$failing" JobState)
[ "$state" = COMPLETED ] || { tail -20 "job-$failing.out"; fail "job $failing ended $state"; }
[ "$(job_field "$failing" Restarts)" = 0 ] || fail "job $failing was requeued"
! grep -q "^resumed from" "job-$failing.out" || fail "job $failing restarted from its checkpoint"
grep "after its rank 0 completed the training" "job-$failing.out" | sed 's/^/   /' || true
echo "   rank 0 (pid $leader) went on to the end: $(grep '^final accuracy' "job-$failing.out")"

step "a --launch job on both a100 nodes loses its workers on n1, rank 0's: n2's go on live"
# It too trains fewer epochs.
heir_job=$(POLLUX_MIN_REPLICAS=2 sbatch --parsable \
  --comment=adaptive:gpu_type=a100,min_gpus=4,max_gpus=4 --open-mode=append \
  -o "$run/job-%j.out" ddp_launch.sh $((EPOCHS * 2 / 5)))
wait_until 120 "job $heir_job on both a100 nodes" runs_on "$heir_job" "n[1-2]"
wait_until 90 "job $heir_job training" grep -q "^epoch 1:" "job-$heir_job.out"
# Ranks 0 and 1 run on n1, the batch host (whose launcher hosts the job's store), 2 and 3 on n2.
killed= heir=
for pid in $(workers_of "$heir_job"); do
  rank=$(tr '\0' '\n' < "/proc/$pid/environ" 2> /dev/null | sed -n 's/^RANK=//p')
  case $rank in 0|1) killed="$killed $pid" ;; 2) heir=$pid ;; esac
done
[ -n "$heir" ] && [ "$(echo $killed | wc -w)" = 2 ] || fail "no ranks 0, 1 and 2 of job $heir_job"
kill -KILL $killed
wait_until 120 "job $heir_job's workers on n2 re-formed live" changed_live "$heir_job" 4 2
grep "pollux: live change to generation .*: 4 -> 2 replicas" "job-$heir_job.out" | sed 's/^/   /'
took_lead() {
  grep -q "pollux-agent\[$heir_job.1\]: this node's worker is the job's rank 0 now" \
    "job-$heir_job.out"
}
wait_until 30 "n2's agent taking the lead of job $heir_job" took_lead
kill -0 "$heir" 2> /dev/null || fail "rank 2's process $heir did not outlive the change"
n2_reports() { grep -q "pollux-agent\[$heir_job.1\]: report accepted" "job-$heir_job.out"; }
wait_until 30 "a report of job $heir_job from n2's agent" n2_reports
# The job keeps n1's GPUs (min_gpus=4): the plugin's batch is for 4 workers, so n2's agent
# chooses the batch for the 2 that train, and the trainer takes it.
chose_batch() {
  grep "pollux-agent\[$heir_job.1\]: the trainer has 2 worker(s), " "job-$heir_job.out" |
    grep -q "the plugin's decision is for 4 GPU(s): batch [0-9]* chosen here"
}
wait_until 60 "n2's agent choosing the batch for job $heir_job's 2 workers" chose_batch
grep "the trainer has 2 worker(s)" "job-$heir_job.out" | sed 's/^/   /'
# The first epoch after the change at another batch than the initial one.
new_batch() {
  sed -n '/live change to generation/,$p' "job-$heir_job.out" |
    grep -E "^epoch [0-9]+: batch [0-9]+" | grep -v ": batch 32," | head -n 1
}
trains_at_new_batch() { [ -n "$(new_batch)" ]; }
wait_until 60 "job $heir_job's 2 workers training at the batch chosen for them" trains_at_new_batch
echo "   first epoch at it: $(new_batch)"
wait_until 400 "job $heir_job ended" all_finished "$heir_job"
state=$(job_field "$heir_job" JobState)
[ "$state" = COMPLETED ] || { tail -20 "job-$heir_job.out"; fail "job $heir_job ended $state"; }
[ "$(job_field "$heir_job" Restarts)" = 0 ] || fail "job $heir_job was requeued"
! grep -q "^resumed from" "job-$heir_job.out" || fail "job $heir_job restarted from its checkpoint"
grep -q "^final accuracy: " "job-$heir_job.out" || fail "job $heir_job did not finish its training"
grep "after its rank 0 completed the training" "job-$heir_job.out" | sed 's/^/   /' || true
echo "   rank 2 (pid $heir), rank 0 from the change on, went on to the end:" \
  "$(grep '^final accuracy' "job-$heir_job.out")"
echo "PASS"
