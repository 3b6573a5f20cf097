#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# End to end on a real local cluster (tests/cluster/cluster.sh) with sched/pollux: adaptive
# jobs run `srun pollux-agent -- pollux-emulate`, their agents report, Pollux resizes them
# through requeue, they resume from their checkpoints without losing progress, the agents
# ride out a slurmctld restart, a run that fails at its start after a requeue (as when its
# srun meets that restart) is requeued once more, every job completes, and a job whose script
# goes on after training is left as it is until it ends.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/cluster/lib.sh"
setup_test_cluster agent

step "start a cluster with sched/pollux and job_submit/pollux"
start_pollux_cluster

step "two adaptive jobs start on their minimum and report"
first=$(submit_adaptive cifar10 20 0.5)
second=$(submit_adaptive ncf 20 0.5)
touch "fail-after-requeue-$first" "fail-after-requeue-$second"
wait_until 30 "job $first running" is_running "$first"
wait_until 30 "job $first reported" grep -q "report accepted" "job-$first.out"

step "Pollux resizes a job through requeue"
resized_job() {
  grep -Eo "JobId=($first|$second) requeue: resize" log/slurmctld.log | head -n 1 | sed -E 's/JobId=([0-9]+).*/\1/'
}
some_job_resized() { [ -n "$(resized_job)" ]; }
wait_until 60 "a requeue to resize a job" some_job_resized
resized=$(resized_job)
echo "   job $resized: $(grep -o "JobId=$resized requeue: .*" log/slurmctld.log | head -n 1)"

step "slurmctld restarts mid-run; the agents carry on"
"$here/cluster/cluster.sh" restart-ctld "$run"
wait_until 30 "a report accepted by the restarted slurmctld" \
  sh -c "curl -s http://127.0.0.1:$port/metrics | grep -q 'pollux_reports_total{code=\"200\"} [1-9]'"
echo "   reports accepted since the restart: $(curl -s "http://127.0.0.1:$port/metrics" | sed -n 's/pollux_reports_total{code="200"} //p')"

step "the run after the requeue failed at its start; Pollux requeued the job once more"
repeated() { grep -q "JobId=$resized requeue: ended FAILED before its run after" log/slurmctld.log; }
wait_until 60 "job $resized requeued once more" repeated
grep -q "^train.sh: this run fails at its start" "job-$resized.out" ||
  fail "job $resized's run after the requeue did not fail as asked"
echo "   $(grep -o "JobId=$resized requeue: ended FAILED.*" log/slurmctld.log | head -n 1 | cut -c1-100)"

step "every job completes"
# Each until COMPLETED: a run that fails at its start ends FAILED for the moment between its
# end and the round that requeues it once more.
completed() { [ "$(job_field "$1" JobState)" = COMPLETED ]; }
wait_until 240 "job $first complete" completed "$first"
wait_until 240 "job $second complete" completed "$second"
for job in "$first" "$second"; do
  state=$(job_field "$job" JobState)
  code=$(job_field "$job" ExitCode)
  [ "$state" = COMPLETED ] && [ "$code" = 0:0 ] || fail "job $job ended $state with exit code $code"
  grep -q "^pollux-emulate: finished" "job-$job.out" || fail "job $job's trainer did not finish"
done

step "the resized job resumed from its checkpoint without losing progress"
resumed_without_loss "$resized"

step "a job whose training finished is left as it is while its script ends"
# A job that needs one a100 GPU more than are free arrives meanwhile: the policy would
# shrink the finished job by requeue, and its script would run once more (here its trainer
# would find its checkpoint done).
last=$(submit_adaptive ncf 20 0.5)
touch "linger-$last"
lingering() { grep -q "^train.sh: lingering after training" "job-$last.out"; }
wait_until 120 "job $last's script going on after training" lingering
grep -q "told sched/pollux that training finished" "job-$last.out" ||
  fail "job $last's agent did not tell sched/pollux that its training finished"
requeues() { grep -c "JobId=$last requeue:" log/slurmctld.log || true; }
before=$(requeues)
# Its nodes times its GPUs per node ("gres:gpu:4" on 22.05, "gres/gpu:4" later).
held=$(squeue -h -j "$last" -o "%D %b" | awk '{ n = split($2, f, ":"); print $1 * f[n] }')
need=$((9 - held))  # the test cluster has 8 a100 GPUs
newcomer=$(sbatch --parsable --comment="adaptive:min_gpus=$need,max_gpus=$need,gpu_type=a100" \
  -o "$run/job-%j.out" -J ncf "$run/train.sh" ncf 20 0.5)
phase() { "$build/src/cli/scontrol" show pollux job="$last" | tr ' ' '\n' | sed -n 's/^Phase=//p'; }
finishing() { [ "$(phase)" = finishing ]; }
wait_until 10 "job $last shown finishing (the next round's status)" finishing
wait_until 60 "job $last complete" completed "$last"
[ "$(requeues)" = "$before" ] ||
  fail "job $last requeued after training: $(grep "JobId=$last requeue:" log/slurmctld.log)"
! grep -q "already done" "job-$last.out" || fail "job $last's script ran again after training"
wait_until 30 "job $newcomer started on the GPUs job $last left" is_running "$newcomer"
scancel "$newcomer"
wait_until 30 "job $newcomer gone" all_finished "$newcomer"
echo "   job $last: finishing on $held GPUs while its script went on 16 s;" \
  "$before requeue(s) before, none after; job $newcomer ($need GPUs) started after it"

step "reports and restarts as the agents saw them"
for job in "$first" "$second"; do
  echo "   job $job: $(grep -c "report accepted" "job-$job.out") reports accepted," \
    "$(grep -c "training stopped for the requeue" "job-$job.out") checkpointed stops," \
    "$(grep -c "unreachable" "job-$job.out") failed attempts retried"
done
echo "PASS"
