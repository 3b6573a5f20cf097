#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# sched/pollux inside a real slurmctld (tests/cluster/cluster.sh: munged, slurmctld, four
# slurmd with fake a100/v100 GPUs on private ports): adaptive jobs are placed, grown through
# requeue after a report, made to yield to a waiting rigid job; rigid jobs get Slurm's
# backfill; bad reports get 401/403/404/413/400 with slurmctld unharmed; scontrol show pollux
# works; reconfigure and a slurmctld restart keep the plugin's state.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/cluster/lib.sh"
setup_test_cluster plugin

# post JOB BODY_FILE [USER]: prints the HTTP status; the reply body goes to $run/reply.
post() {
  sha=$(sha256sum "$2" | cut -d' ' -f1)
  if [ -n "${3:-}" ]; then
    cred=$(runuser -u "$3" -- munge --socket="$MUNGE_SOCKET" -s "pollux-report/1 $1 $sha")
  else
    cred=$(munge --socket="$MUNGE_SOCKET" -s "pollux-report/1 $1 $sha")
  fi
  curl -s -o "$run/reply" -w '%{http_code}' -H "X-Munge-Cred: $cred" --data-binary @"$2" \
    "$api/v1/jobs/$1/report"
}
expect_post() {  # expect_post STATUS JOB BODY_FILE [USER]
  got=$(post "$2" "$3" "${4:-}")
  [ "$got" = "$1" ] || fail "report for job $2 got HTTP $got, expected $1: $(cat "$run/reply")"
}
report_body() { sed "s/@JOB@/$1/" "$here/data/report-scales.json.in" > "$run/report-$1.json"; }

step "start a cluster with sched/pollux, job_submit/pollux and the hosted backfill"
"$here/cluster/cluster.sh" start "$run" sched/pollux \
  "pollux_interval=2,pollux_rest_port=$port,pollux_min_change_interval=0,pollux_speed_a100=3,bf_interval=1" \
  "$plugins" "JobSubmitPlugins=pollux"
. "$run/env"
grep -q "sched/pollux: REST listening on http://127.0.0.1:$port" "$run/log/slurmctld.log" ||
  fail "no REST listening line in the slurmctld log"
grep -q "sched/pollux: hosting Slurm's backfill" "$run/log/slurmctld.log" || fail "backfill not hosted"
printf '#!/bin/sh\nsleep 600\n' > "$run/job.sh"
cd "$run"

step "a malformed adaptive comment is refused at sbatch time"
if sbatch --comment=adaptive:min_gpus=zero -o /dev/null job.sh 2> sbatch.err; then
  fail "sbatch accepted a malformed adaptive comment"
fi
grep -q "min_gpus needs a number" sbatch.err || fail "sbatch message: $(cat sbatch.err)"
if sbatch --comment=adaptive --gres=gpu:a100:1 -o /dev/null job.sh 2> sbatch.err; then
  fail "sbatch accepted an adaptive job asking for a GPU type with --gres"
fi
grep -q "must not request a GPU type" sbatch.err || fail "sbatch message: $(cat sbatch.err)"

step "an adaptive job is placed and started"
adaptive=$(sbatch --parsable --comment=adaptive:max_gpus=8 -o /dev/null job.sh)
wait_until 20 "adaptive job running" is_running "$adaptive"
job_field "$adaptive" AdminComment | grep -q "^pollux:" || fail "no AdminComment on $adaptive"
[ "$(job_field "$adaptive" Requeue)" = 1 ] || fail "adaptive job is not requeueable"
grep -q "sched/pollux: JobId=$adaptive start:" "$run/log/slurmctld.log" || fail "no start log line"

step "its report says it scales: it is grown through requeue"
report_body "$adaptive"
expect_post 200 "$adaptive" "report-$adaptive.json"
python3 -c 'import json,sys; r = json.load(open(sys.argv[1])); assert {"batch_size","local_bsz","accum_steps","lr_scale","allocation"} <= set(r), r' "$run/reply"
# The model scales well and a100 is configured 3x v100: it grows to both a100 nodes.
wait_until 60 "adaptive job grown to 8 a100 GPUs" more_gpus_than "$adaptive" 7
grown=$(job_gpus "$adaptive")
[ "$(job_field "$adaptive" Restarts)" -ge 1 ] || fail "grown job shows no requeue"
grep -q "sched/pollux: JobId=$adaptive requeue" "$run/log/slurmctld.log" || fail "no requeue log line"
echo "   grown to $grown GPUs"

step "bad reports are refused in the documented order, slurmctld unharmed"
status=$(curl -s -o /dev/null -w '%{http_code}' --data-binary @"report-$adaptive.json" "$api/v1/jobs/$adaptive/report")
[ "$status" = 401 ] || fail "missing credential got $status"
report_body 999999
expect_post 404 999999 "report-999999.json"
expect_post 403 "$adaptive" "report-$adaptive.json" nobody
printf '{"job_id": "%s", "gpu_type": "a100"}' "$adaptive" > bad.json
expect_post 400 "$adaptive" bad.json
head -c 70000 /dev/zero | tr '\0' ' ' > big.json
status=$(curl -s -o /dev/null -w '%{http_code}' -H "X-Munge-Cred: x" --data-binary @big.json "$api/v1/jobs/$adaptive/report")
[ "$status" = 413 ] || fail "oversized body got $status"
scontrol ping | grep -q UP || fail "slurmctld is not answering"

step "a waiting rigid job makes the adaptive job yield GPUs above its minimum"
rigid=$(sbatch --parsable --gres=gpu:a100:4 -N1 -t 10 -o /dev/null job.sh)
wait_until 40 "rigid job running" is_running "$rigid"
wait_until 20 "adaptive job running with fewer GPUs" fewer_gpus_than "$adaptive" "$grown"
grep -q "sched/pollux: JobId=$adaptive requeue: resize ${grown}x" "$run/log/slurmctld.log" ||
  fail "the adaptive job was not shrunk through a requeue"
echo "   rigid job $rigid running, adaptive job shrunk to $(job_gpus "$adaptive") GPUs"

step "Slurm's backfill starts a small rigid job behind a blocked big one"
blocker=$(sbatch --parsable --gres=gpu:v100:4 -N1 -t 30 -o /dev/null job.sh)
wait_until 20 "v100 job running" is_running "$blocker"
backfilled=$(backfilled_jobs)
big=$(sbatch --parsable --gres=gpu:v100:4 -N2 -t 30 -o /dev/null job.sh)
small=$(sbatch --parsable --gres=gpu:v100:2 -N1 -t 5 -o /dev/null job.sh)
wait_until 40 "small rigid job started" is_running "$small"
[ "$(backfilled_jobs)" -gt "$backfilled" ] || fail "job $small was not started by backfill (sdiag)"
[ "$(job_state "$big")" = PENDING ] || fail "big job $big should still wait"

step "scontrol show pollux"
"$build/src/cli/scontrol" show pollux > show.txt
grep -q "^JobId=$adaptive .*Adaptive=yes" show.txt || fail "scontrol show pollux lacks job $adaptive: $(cat show.txt)"
grep -q "Model\[a100\]" show.txt || fail "scontrol show pollux lacks the model"
"$build/src/cli/scontrol" show pollux "job=$adaptive" --json | python3 -c 'import json,sys; j = json.load(sys.stdin); assert j["reported"] and j["adaptive"], j'
"$build/src/cli/scontrol" show job "$adaptive" | grep -q "JobId=$adaptive" || fail "wrapper does not pass through"

restarts_now() {
  "$build/src/cli/scontrol" show pollux "job=$adaptive" --json |
    python3 -c 'import json,sys; j = json.load(sys.stdin); print(j["restarts"], j["reported"])'
}
restarts_are() { [ "$(restarts_now)" = "$1" ]; }
before=$(restarts_now)

step "scontrol reconfigure keeps the plugin's state"
# The state comes back from StateSaveLocation on every release: 22.05 recreates the service
# in place, 23.11 and later exec a new slurmctld.
restores() { grep -c "sched/pollux: restored state of" "$run/log/slurmctld.log" || true; }
restored_before=$(restores)
restored_again() { [ "$(restores)" -gt "$restored_before" ]; }
reconfigure_slurmctld
wait_until 20 "the plugin's state restored after reconfigure" restored_again
wait_until 20 "plugin answering after reconfigure" restarts_are "$before"

step "a slurmctld restart keeps the plugin's state"
"$here/cluster/cluster.sh" restart-ctld "$run"
grep -q "sched/pollux: restored state of" "$run/log/slurmctld.log" || fail "no state restored line"
wait_until 20 "plugin state back after restart" restarts_are "$before"
is_running "$adaptive" || fail "adaptive job lost across the restart"
echo "plugin on a real cluster: all checks passed"
