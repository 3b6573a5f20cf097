#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Event rounds (pollux_event_delay) on a real cluster with a long pollux_interval (300 s), so
# that every round in the test is an event round: an adaptive job submitted to the idle
# cluster runs within a few seconds; the round it needed does not start more rounds by
# itself (a quiet cluster runs none); a burst of submissions costs a bounded number of rounds
# (pollux_rounds_total of GET /metrics); GPUs freed by a finished job and a job requeued by its
# user start rounds too, and the requeued job keeps running however soon it is requeued
# again; with pollux_placement_ms=0 a round places one job and defers the others to the next
# (event) rounds, which start them within seconds; pollux_event_delay=0 leaves jobs to the
# regular rounds.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/cluster/lib.sh"
setup_test_cluster start-latency

now() { date +%s.%N; }
seconds_since() { awk -v start="$1" -v end="$(now)" 'BEGIN { printf "%.2f", end - start }'; }
at_most() { awk -v x="$1" -v limit="$2" 'BEGIN { exit !(x <= limit) }'; }
rounds() { curl -sf "$api/metrics" | sed -n 's/^pollux_rounds_total //p'; }
event_rounds() { grep -c "sched/pollux: event round: " log/slurmctld.log || true; }
submit() { sbatch --parsable --comment=adaptive -o /dev/null job.sh; }
# wait_running SECONDS JOB: waits until JOB runs, prints how long that took since $start.
wait_running() {
  wait_until "$1" "job $2 running" is_running "$2"
  seconds_since "$start"
}
# settle: waits until no round has run for 5 s (at most 30 s): the rounds still due to the
# submissions before it, which a loaded machine may start late (after a slow round an event
# round waits up to four pollux_event_delay, event_rounds.cpp).
settle() {
  last=$(rounds) still=0 waited=0
  while [ "$still" -lt 5 ]; do
    [ "$waited" -lt 30 ] || fail "rounds still ran 30 s after the last submission"
    sleep 1
    waited=$((waited + 1))
    if [ "$(rounds)" = "$last" ]; then still=$((still + 1)); else still=0 last=$(rounds); fi
  done
}
# quiet SECONDS: fails if any round runs within that time.
quiet() {
  before=$(rounds)
  sleep "$1"
  after=$(rounds)
  [ "$after" = "$before" ] || fail "$((after - before)) round(s) ran on a quiet cluster in ${1}s"
}

step "start a cluster with sched/pollux, pollux_interval=300 and the default pollux_event_delay"
"$here/cluster/cluster.sh" start "$run" sched/pollux \
  "pollux_interval=300,pollux_rest_port=$port,pollux_min_change_interval=0" \
  "$plugins" "JobSubmitPlugins=pollux\\nMinJobAge=600"
. "$run/env"
cd "$run"
printf '#!/bin/sh\nsleep 600\n' > job.sh
wait_until 20 "REST endpoint answering" rounds

step "an adaptive job submitted to the idle cluster runs within a few seconds"
rounds_before=$(rounds)
start=$(now)
first=$(submit)
took=$(wait_running 10 "$first")
echo "   job $first running ${took}s after sbatch"
at_most "$took" 5 || fail "job $first took ${took}s to start"
grep -q "sched/pollux: event round: JobId=$first adaptive, pending since the last round" \
  log/slurmctld.log || fail "no event round line naming job $first"
rounds_after=$(rounds)
[ "$((rounds_after - rounds_before))" -ge 1 ] && [ "$((rounds_after - rounds_before))" -le 2 ] ||
  fail "$((rounds_after - rounds_before)) rounds for one submission"

step "the round's own actions start no round: a quiet cluster runs none"
quiet 5

step "a burst of 16 submissions at once costs one or two rounds"
# 8 CPUs in the cluster and one per adaptive job: 8 run, the others stay pending (held).
rounds_before=$(rounds)
start=$(now)
for i in $(seq 16); do
  submit > "burst-$i.id" &
done
wait
burst_s=$(seconds_since "$start")
[ "$(cat burst-*.id | wc -l)" = 16 ] || fail "not every sbatch of the burst answered a job id"
wait_until 20 "8 adaptive jobs running" sh -c '[ "$(squeue -h -t running -o %i | wc -l)" -ge 8 ]'
sleep 3
burst_rounds=$(($(rounds) - rounds_before))
echo "   16 submissions in ${burst_s}s: $burst_rounds round(s)"
# One round, and one more for the jobs submitted while it ran.
[ "$burst_rounds" -ge 1 ] && [ "$burst_rounds" -le 2 ] ||
  fail "$burst_rounds rounds for 16 submissions at once"
quiet 5

step "a stream of 12 submissions over 3 s costs at most a round a second"
rounds_before=$(rounds)
start=$(now)
for i in $(seq 12); do
  submit > /dev/null
  sleep 0.25
done
stream_s=$(seconds_since "$start")
settle
stream_rounds=$(($(rounds) - rounds_before))
# One per second of the stream, one for what came during the last, one for rounding.
round_limit=$(awk -v s="$stream_s" 'BEGIN { printf "%d", s + 2 }')
echo "   12 submissions in ${stream_s}s: $stream_rounds round(s) (at most $round_limit)"
[ "$stream_rounds" -ge 2 ] && [ "$stream_rounds" -le "$round_limit" ] ||
  fail "$stream_rounds rounds for 12 submissions in ${stream_s}s"
pending=$(squeue -h -t pending -o %i | wc -l)
[ "$pending" -ge 1 ] || fail "no job left pending: the test needs one waiting for GPUs"
quiet 5

step "GPUs freed by a finished job start a round: a pending job runs within seconds"
# The first job: it ran at the last round (one that ran only after it would end unseen).
victim=$first
is_running "$victim" || fail "job $victim is not running"
squeue -h -t running --sort=i -o %i | grep -vx "$victim" > ran-before.ids
events_before=$(event_rounds)
start=$(now)
scancel "$victim"
# Some pending job takes the freed CPU (the policy chooses which): 8 run again.
wait_until 10 "a pending job started after job $victim ended" \
  sh -c "[ \"\$(squeue -h -t running -o %i | grep -vx $victim | wc -l)\" -ge 8 ]"
took=$(seconds_since "$start")
echo "   job $victim cancelled; a waiting job running ${took}s later"
at_most "$took" 6 || fail "a waiting job took ${took}s to start after job $victim ended"
[ "$(event_rounds)" -gt "$events_before" ] || fail "no event round after job $victim ended"
grep "sched/pollux: event round: " log/slurmctld.log | tail -n 1 | grep -q "ended" ||
  fail "the last event round does not say a job ended: $(grep 'event round' log/slurmctld.log | tail -n 1)"

step "an adaptive job requeued by its user starts a round and runs again"
# A job that ran at the last round (not one that round started: what a round did is no new
# work); the pending ones are cancelled so that its CPU is its own.
requeued=$(head -n 1 ran-before.ids)
is_running "$requeued" || fail "job $requeued is not running"
scancel $(squeue -h -t pending -o %i)
sleep 2
events_before=$(event_rounds)
start=$(now)
scontrol requeue "$requeued"
took=$(wait_running 20 "$requeued")
echo "   job $requeued requeued with scontrol; running again ${took}s later"
[ "$(job_field "$requeued" Restarts)" -ge 1 ] || fail "job $requeued shows no restart"
grep "sched/pollux: event round: " log/slurmctld.log | tail -n +$((events_before + 1)) |
  grep -q "JobId=$requeued adaptive, pending since the last round" ||
  fail "no event round for the requeued job $requeued"
quiet 5
is_running "$requeued" || fail "job $requeued did not stay running: $(job_state "$requeued")"

step "a job requeued again and again restarts every time and keeps running"
# slurmd refuses a launch whose credential is not newer, to the second, than the revocation
# of the job's last run, and Slurm then ends the job COMPLETED: the plugin lets a job that ran
# before begin only from the next second.
for attempt in 1 2 3 4; do
  start=$(now)
  scontrol requeue "$requeued"
  took=$(wait_running 20 "$requeued")
  sleep 2
  is_running "$requeued" ||
    fail "job $requeued ended $(job_field "$requeued" JobState) after restart $attempt"
  echo "   restart $attempt: running ${took}s after the requeue, still running 2 s later"
done

# set_parameter KEY=VALUE: adds it to SchedulerParameters and reconfigures slurmctld.
set_parameter() {
  scancel $(squeue -h -o %i) 2> /dev/null || true
  wait_until 20 "all jobs gone" sh -c '[ -z "$(squeue -h -o %i)" ]'
  sed -i "s/^SchedulerParameters=\(.*\)$/SchedulerParameters=\1,$1/" etc/slurm.conf
  reconfigure_slurmctld
  wait_until 30 "the plugin answering after reconfigure" curl -sf "$api/metrics" -o /dev/null
}
deferred() {
  grep -c "sched/pollux: JobId=[0-9]* start deferred to the next round" log/slurmctld.log || true
}

step "pollux_placement_ms=0: a round places one job, the next rounds the others, within seconds"
set_parameter pollux_placement_ms=0
deferred_before=$(deferred)
start=$(now)
for i in 1 2 3; do submit > "placed-$i.id" & done
wait
for job in $(cat placed-*.id); do
  echo "   job $job running $(wait_running 30 "$job")s after the first sbatch"
done
deferred_starts=$(($(deferred) - deferred_before))
echo "   $deferred_starts start(s) deferred to a later round"
[ "$deferred_starts" -ge 1 ] || fail "no start deferred with pollux_placement_ms=0"
curl -sf "$api/metrics" | grep -q '^pollux_actions_total{kind="start",result="deferred"} [1-9]' ||
  fail "GET /metrics counts no deferred start"

step "pollux_event_delay=0: no event rounds, a new job waits for the regular round"
set_parameter pollux_event_delay=0
sleep 2
events_before=$(event_rounds)
late=$(submit)
sleep 6
[ "$(job_state "$late")" = PENDING ] || fail "job $late started without a round: $(job_state "$late")"
[ "$(event_rounds)" = "$events_before" ] || fail "an event round ran with pollux_event_delay=0"
echo "   job $late still pending after 6 s; no event round"
scontrol ping | grep -q UP || fail "slurmctld is not answering"
echo "start latency on a real cluster: all checks passed"
