#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# pollux-fit end to end: real profiles give a table and valid JSON; bad input exits 2.
set -eu
fit="${POLLUX_BUILDDIR:-..}/src/cli/pollux-fit"
traces="${POLLUX_TRACES:?POLLUX_TRACES must name the shipped traces directory}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

"$fit" "$traces/cifar10" "$traces/bert" > "$work/table"
grep -q '^cifar10 ' "$work/table" || fail "no cifar10 row in the table"
grep -q '^bert ' "$work/table" || fail "no bert row in the table"

"$fit" --json --max-gpus 2 "$traces/imagenet" > "$work/out.json"
python3 - "$work/out.json" <<'PY' || fail "JSON output lacks keys"
import json, sys
[entry] = json.load(open(sys.argv[1]))
assert entry["profile"] == "imagenet"
assert entry["fit_samples"] > 0 and entry["held_out"] > 0
assert set(entry["perf_params"]) == {"alpha_c", "beta_c", "alpha_n", "beta_n", "alpha_r", "beta_r", "gamma"}
assert 0 <= entry["median_error"] < 1
PY

expect_usage_error() {
  status=0
  "$fit" "$@" > "$work/stdout" 2> "$work/stderr" || status=$?
  [ "$status" -eq 2 ] || fail "exit $status, not 2, for: $*"
  [ -s "$work/stderr" ] || fail "no message for: $*"
  [ ! -s "$work/stdout" ] || fail "output on stdout for: $*"
}

expect_usage_error
expect_usage_error --max-gpus 0 "$traces/cifar10"
expect_usage_error --max-gpus four "$traces/cifar10"
expect_usage_error /nonexistent
mkdir "$work/bad"
printf 'placement,local_bsz,step_time,sync_time\n1,32,nan,0\n' > "$work/bad/placements.csv"
expect_usage_error "$work/bad"
grep -q 'placements.csv:2:' "$work/stderr" || fail "error does not name file and line"
echo "pollux-fit CLI: all checks passed"
