# SPDX-License-Identifier: GPL-2.0-or-later
# Shell helpers for scripts that drive a cluster.sh cluster (source after RUN_DIR/env).

fail() { echo "FAIL: $*" >&2; exit 1; }
# Each step shows the seconds since the test began: where a test's time goes.
test_began=$(date +%s)
step() { echo "== [$(($(date +%s) - test_began)) s] $*"; }

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_until SECONDS DESCRIPTION COMMAND... A wait of 20 s or more is logged: where a test's
# time goes.
wait_until() {
  limit=$1; what=$2; shift 2
  wait_began=$(date +%s)
  for _ in $(seq $((limit * 2))); do
    if "$@" > /dev/null 2>&1; then
      wait_took=$(($(date +%s) - wait_began))
      [ "$wait_took" -lt 20 ] || echo "   (waited ${wait_took} s for: $what)" >&2
      return 0
    fi
    sleep 0.5
  done
  fail "timed out after ${limit}s waiting for: $what"
}

# From 23.11 on, slurmctld answers `scontrol reconfigure` once the new slurmctld it execs has
# started, which can take longer than MessageTimeout on a busy machine while the reconfigure
# itself goes on (seen on 25.11 with two test clusters running): a reply that timed out is
# waited out here, and callers check the reconfigure's effect.
reconfigure_slurmctld() {
  if scontrol reconfigure 2> reconfigure.err; then return 0; fi
  grep -q "timed out" reconfigure.err || fail "scontrol reconfigure: $(cat reconfigure.err)"
  wait_until "${1:-60}" "slurmctld answering after a reconfigure whose reply timed out" scontrol ping
}

job_field() { scontrol show job "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1; }
job_state() { squeue -h -j "$1" -o %T 2> /dev/null; }
is_running() { [ "$(job_state "$1")" = RUNNING ]; }
# GPUs a running job holds: GPUs per node x nodes.
job_gpus() { squeue -h -j "$1" -o "%b %D" | sed -E 's/.*gpu:([a-z0-9]+:)?([0-9]+) ([0-9]+)/\2 \3/' | awk '{print $1 * $2}'; }
more_gpus_than() { is_running "$1" && [ "$(job_gpus "$1")" -gt "$2" ]; }
fewer_gpus_than() { is_running "$1" && [ "$(job_gpus "$1")" -lt "$2" ]; }
runs_on() { is_running "$1" && [ "$(job_field "$1" NodeList)" = "$2" ]; }  # runs_on JOB NODES
# held_by_pollux JOB: the job may not begin until sched/pollux places it (its begin time is
# Pollux's hold, 2100-01-01).
held_by_pollux() { case "$(job_field "$1" EligibleTime)" in 2099-12-31T*|2100-01-01T*) ;; *) return 1 ;; esac; }
# placed JOB: whether sched/pollux has placed the job (the run dir's slurmctld log says so).
placed() { grep -q "sched/pollux: JobId=$1 start:" log/slurmctld.log; }
# placed_once JOB: fails the test unless sched/pollux placed the job exactly once.
placed_once() {
  placements=$(grep -c "sched/pollux: JobId=$1 start:" log/slurmctld.log || true)
  [ "$placements" = 1 ] ||
    fail "job $1 was placed $placements times: $(grep "JobId=$1 start:" log/slurmctld.log)"
}
# Jobs Slurm's backfill has started since slurmctld started (sdiag: every release counts
# them; 26.05's backfill no longer logs "Started JobId=").
backfilled_jobs() { sdiag | sed -n 's/^[[:space:]]*Total backfilled jobs (since last slurm start): *//p'; }
# True when none of the given jobs is pending or running any more.
all_finished() { [ -z "$(squeue -h -j "$(echo "$@" | tr ' ' ',')" -o %i 2> /dev/null)" ]; }

# Writes $run/train.sh, the job script an ML user writes, with pollux-emulate as the training
# command (arguments: APP TIME_SCALE TARGET_FRACTION). Call after setup_test_cluster. With
# `launch`, the script runs `pollux-agent --launch` (which can be shrunk in place) instead of
# `srun pollux-agent`. pollux-emulate plays all of a node's GPUs in one process, so one worker
# per node (--nproc-per-node 1). A run after a requeue fails at its start, once, while the
# file $run/fail-after-requeue-JOBID exists (as when its srun meets a slurmctld restart).
# While $run/linger-JOBID exists, the script goes on 16 s after training (as an evaluation or
# a copy-out would).
write_train_script() {  # write_train_script [launch]
  agent="srun '$build/src/agent/pollux-agent'"
  [ "${1:-}" != launch ] || agent="'$build/src/agent/pollux-agent' --launch"
  cat > "$run/train.sh" <<EOF
#!/bin/sh
if [ "\${SLURM_RESTART_COUNT:-0}" -gt 0 ] && rm "$run/fail-after-requeue-\$SLURM_JOB_ID" 2> /dev/null; then
  echo "train.sh: this run fails at its start, as asked"
  exit 1
fi
$agent --nproc-per-node 1 --report-interval 1 --grace 10 -v -- \\
  "$build/src/emulate/pollux-emulate" --profiles "${POLLUX_TRACES:?}" --app "\$1" \\
  --time-scale "\$2" --target-fraction "\$3" --startup 1 --speed a100=3 \\
  --checkpoint "$run/ckpt-\$SLURM_JOB_ID"
status=\$?
[ ! -e "$run/linger-\$SLURM_JOB_ID" ] || { echo "train.sh: lingering after training"; sleep 16; }
exit \$status
EOF
}

# submit_adaptive APP TIME_SCALE TARGET_FRACTION: submits train.sh, prints the job id.
submit_adaptive() {
  sbatch --parsable --comment=adaptive:max_gpus=8 --open-mode=append -o "$run/job-%j.out" \
    -J "$1" "$run/train.sh" "$@"
}

# resumed_without_loss JOB: fails unless JOB's trainer (pollux-emulate) resumed at least once,
# each time at the progress of the checkpoint it wrote last ("checkpoint ... at progress P",
# then "resumed from ... at progress P"), in job-JOB.out.
resumed_without_loss() {
  grep -E "pollux-emulate: (checkpoint written|resumed from)" "job-$1.out" > "progress-$1.log" ||
    fail "job $1 logged no checkpoint or resume"
  sed 's/^/   /' "progress-$1.log"
  python3 - "progress-$1.log" <<'PY' || fail "job $1 lost progress across a restart"
import re, sys
events = [(m.group(1), float(m.group(2))) for m in
          (re.search(r"(checkpoint written|resumed from).* at progress ([0-9.eE+-]+)", line)
           for line in open(sys.argv[1])) if m]
resumes = [i for i, (kind, _) in enumerate(events) if kind == "resumed from"]
assert resumes, "never resumed"
for i in resumes:
    saved = [p for kind, p in events[:i] if kind == "checkpoint written"]
    assert saved and abs(events[i][1] - saved[-1]) <= 1e-9 * max(1, saved[-1]), events
    assert events[i][1] > 0, events
PY
}

# Starts this run's cluster with sched/pollux, job_submit/pollux and the settings the tests
# with agents share (2 s rounds, no minimum time between changes, a100 3x as fast as v100),
# sources its env, enters the run dir and writes train.sh. EXTRA: more slurm.conf lines,
# separated by a literal \n. POLLUX_TEST_PARAMS: more SchedulerParameters (comma-separated).
# With POLLUX_DUMP_ROUNDS=DIR set, the plugin writes every round
# to DIR/<run>/ for pollux-replay (how tests/data/rounds/ was recorded).
start_pollux_cluster() {  # start_pollux_cluster [EXTRA]
  dump=
  if [ -n "${POLLUX_DUMP_ROUNDS:-}" ]; then
    mkdir -p "$POLLUX_DUMP_ROUNDS/$(basename "$run")"
    dump=",pollux_dump_rounds=$POLLUX_DUMP_ROUNDS/$(basename "$run")"
  fi
  "$here/cluster/cluster.sh" start "$run" sched/pollux \
    "pollux_interval=2,pollux_rest_port=$port,pollux_min_change_interval=0,pollux_speed_a100=3$dump${POLLUX_TEST_PARAMS:+,$POLLUX_TEST_PARAMS}" \
    "$plugins" "JobSubmitPlugins=pollux\\nMinJobAge=600${1:+\\n$1}"
  . "$run/env"
  cd "$run"
  write_train_script
}

# For a test script in tests/ (with $here set to tests/): sets build, run, plugins, port and
# api, and stops this run's cluster on exit (and its accounting, if the test started
# tests/cluster/accounting.sh in the run dir), printing the slurmctld log's pollux lines and
# the job outputs first if the test failed. A process of the run that survives its stop
# fails the test (the run dir is then kept).
setup_test_cluster() {  # setup_test_cluster NAME
  build="${POLLUX_BUILDDIR:?}"
  run=$(mktemp -d "/tmp/pollux-$1-test-XXXXXX")
  # Temporary files of the test, its daemons and its jobs (sbatch passes the environment on)
  # go with the run directory: an agent that a test kills leaves its channel directory.
  mkdir "$run/tmp"
  export TMPDIR="$run/tmp"
  plugins="$build/src/plugins/sched/pollux/.libs:$build/src/plugins/job_submit/pollux/.libs:$("$here/cluster/cluster.sh" plugindir)"
  port=$(free_port)
  api="http://127.0.0.1:$port"
  trap stop_test_cluster EXIT
}

# Processes a test started in the background (a reference training): stopped with the cluster.
background_pids=

stop_test_cluster() {
  status=$?
  for pid in $background_pids; do kill "$pid" 2> /dev/null || true; done
  if [ "$status" -ne 0 ] && [ -f "$run/log/slurmctld.log" ]; then
    echo "--- slurmctld log (pollux's actions, backfill, errors; not every round) ---" >&2
    grep -E "pollux|backfill|error" "$run/log/slurmctld.log" |
      grep -Ev "sched/pollux: round [0-9.]+ ms|_attempt_backfill: (beginning|no jobs)" |
      tail -n 60 >&2 || true
    # Where a wait timed out: the jobs and nodes as Slurm shows them at the end.
    echo "--- squeue and sinfo at the end ---" >&2
    squeue -o "%i %T %r %N %k" >&2 || true
    sinfo -N -o "%N %T %E" >&2 || true
    for out in "$run"/job-*.out; do
      [ -e "$out" ] || continue
      # What the agents and the trainer said besides their reports, then the end.
      echo "--- $out: pollux lines" >&2
      grep -E "^pollux|^resumed from|^checkpointed at" "$out" | grep -v "report accepted" |
        tail -n 30 >&2 || true
      echo "--- $out: the end" >&2
      tail -n 25 "$out" >&2
    done
  fi
  left=0
  "$here/cluster/cluster.sh" stop "$run" || left=1
  if [ -f "$run/dbd/pids" ]; then "$here/cluster/accounting.sh" stop "$run" || left=1; fi
  if [ "$left" -ne 0 ]; then
    echo "FAIL: processes of $run survived its stop (listed above); $run kept" >&2
    exit 1
  fi
  rm -rf "$run"
  exit "$status"
}

# every_example_once JOB EPOCHS: fails unless JOB's ranks together took every example of the
# example's 1,497 once in each epoch (from the example's --log-examples files). On a failure:
# which files logged the repeated examples, and the trainer's own lines (its live changes).
every_example_once() {
  "${python:-/usr/bin/python3}" - "$2" examples-"$1".rank* <<'PY' || { grep "^pollux:" "job-$1.out" >&2; fail "job $1 repeated or skipped examples"; }
import collections, re, sys
epochs, paths = int(sys.argv[1]), sys.argv[2:]
seen = collections.defaultdict(list)  # epoch -> [(example, file, line number)]
for path in paths:
    for number, line in enumerate(open(path), 1):
        match = re.match(r"examples epoch=(\d+) rank=\d+: ([\d,]*)$", line.strip())
        if match and match.group(2):
            seen[int(match.group(1))].extend((int(i), path, number) for i in match.group(2).split(","))
for epoch in range(epochs):
    counts = collections.Counter(example for example, _, _ in seen[epoch])
    repeated = sorted(example for example, n in counts.items() if n > 1)
    missing = sum(1 for i in range(1497) if i not in counts)
    if repeated or missing:
        where = sorted({f"{path.rsplit('/', 1)[-1]}:{number}" for example, path, number in seen[epoch]
                        if example in repeated[:8]})
        sys.exit(f"epoch {epoch}: {len(repeated)} repeated, {missing} skipped; repeated ones "
                 f"logged at {' '.join(where)}")
print(f"   every example once in each of {epochs} epochs")
PY
}

# For the tests that train examples/train_ddp.py (the pollux package, CPU/gloo): sets python,
# example and pythonpath, and fails where torch or sklearn are missing.
use_ddp_example() {
  python=${PYTHON:-/usr/bin/python3}
  example=$(cd "$here/../examples" && pwd)/train_ddp.py
  pythonpath=$(cd "$here/../python" && pwd)
  "$python" -c "import torch, sklearn" 2> /dev/null ||
    fail "$python lacks torch or sklearn (scripts/install-deps installs them)"
}

# start_reference EPOCHS: the example alone for EPOCHS epochs, in the background beside the
# test's first job; reference_accuracy then waits for it and sets $alone to its final
# accuracy, which the jobs that train the example must reach (within 1 point). It depends on
# the example, the pollux package, the epochs, the Python packages and the CPU, not on Slurm:
# where POLLUX_TEST_REFERENCES names a directory (scripts/test's cache), each is computed
# once, keyed by all of these, and read by the releases' and later runs' tests.
start_reference() {
  reference_file=
  if [ -n "${POLLUX_TEST_REFERENCES:-}" ]; then
    reference_file=$POLLUX_TEST_REFERENCES/accuracy-$({
      cat "$example" "$pythonpath"/pollux/*.py
      "$python" -c 'import sys, numpy, sklearn, torch
print(sys.version, numpy.__version__, sklearn.__version__, torch.__version__)'
      dpkg-query -W python3-torch python3-sklearn python3-numpy 2> /dev/null || true
      grep -m 1 "^model name" /proc/cpuinfo || true
    } | sha256sum | cut -c1-16)-$1
    if [ -s "$reference_file" ]; then
      echo "   computed earlier: $(cat "$reference_file") ($reference_file)"
      return
    fi
  fi
  PYTHONPATH="$pythonpath" OMP_NUM_THREADS=1 "$python" "$example" --checkpoint alone.pt \
    --epochs "$1" > alone.out 2>&1 &
  alone_pid=$!
  background_pids="$background_pids $alone_pid"
}
reference_accuracy() {
  if [ -n "$reference_file" ] && [ -s "$reference_file" ]; then
    alone=$(cat "$reference_file")
    return
  fi
  wait "$alone_pid" || { tail alone.out; fail "the script failed alone"; }
  alone=$(sed -n 's/^final accuracy: //p' alone.out)
  [ -n "$alone" ] || { tail alone.out; fail "the script alone printed no final accuracy"; }
  if [ -n "$reference_file" ]; then
    echo "$alone" > "$reference_file.$$" && mv "$reference_file.$$" "$reference_file"
  fi
}

# Writes ddp_launch.sh in the run dir: the example under `pollux-agent --launch` (one worker
# per GPU, reports every second), its checkpoint and example logs named by the job id; exec'd,
# as the example, so that the launcher outlives Slurm's SIGTERM to the job.
# Its argument is the training's epochs; a run of the job after a requeue trains the epochs
# in the run directory's epochs-JOBID instead, where the test wrote that file (a job whose
# checks end with its resume need not train its whole first length again).
write_ddp_launch_script() {  # write_ddp_launch_script [GRACE_SECONDS]
  cat > ddp_launch.sh <<JOB
#!/bin/sh
#SBATCH --ntasks-per-node=1
export MASTER_ADDR=127.0.0.1 PYTHONPATH='$pythonpath' OMP_NUM_THREADS=1
epochs=\$(cat '$run'/epochs-\$SLURM_JOB_ID 2> /dev/null || echo "\$1")
exec '$build/src/agent/pollux-agent' --launch --report-interval 1 --grace ${1:-20} -v -- \
  '$python' '$example' --checkpoint '$run'/ddp-\$SLURM_JOB_ID.pt --epochs "\$epochs" \
    --log-examples '$run'/examples-\$SLURM_JOB_ID
JOB
}

# workers_of JOB: the process ids of JOB's training processes (the example's).
workers_of() { pgrep -f "^$python .*ddp-$1.pt" | sort | tr '\n' ' '; }
# outlive PIDS WHAT: fails unless every process of PIDS still runs.
outlive() {
  for pid in $1; do kill -0 "$pid" 2> /dev/null || fail "worker $pid did not outlive $2"; done
}
# changed_live JOB FROM TO: JOB's trainer changed its world size live from FROM to TO.
changed_live() { grep -q "pollux: live change to generation .*: $2 -> $3 replicas" "job-$1.out"; }
# reported_live_change JOB FROM TO: JOB's agent reported after telling of that change, so the
# plugin counts the workers of its part as joined (or gone) before the test moves on.
reported_live_change() {
  awk -v change="the trainer changed its world size live: $2 -> $3 replicas" \
    'index($0, change) { changed = 1 } changed && /report accepted/ { found = 1 }
     END { exit !found }' "job-$1.out"
}
# running_parts_of JOB: the ids of JOB's running parts (jobs with comment adaptive:part_of=JOB).
running_parts_of() {
  squeue -h -t R -o "%i %k" | awk -v c="adaptive:part_of=$1" '$2 == c { print $1 }'
}
# cancel_with_parts JOB: scancel JOB; fails unless it and its parts end within 60 s, and its
# workers then.
cancel_with_parts() {
  scancel "$1"
  wait_until 60 "job $1 and its parts ended" sh -c \
    "[ -z \"\$(squeue -h -o '%i %k' | grep -e '^$1 ' -e 'adaptive:part_of=$1\$')\" ]"
  wait_until 60 "its workers gone" has_no_workers "$1"
}
has_no_workers() { [ -z "$(workers_of "$1")" ]; }
show_part() { echo "   part $1 on $(job_field "$1" NodeList) with $(job_field "$1" TresPerNode)"; }
