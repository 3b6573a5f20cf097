#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# pollux-sim end to end: a shipped workload under fifo and tiresias gives the JSON summary;
# pollux writes per-job rows and honours --params; event rounds start jobs sooner; bad input exits 2 with a message and
# nothing on stdout.
set -eu
sim="${POLLUX_BUILDDIR:-..}/src/sim/pollux-sim"
traces="${POLLUX_TRACES:?POLLUX_TRACES must name the shipped traces directory}"
workload="$traces/../workloads/workload-1.csv"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

for policy in fifo tiresias; do
  "$sim" --workload "$workload" --policy "$policy" --profiles "$traces" --json \
    --timeline "$work/timeline.csv" > "$work/$policy.json"
  python3 - "$work/$policy.json" <<'PY' || fail "$policy: JSON output lacks keys"
import json, sys
summary = json.load(open(sys.argv[1]))
for key in ("avg_jct_s", "p99_jct_s", "makespan_s", "restarts_per_job", "gpu_hours_per_job"):
    assert summary[key] >= 0, key
assert summary["jobs"] == 160
assert set(summary["round_ms"]) >= {"median", "p95", "max"}
assert summary["p99_jct_s"] >= summary["avg_jct_s"] > 0
PY
  head -1 "$work/timeline.csv" | grep -q '^time,job,gpu_type,gpus,batch_size,seconds$' \
    || fail "$policy: timeline header"
done
"$sim" --workload "$workload" --policy fifo --profiles "$traces" > "$work/text"
grep -q '^avg JCT' "$work/text" || fail "no text summary"

# The first 20 jobs of the workload under pollux: one row per job; a minimum change interval
# of a week (--params) leaves every running job where it started.
head -21 "$workload" > "$work/small.csv"
"$sim" --workload "$work/small.csv" --policy pollux --profiles "$traces" --json \
  --jobs "$work/jobs.csv" > "$work/pollux.json"
"$sim" --workload "$work/small.csv" --policy pollux --profiles "$traces" --json \
  --params pollux_min_change_interval=604800 > "$work/pinned.json"
python3 - "$work/jobs.csv" "$work/pollux.json" "$work/pinned.json" <<'PY' || fail "pollux --jobs/--params"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 20, len(rows)
for row in rows:
    assert float(row["completion_s"]) > float(row["submit_s"]), row
    assert abs(float(row["jct_s"]) - (float(row["completion_s"]) - float(row["submit_s"]))) < 1e-3
summary, pinned = (json.load(open(path)) for path in sys.argv[2:])
jct = sum(float(row["jct_s"]) for row in rows) / len(rows)
assert abs(jct - summary["avg_jct_s"]) < 1e-3 * jct, (jct, summary["avg_jct_s"])
assert summary["restarts_per_job"] > 0 and pinned["restarts_per_job"] == 0, (summary, pinned)
PY

# Event rounds (--event-delay 1): a round a second after each arrival, so the same jobs under
# fifo start sooner than at the next 60 s round, in more rounds.
"$sim" --workload "$work/small.csv" --policy fifo --profiles "$traces" --json > "$work/regular.json"
"$sim" --workload "$work/small.csv" --policy fifo --profiles "$traces" --json --event-delay 1 \
  > "$work/events.json"
python3 - "$work/regular.json" "$work/events.json" <<'PY' || fail "--event-delay"
import json, sys
regular, events = (json.load(open(path)) for path in sys.argv[1:])
assert events["avg_jct_s"] < regular["avg_jct_s"], (events["avg_jct_s"], regular["avg_jct_s"])
assert events["rounds"] > regular["rounds"], (events["rounds"], regular["rounds"])
PY

expect_usage_error() {
  status=0
  "$sim" "$@" > "$work/stdout" 2> "$work/stderr" || status=$?
  [ "$status" -eq 2 ] || fail "exit $status, not 2, for: $*"
  [ -s "$work/stderr" ] || fail "no message for: $*"
  [ ! -s "$work/stdout" ] || fail "output on stdout for: $*"
}

expect_usage_error
expect_usage_error --workload "$workload"
expect_usage_error --workload "$workload" --policy sjf
expect_usage_error --workload /nonexistent.csv --policy fifo --profiles "$traces"
expect_usage_error --workload "$workload" --policy fifo --profiles "$traces" --cluster t4:16
expect_usage_error --workload "$workload" --policy fifo --profiles "$traces" --round 0
expect_usage_error --workload "$workload" --policy fifo --profiles "$traces" --event-delay -1
expect_usage_error --workload "$workload" --policy fifo --profiles "$traces" --restart-cost gpt=5
expect_usage_error --workload "$workload" --policy pollux --profiles "$traces" --join-startup gpt=5
grep -q "join-startup names unknown application 'gpt'" "$work/stderr" ||
  fail "unknown application of --join-startup not named"
expect_usage_error --workload "$workload" --policy pollux --profiles "$traces" --params pollux_rest_port=1
grep -q "'pollux_rest_port' is not a policy key" "$work/stderr" || fail "non-policy key not named"
expect_usage_error --workload "$workload" --policy pollux --profiles "$traces" --params pollux_fairness_p=2
expect_usage_error --workload "$workload" --policy fifo --profiles "$traces" --jobs /nonexistent/jobs.csv
grep -q '/nonexistent/jobs.csv: cannot write' "$work/stderr" || fail "unwritable --jobs not named"
expect_usage_error --workload "$workload" --policy fifo --profiles "$traces" --timeline /nonexistent/t.csv
printf 'name,time,application,num_replicas,batch_size\njob,0,nosuchapp,1,32\n' > "$work/app.csv"
expect_usage_error --workload "$work/app.csv" --policy fifo --profiles "$traces"
grep -q "unknown application 'nosuchapp'" "$work/stderr" || fail "unknown application not named"
printf 'name,time,application,num_replicas,batch_size\njob,0,cifar10,one,32\n' > "$work/bad.csv"
expect_usage_error --workload "$work/bad.csv" --policy fifo --profiles "$traces"
grep -q 'bad.csv:2:' "$work/stderr" || fail "error does not name file and line"
echo "pollux-sim CLI: all checks passed"
