#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# In-place shrink on a real local cluster: an adaptive job whose script runs
# `pollux-agent --launch` grows (through requeue) to both a100 nodes; a rigid job that needs
# one of them makes sched/pollux shrink it in place. Its step checkpoints, the launcher shrinks
# the job to its batch host and starts the step again there: the job never leaves RUNNING
# (Slurm's Restarts count stays), the rigid job starts on the freed node, the trainer resumes
# from its checkpoint without losing progress, and the job completes. Then a --launch job whose
# trainer is not elastic fails on one of its two nodes: its agent ends the whole step.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/cluster/lib.sh"
setup_test_cluster shrink

step "start a cluster with sched/pollux and job_submit/pollux"
start_pollux_cluster
write_train_script launch

step "an adaptive job under pollux-agent --launch grows to both a100 nodes"
# Long enough to be still running a few rounds after the shrink (about 40 s in all).
job=$(sbatch --parsable --comment=adaptive:gpu_type=a100,max_gpus=8 --open-mode=append \
        -o "$run/job-%j.out" train.sh imagenet 200 0.06)
wait_until 120 "job $job on both a100 nodes" runs_on "$job" "n[1-2]"
restarts=$(job_field "$job" Restarts)
wait_until 30 "its step on both nodes reported" \
  sh -c "[ \$(grep -c 'first training step at' job-$job.out) -ge $((restarts + 1)) ]"
echo "   on $(job_field "$job" NodeList) with $(job_gpus "$job") GPUs after $restarts requeue(s)"

step "a rigid job needing one a100 node makes Pollux shrink the adaptive job in place"
rigid=$(sbatch --parsable --gres=gpu:a100:4 -N1 -t 10 -o /dev/null --wrap "sleep 20")
wait_until 40 "the shrink decided" grep -q "JobId=$job shrink: in place" log/slurmctld.log
wait_until 60 "job $job shrunk to n1" runs_on "$job" n1
wait_until 40 "rigid job $rigid running on n2" runs_on "$rigid" n2
[ "$(job_field "$job" Restarts)" = "$restarts" ] || fail "job $job was requeued, not shrunk in place"
wait_until 30 "slurmctld logs the shrink done" grep -q "JobId=$job shrunk in place" log/slurmctld.log
grep -q "starting it again on n1" "job-$job.out" || fail "the launcher did not start the step again"
wait_until 30 "a training step on the shrunk job" \
  sh -c "[ \$(grep -c 'first training step at' job-$job.out) -ge $((restarts + 2)) ]"
grep "JobId=$job shr" log/slurmctld.log | sed 's/^/   /'

step "the job completes, resumed from its checkpoints without losing progress"
wait_until 300 "job $job completes" all_finished "$job"
state=$(job_field "$job" JobState)
code=$(job_field "$job" ExitCode)
[ "$state" = COMPLETED ] && [ "$code" = 0:0 ] || fail "job $job ended $state with exit code $code"
grep -q "^pollux-emulate: finished" "job-$job.out" || fail "job $job's trainer did not finish"
resumed_without_loss "$job"

step "a trainer that cannot go on live fails on one node: its agent ends the whole step"
# The launcher's srun goes on when a task fails (so that a lost node does not end a live
# job); a worker that is not elastic must still end the step at once, not leave the workers
# on the other node waiting on it.
printf '#!/bin/sh\n[ "$GROUP_RANK" = 1 ] && exit 3\nexec sleep 300\n' > fails_on_node1.sh
cat > fails.sh <<JOB
#!/bin/sh
'$build/src/agent/pollux-agent' --launch --grace 5 -- sh '$run/fails_on_node1.sh'
JOB
failing=$(sbatch --parsable --comment=adaptive:gpu_type=a100,min_gpus=8,max_gpus=8 \
            -o "$run/job-%j.out" fails.sh)
wait_until 60 "job $failing started on both a100 nodes" grep -q "exited with status 3" "job-$failing.out"
wait_until 30 "job $failing ended" all_finished "$failing"
state=$(job_field "$failing" JobState)
[ "$state" = FAILED ] || fail "job $failing ended $state: $(tail -5 "job-$failing.out")"
# Node 0's agent says so, or, when srun was already forced to end and dropped its output,
# slurmstepd's line on the step's cancellation shows the launcher ended the whole step.
grep -Eq "pollux-agent\[$failing\.0\]: training (exited|stopped)|STEP $failing\.0 ON n1 CANCELLED" \
  "job-$failing.out" || fail "node 0's agent did not end: $(tail -5 "job-$failing.out")"
echo "   $(grep -m1 "exited with status 3" "job-$failing.out"); job $failing $state within 30 s"
echo "PASS"
