#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A node fails while sched/pollux grows a job onto it: the slurmd of a node in the job's new
# placement is SIGKILLed right after the requeue-to-grow. Slurm marks the node DOWN; the job
# must not be lost nor left pending or held for a placement that can never start: the plugin
# places it again on the nodes that are up, it resumes from its checkpoint and completes.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/cluster/lib.sh"
setup_test_cluster node-fault

step "start a cluster with sched/pollux (SlurmdTimeout=10 s)"
start_pollux_cluster 'SlurmdTimeout=10'

step "an adaptive job grows onto a second node; that node's slurmd is killed at once"
job=$(submit_adaptive cifar10 20 0.6)
grown_to_two_nodes() { grep -Eq "JobId=$job requeue: resize .* -> [0-9]+x[a-z0-9]+ on [a-z0-9]+,[a-z0-9]+" log/slurmctld.log; }
wait_until 90 "job $job requeued to grow onto two nodes" grown_to_two_nodes
resize=$(grep -Eo "JobId=$job requeue: resize .*" log/slurmctld.log | tail -n 1)
victim=$(echo "$resize" | sed -E 's/.* on ([a-z0-9]+),([a-z0-9]+)$/\2/')
slurmd_pid=$(pgrep -f "^slurmd -D -N $victim -f $SLURM_CONF\$")
[ -n "$slurmd_pid" ] || fail "no slurmd process for node $victim"
kill -KILL "$slurmd_pid"
echo "   $resize; killed slurmd of $victim (pid $slurmd_pid)"

step "Slurm marks $victim down; the plugin places the job on the nodes that are up"
node_down() { sinfo -h -n "$victim" -o %T | grep -Eq "down|not_responding|fail"; }
wait_until 60 "node $victim down" node_down
runs_without_victim() {
  is_running "$job" && ! squeue -h -j "$job" -o %N | grep -q "$victim"
}
# The job may be short once placed again (its trainer can have finished on the surviving node
# before srun failed), so having completed counts too.
completed() { [ "$(job_field "$job" JobState)" = COMPLETED ]; }
recovered() { runs_without_victim || completed; }
wait_until 120 "job $job running on nodes without $victim, or completed" recovered
[ "$(job_field "$job" Priority)" != 0 ] || fail "job $job is held"
echo "   $victim is $(sinfo -h -n "$victim" -o %T); job $job $(job_field "$job" JobState) on $(job_field "$job" NodeList)"
if grep -q "JobId=$job requeue: failed as its node $victim went down" log/slurmctld.log; then
  echo "   the job's srun failed on $victim and it ended FAILED; sched/pollux requeued it"
else
  echo "   Slurm requeued the job when it set $victim down"
fi
grep -q "round skipped" log/slurmctld.log && fail "a round was skipped: $(grep "round skipped" log/slurmctld.log | tail -n 1)"

step "the job resumes from its checkpoint and completes"
wait_until 240 "job $job complete" all_finished "$job"
state=$(job_field "$job" JobState)
[ "$state" = COMPLETED ] || fail "job $job ended $state"
grep -q "^pollux-emulate: resumed from" "job-$job.out" || fail "job $job did not resume from a checkpoint"
grep -q "^pollux-emulate: finished" "job-$job.out" || fail "job $job's trainer did not finish"
echo "   $(grep -c "^pollux-emulate: resumed from" "job-$job.out") resume(s) from the checkpoint, COMPLETED"
echo "PASS"
