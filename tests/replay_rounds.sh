#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Golden rounds: every round recorded from the real test cluster (tests/data/rounds/NAME.round.json,
# see its README) planned again by pollux-replay must give exactly its expected plan
# (NAME.plan.json). A change of behaviour shows here as a difference, action by action.
# Bad input: a malformed round exits 2 naming the value, with nothing on stdout.
set -eu
replay="${POLLUX_BUILDDIR:-..}/src/cli/pollux-replay"
rounds="$(cd "$(dirname "$0")" && pwd)/data/rounds"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

count=0
for round in "$rounds"/*.round.json; do
  name=$(basename "$round" .round.json)
  "$replay" "$round" > "$work/$name.plan.json" 2> "$work/$name.log" ||
    { cat "$work/$name.log" >&2; fail "$name: pollux-replay failed"; }
  python3 - "$rounds/$name.plan.json" "$work/$name.plan.json" <<'PY' || fail "$name: plan differs"
import json, sys
expected, got = (json.load(open(path)) for path in sys.argv[1:3])
if expected != got:
    for key in sorted(set(expected) | set(got)):
        if expected.get(key) != got.get(key):
            print(f"{key}:\n  expected {json.dumps(expected.get(key))}\n  got      {json.dumps(got.get(key))}")
    sys.exit(1)
PY
  echo "ok: $name ($(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["actions"]))' "$work/$name.plan.json") actions)"
  count=$((count + 1))
done
[ "$count" -ge 6 ] || fail "only $count golden rounds in $rounds"

# --events on rounds recorded one after another (agent_cluster.sh): the first sees its two
# jobs as new work; the round that requeued job 2 to grow makes it new work once its last
# run is done; the round's own starts are none.
(cd "$rounds" && "$replay" --events place-two-jobs.round.json grow-by-requeue.round.json \
  hold-while-gpus-busy.round.json) > "$work/events.out" 2> "$work/events.log" ||
  { cat "$work/events.log" >&2; fail "pollux-replay --events failed"; }
cat > "$work/events.expected" <<'EOF'
place-two-jobs.round.json: event round: JobId=1 adaptive, pending since the last round (2 such jobs)
grow-by-requeue.round.json: no new work
hold-while-gpus-busy.round.json: event round: JobId=2 requeued to restart, its last run done (1 such job)
EOF
diff "$work/events.expected" "$work/events.out" >&2 || fail "pollux-replay --events differs"
echo "ok: --events on three rounds in a row"

# Bad input is refused with a message naming the value, and nothing on stdout.
python3 - "$(ls "$rounds"/*.round.json | head -1)" "$work/bad.json" <<'PY'
import json, sys
document = json.load(open(sys.argv[1]))
document["round"]["jobs"][0]["state"] = "finished"
json.dump(document, open(sys.argv[2], "w"))
PY
status=0
"$replay" "$work/bad.json" > "$work/bad.out" 2> "$work/bad.err" || status=$?
[ "$status" -eq 2 ] || fail "a malformed round exited $status, not 2"
[ ! -s "$work/bad.out" ] || fail "a malformed round printed a plan"
grep -q "round.jobs\[0\].state" "$work/bad.err" || fail "no message naming the value: $(cat "$work/bad.err")"
status=0
"$replay" "$work/missing.json" > /dev/null 2>&1 || status=$?
[ "$status" -ne 0 ] || fail "a missing file was accepted"
echo "PASS: $count golden rounds"
