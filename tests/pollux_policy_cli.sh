#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# pollux-policy end to end: a snapshot gives a decision within capacity; a live move whose
# GPUs a starting job would wait for is made by restart (restarted_for); bad input exits 2
# with a message naming the problem and nothing on stdout.
set -eu
policy="${POLLUX_BUILDDIR:-..}/src/cli/pollux-policy"
data="$(cd "$(dirname "$0")" && pwd)/data"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

"$policy" < "$data/snapshot-small.json" > "$work/decision.json"
python3 - "$data/snapshot-small.json" "$work/decision.json" <<'PY' || fail "decision is inconsistent"
import json, sys
snapshot = json.load(open(sys.argv[1]))
decision = json.load(open(sys.argv[2]))
capacity = {n["name"]: (n["gpu_type"], n["gpus"]) for n in snapshot["nodes"]}
jobs = {j["id"]: j for j in snapshot["jobs"]}
used = {}
for job_id, alloc in decision["allocations"].items():
    job = jobs[job_id]
    total = sum(alloc["nodes"].values())
    assert job["min_gpus"] <= total <= job["max_gpus"], (job_id, total)
    for node, gpus in alloc["nodes"].items():
        assert capacity[node][0] == alloc["gpu_type"], (job_id, node)
        used[node] = used.get(node, 0) + gpus
    if job["adaptive"] and job.get("models"):
        b = alloc["batch_size"]
        assert b == total * alloc["local_bsz"] * (alloc["accum_steps"] + 1), alloc
        assert job["init_batch_size"] <= b <= job["max_batch_size"], alloc
for node, gpus in used.items():
    assert gpus <= capacity[node][1], (node, gpus)
# A job without a model yet starts on its minimum and keeps its own batch size.
assert decision["allocations"]["102"]["batch_size"] == 0
# Nothing else is waiting and the cluster has room: every job runs.
assert set(decision["allocations"]) == set(jobs), decision["allocations"].keys()
stats = decision["stats"]
assert stats["solve_ms"] >= 0 and stats["solver_status"] in ("optimal", "feasible"), stats
PY

# A job whose GPUs are all in parts must leave n0 (its partition is n1's); a rigid job that
# only n0 takes starts there. The move's joiners take 30 s to start, the rigid job's own
# start 0 s: the move is made by restart, for that job; with joiners that start at once, live.
cat > "$work/move.json" <<'EOF_SNAPSHOT'
{"time": 1000,
 "nodes": [{"name": "n0", "gpu_type": "t4", "gpus": 4},
           {"name": "n1", "gpu_type": "t4", "gpus": 4}],
 "partitions": {"away": ["n1"], "stay": ["n0"]},
 "jobs": [
  {"id": "7", "submit_time": 0, "adaptive": true, "min_gpus": 4, "max_gpus": 4,
   "partition": "away", "current": {"gpu_type": "t4", "nodes": {"n0": 4}},
   "parts": [{"gpu_type": "t4", "nodes": {"n0": 4}}], "grows_live": true, "moves_live": true,
   "restart_cost_s": 30, "join_startup_s": 30, "grad_params": {"sqr": 0.2, "var": 40.0},
   "init_batch_size": 128, "max_batch_size": 4096, "local_bsz_bounds": [32, 512],
   "accumulation": true},
  {"id": "8", "submit_time": 900, "adaptive": false, "min_gpus": 4, "max_gpus": 4,
   "partition": "stay"}]}
EOF_SNAPSHOT
"$policy" < "$work/move.json" > "$work/decision.json"
sed 's/"join_startup_s": 30/"join_startup_s": 0/' "$work/move.json" | "$policy" > "$work/live.json"
python3 - "$work/decision.json" "$work/live.json" <<'PY' || fail "a move a starting job waits for"
import json, sys
restarted, live = (json.load(open(path))["allocations"] for path in sys.argv[1:])
for allocations in (restarted, live):
    assert allocations["7"]["nodes"] == {"n1": 4}, allocations
    assert allocations["8"]["nodes"] == {"n0": 4}, allocations
assert restarted["7"]["restarted_for"] == "8", restarted
assert "restarted_for" not in live["7"] and "restarted_for" not in restarted["8"], live
PY

expect_rejected() {  # $1: snapshot text, $2: text the message must contain
  status=0
  printf '%s' "$1" | "$policy" > "$work/stdout" 2> "$work/stderr" || status=$?
  [ "$status" -eq 2 ] || fail "exit $status, not 2, for: $1"
  [ ! -s "$work/stdout" ] || fail "output on stdout for: $1"
  grep -q -- "$2" "$work/stderr" || fail "message lacks '$2': $(cat "$work/stderr")"
}

expect_rejected '' 'malformed JSON'
expect_rejected '{"time": 0, "nodes": [], "jobs": [' 'malformed JSON'
expect_rejected '{"time": "now", "nodes": [], "jobs": []}' 'time: must be a number'
expect_rejected '{"time": 0, "nodes": [{"name": "n1", "gpu_type": "a100", "gpus": -1}], "jobs": []}' 'nodes\[0\].gpus'
expect_rejected '{"time": 0, "nodes": [], "jobs": [{"id": "1", "submit_time": 0, "adaptive": false, "min_gpus": 2, "max_gpus": 2, "current": {"gpu_type": "a100", "nodes": {"ghost": 2}}}]}' 'ghost'
expect_rejected '{"time": 0, "nodes": [], "jobs": [], "colour": 1}' "unknown key 'colour'"
status=0
"$policy" --bogus < /dev/null > /dev/null 2>&1 || status=$?
[ "$status" -eq 2 ] || fail "unknown argument exit $status, not 2"
echo "pollux-policy CLI: all checks passed"
