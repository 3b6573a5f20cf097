#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# examples/train_ddp.py under pollux-agent without Slurm (the plugin unreachable): two workers
# with torchrun's environment train to the accuracy of one process alone (within 1 point);
# a SIGTERM to the agent makes both workers stop at the same step and rank 0 checkpoint;
# resumed with three workers, the job repeats and skips no example; with live changes off
# (POLLUX_ELASTIC=0), one worker killed makes the agent stop the other and fail at once. Needs python3-torch and python3-sklearn.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
agent="${POLLUX_BUILDDIR:-..}/src/agent/pollux-agent"
python=${PYTHON:-/usr/bin/python3}
example="$here/../examples/train_ddp.py"
export PYTHONPATH="$here/../python"
"$python" -c "import torch, sklearn" 2> /dev/null ||
  { echo "FAIL: $python lacks torch or sklearn (scripts/install-deps installs them)" >&2; exit 1; }
work=$(mktemp -d)
agent_pid=
trap '[ -z "$agent_pid" ] || kill -KILL "$agent_pid" 2> /dev/null || true; rm -rf "$work"' EXIT
cd "$work"
EPOCHS=12

fail() { echo "FAIL: $*" >&2; exit 1; }
accuracy() { sed -n 's/^final accuracy: //p' "$1"; }

# run_agent WORKERS JOBID OUTPUT [ARGS...]: the example under pollux-agent, in the background.
run_agent() {
  workers=$1 job=$2 output=$3
  shift 3
  env SLURM_JOB_ID="$job" SLURM_SUBMIT_DIR="$work" OMP_NUM_THREADS=1 "$agent" \
    --rest-url http://127.0.0.1:9 --munge-socket "$work/no-munged" --gpu-type a100 \
    --nproc-per-node "$workers" --grace 20 -- "$python" "$example" "$@" > "$output" 2>&1 &
  agent_pid=$!
}

echo "== one process alone, then two workers under pollux-agent: the same accuracy"
"$python" "$example" --checkpoint alone.pt --epochs $EPOCHS > alone.out 2>&1 ||
  { cat alone.out; fail "the example failed alone"; }
run_agent 2 101 two.out --checkpoint two.pt --epochs $EPOCHS
wait "$agent_pid" || { cat two.out; fail "the example failed with two workers"; }
agent_pid=
alone=$(accuracy alone.out) two=$(accuracy two.out)
echo "   accuracy alone $alone, two workers $two"
"$python" -c "import sys; sys.exit(abs($alone - $two) > 0.01)" ||
  fail "two workers reached $two, one process $alone"

echo "== SIGTERM mid-run: both workers stop at one step, rank 0 checkpoints; three resume"
run_agent 2 102 stopped.out --checkpoint resume.pt --epochs $EPOCHS --log-examples examples
for _ in $(seq 100); do grep -q "^epoch 2:" stopped.out && break; sleep 0.2; done
kill -TERM "$agent_pid"
status=0
wait "$agent_pid" || status=$?
agent_pid=
[ "$status" -eq 143 ] || { tail stopped.out; fail "the agent exited $status after SIGTERM, not 143"; }
grep -q "^checkpointed at epoch" stopped.out || fail "no checkpoint: $(tail -3 stopped.out)"
run_agent 3 102 resumed.out --checkpoint resume.pt --epochs $EPOCHS --log-examples examples
wait "$agent_pid" || { tail resumed.out; fail "the resumed job failed"; }
agent_pid=
grep -q "^resumed from resume.pt at epoch .* with 3 worker(s)" resumed.out ||
  fail "not resumed: $(head -3 resumed.out)"
"$python" - $EPOCHS examples.rank* <<'PY' || fail "examples repeated or skipped"
import collections, re, sys
epochs, *outputs = sys.argv[1:]
seen = collections.defaultdict(list)
for path in outputs:
    for line in open(path):
        match = re.match(r"examples epoch=(\d+) rank=\d+: ([\d,]*)$", line.strip())
        if match and match.group(2):
            seen[int(match.group(1))].extend(int(i) for i in match.group(2).split(","))
for epoch in range(int(epochs)):
    counts = collections.Counter(seen[epoch])
    repeated = [i for i, n in counts.items() if n > 1]
    missing = [i for i in range(1497) if i not in counts]
    if repeated or missing:
        print(f"epoch {epoch}: {len(repeated)} repeated, {len(missing)} skipped")
        sys.exit(1)
print(f"   every example once in each of {epochs} epochs across the stop and the resume")
PY
resumed=$(accuracy resumed.out)
"$python" -c "import sys; sys.exit(abs($alone - $resumed) > 0.01)" ||
  fail "resumed job reached $resumed, one process $alone"

echo "== one of two workers killed, live changes off: the agent stops the other and fails"
# POLLUX_ELASTIC=0: today's path, as for a torchrun-style script without the pollux package
# (with live changes on, the survivor re-forms and goes on: tests/ddp_cluster.sh).
export POLLUX_ELASTIC=0
run_agent 2 103 killed.out --checkpoint killed.pt --epochs 1000
for _ in $(seq 100); do grep -q "^epoch 1:" killed.out && break; sleep 0.2; done
worker=$(pgrep -P "$agent_pid" | tail -1)
[ -n "$worker" ] || fail "no worker to kill"
start=$(date +%s)
kill -KILL "$worker"
status=0
wait "$agent_pid" || status=$?
agent_pid=
[ "$status" -ne 0 ] || fail "the agent exited 0 after a worker was killed"
[ $(($(date +%s) - start)) -lt 30 ] || fail "the agent took $(($(date +%s) - start)) s to stop"
grep -q "exited with status 137; stopping the others" killed.out || fail "$(tail -3 killed.out)"
echo "PASS"
