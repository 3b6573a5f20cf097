#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# End to end on a real local cluster (tests/cluster/cluster.sh) with sched/pollux: adaptive
# jobs run `srun pollux-agent -- pollux-emulate`, their agents report, Pollux resizes them
# through requeue, they resume from their checkpoints without losing progress, the agents
# ride out a slurmctld restart, a run that fails at its start after a requeue (as when its
# srun meets that restart) is requeued once more, and every job completes.
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

step "reports and restarts as the agents saw them"
for job in "$first" "$second"; do
  echo "   job $job: $(grep -c "report accepted" "job-$job.out") reports accepted," \
    "$(grep -c "training stopped for the requeue" "job-$job.out") checkpointed stops," \
    "$(grep -c "unreachable" "job-$job.out") failed attempts retried"
done
echo "PASS"
