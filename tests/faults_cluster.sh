#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Faults on a real local cluster with sched/pollux and adaptive jobs under pollux-agent:
#  1. slurmctld killed with SIGKILL in the middle of a resize (after the requeue, before the
#     job starts again): no job lost, none left held, the plugin's state restored;
#  2. munged stopped: reports are refused with 401, slurmctld stays up; when munged returns
#     the agents' reports are accepted again;
#  3. slurmctld stopped right after a requeue and the plugin's state file corrupt: one clear
#     log line, the plugin starts clean, no crash, and starts no job while slurmctld settles;
# and every job still completes.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/cluster/lib.sh"
setup_test_cluster faults
cluster="$here/cluster/cluster.sh"

accepted_reports() {
  curl -s "$api/metrics" | sed -n 's/^pollux_reports_total{code="200"} //p' | head -n 1
}
reports_accepted_again() { [ "$(accepted_reports)" -gt 0 ] 2> /dev/null; }
post_status() {  # post_status JOB CREDENTIAL: HTTP status of a report with that credential
  curl -s -o /dev/null -w '%{http_code}' -H "X-Munge-Cred: $2" --data-binary '{}' \
    "$api/v1/jobs/$1/report"
}

step "start a cluster with sched/pollux and job_submit/pollux"
start_pollux_cluster

step "1. slurmctld SIGKILLed between a requeue and the restart of the job"
# Long enough (about 80 s on 4 GPUs) to outlast both outages even when its run after the
# requeue starts before the SIGKILL and trains on while slurmctld is down: its agent, whose
# retries back off to 32 s by then, must still be running to report again.
first=$(submit_adaptive cifar10 3 0.6)
requeued() { grep -q "JobId=$first requeue: resize" log/slurmctld.log; }
run_ended() { grep -q "pollux-agent\[$first.0\]: training stopped" "job-$first.out"; }
wait_until 60 "job $first requeued to grow" requeued
# slurmctld saves the requeue in its state file at once: a SIGKILL before that has it restore
# the job as still in its first run, and the run's late end (slurmstepd retries its report
# until slurmctld answers) then ends the job: Slurm's window, not the plugin's.
touch requeue-seen
saved() { [ -n "$(find state/job_state -newer requeue-seen 2> /dev/null)" ]; }
wait_until 10 "slurmctld's state saved after the requeue" saved
"$cluster" stop-ctld "$run" --kill
echo "   killed slurmctld right after: $(grep -o "JobId=$first requeue: .*" log/slurmctld.log | tail -n 1)"
# Slurm fact (22.05 job_epilog_complete -> make_node_idle): a report of the run's end that
# reaches a restarted slurmctld whose saved state predates the requeue takes the node from a
# job it believes RUNNING, and the job's next start fails its steps (invalid gres); 26.05.3
# restarts it. That window is Slurm's (sched_pollux(8), FAILURES); the plugin's is the
# one tested here, so slurmctld comes back once the node is done reporting: 22.05's slurmd
# sends that report once, after the run's processes have ended (KillWait) and its epilog,
# retrying the connection for about MessageTimeout (all longer on a busy machine), and logs
# that it sent it (to the slurmctld that was killed) or gave up; later releases keep it until
# slurmctld answers. A run whose processes outlive SIGKILL (slurmstepd's "JOB NOT ENDING WITH
# SIGNALS", after KillWait and UnkillableStepTimeout: 90 s) delays it as long again; a report
# not done within 240 s is not waited for longer.
wait_until 30 "job $first's run to end on its node" run_ended
# Its node's report of the run's end, sent or given up (the run is the job's first to end).
reported() {
  cat log/slurmd-*.log |
    grep -qE "JobId=$first: sent epilog complete msg|Unable to send epilog complete message"
}
case $(scontrol -V) in
  *" 22.05."*)
    waited=0
    until reported || [ $waited -ge 240 ]; do sleep 1; waited=$((waited + 1)); done
    if reported; then
      echo "   its node done reporting the end of job $first's run after $waited s"
    else
      echo "   its node not done reporting the end of job $first's run after $waited s"
    fi
    ;;
  *)
    message_timeout=$(sed -n 's/^MessageTimeout=//p' etc/slurm.conf)
    sleep $((${message_timeout:-10} + 2))
    ;;
esac
"$cluster" start-ctld "$run"
grep -q "sched/pollux: restored state of [1-9][0-9]* jobs" log/slurmctld.log ||
  fail "the plugin did not restore its state after the SIGKILL"
wait_until 60 "job $first running again" is_running "$first"
[ "$(job_field "$first" Priority)" != 0 ] || fail "job $first was left held"
echo "   job $first running again on $(squeue -h -j "$first" -o %N), state restored"

step "2. munged stopped: reports refused with 401, slurmctld up; munged back: accepted"
# Slurm may show the job RUNNING from its state file although the requeue ended it; the plugin
# requeues it again only once slurmctld has settled (30 s after a start with jobs).
wait_until 90 "a report accepted" reports_accepted_again
"$cluster" stop-munged "$run"
status=$(post_status "$first" "MUNGE:forged-while-munged-is-down")
[ "$status" = 401 ] || fail "a report while munged is down got HTTP $status, expected 401"
sleep 4
kill -0 "$(cat run/slurmctld.bgpid)" || fail "slurmctld died while munged was down"
grep -q "pollux-agent\[$first.0\]: cannot get a MUNGE credential" "job-$first.out" ||
  fail "the agent did not notice munged was gone"
"$cluster" start-munged "$run"
before=$(accepted_reports)
more_accepted() { [ "$(accepted_reports)" -gt "$before" ]; }
wait_until 90 "reports accepted again after munged returned" more_accepted
echo "   401 while munged was down; reports accepted again after it returned"

step "3. slurmctld stopped right after a requeue, its state file corrupt"
# Its node still reports the requeued run's end while slurmctld restarts (Slurm's window
# above); a job started there meanwhile could not use its GPUs on 22.05. The plugin starts no
# job while slurmctld settles, although it starts clean and knows nothing of the requeue.
# (The plugin may have requeued it a moment before, to grow it: the window is the same.)
scontrol requeue "$first" 2> requeue.err || grep -q "pending execution" requeue.err ||
  fail "scontrol requeue $first: $(cat requeue.err)"
"$cluster" stop-ctld "$run"
printf '{"version": 1, "jobs": [truncated' > state/pollux_state.json
"$cluster" start-ctld "$run"
grep -q "sched/pollux: state file .*pollux_state.json unusable" log/slurmctld.log ||
  fail "no log line about the corrupt state file"
# The plugin's thread starts the REST endpoint a few milliseconds after slurmctld answers.
rest_answers() { "$build/src/cli/scontrol" show pollux --json | grep -q '"jobs"'; }
wait_until 10 "the REST endpoint answering after the restart" rest_answers
echo "   $(grep -o "state file .*unusable.*" log/slurmctld.log | tail -n 1 | cut -c1-110)"
second=$(submit_adaptive ncf 20 0.3)
start_waits() {
  grep -q "JobId=$second: start waits until slurmctld has settled" log/slurmctld.log
}
wait_until 30 "job $second's start waiting for slurmctld to settle" start_waits
echo "   job $second waits for slurmctld to settle: $(squeue -h -j "$second" -o %T)"

step "every job completes"
wait_until 240 "jobs $first and $second complete" all_finished "$first" "$second"
for job in "$first" "$second"; do
  state=$(job_field "$job" JobState)
  [ "$state" = COMPLETED ] || fail "job $job ended $state"
  grep -q "^pollux-emulate: finished" "job-$job.out" || fail "job $job's trainer did not finish"
done
echo "PASS"
