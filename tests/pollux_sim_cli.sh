#!/bin/sh
# pollux-sim end to end: a shipped workload under fifo and tiresias gives the JSON summary;
# bad input exits 2 with a message and nothing on stdout.
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
  head -1 "$work/timeline.csv" | grep -q '^time,job,gpu_type,gpus,batch_size$' \
    || fail "$policy: timeline header"
done
"$sim" --workload "$workload" --policy fifo --profiles "$traces" > "$work/text"
grep -q '^avg JCT' "$work/text" || fail "no text summary"

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
expect_usage_error --workload "$workload" --policy fifo --profiles "$traces" --restart-cost gpt=5
printf 'name,time,application,num_replicas,batch_size\njob,0,nosuchapp,1,32\n' > "$work/app.csv"
expect_usage_error --workload "$work/app.csv" --policy fifo --profiles "$traces"
grep -q "unknown application 'nosuchapp'" "$work/stderr" || fail "unknown application not named"
printf 'name,time,application,num_replicas,batch_size\njob,0,cifar10,one,32\n' > "$work/bad.csv"
expect_usage_error --workload "$work/bad.csv" --policy fifo --profiles "$traces"
grep -q 'bad.csv:2:' "$work/stderr" || fail "error does not name file and line"
echo "pollux-sim CLI: all checks passed"
