#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# pollux-agent as the node's launcher, without Slurm: one worker per GPU of the node with
# torchrun's environment contract, CUDA_VISIBLE_DEVICES narrowed to each worker's GPU and
# OMP_NUM_THREADS=1 unless the job sets it (one worker alone: unset); a failing worker stops
# its siblings at once and the agent exits with its status; a bad --nproc-per-node is refused
# with a message; an agent whose worker becomes the job's rank 0 at a live change leads the
# job from then on (it writes the step's status), and one whose workers all leave the job live
# leads no more. The plugin is unreachable here: the agent only logs that its reports fail.
set -eu
agent="${POLLUX_BUILDDIR:-..}/src/agent/pollux-agent"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

fail() { echo "FAIL: $*" >&2; exit 1; }

cat > worker.sh <<'SH'
#!/bin/sh
echo "RANK=$RANK LOCAL_RANK=$LOCAL_RANK WORLD_SIZE=$WORLD_SIZE LOCAL_WORLD_SIZE=$LOCAL_WORLD_SIZE GROUP_RANK=$GROUP_RANK MASTER=$MASTER_ADDR:$MASTER_PORT CUDA=${CUDA_VISIBLE_DEVICES:-none} OMP=${OMP_NUM_THREADS:-none}" > "out.$RANK"
[ "${FAIL_RANK:-none}" != "$RANK" ] || exit 3
echo $$ > "pid.$RANK"
exec sleep "${SLEEP:-0}"
SH
chmod +x worker.sh

run_agent() {  # run_agent [ENV=VALUE...] -- AGENT-ARGS...
  env -u OMP_NUM_THREADS SLURM_JOB_ID=4242 SLURM_SUBMIT_DIR="$work" "$@"
}
options="--rest-url http://127.0.0.1:9 --munge-socket $work/no-munged --gpu-type a100"

echo "== node 1 of 2, two GPUs: two workers, ranks 2 and 3 of 4"
run_agent SLURM_NODEID=1 SLURM_JOB_NUM_NODES=2 SLURM_JOB_NODELIST='n[3-4]' \
  SLURM_GPUS_ON_NODE=2 CUDA_VISIBLE_DEVICES=0,1 "$agent" $options -- ./worker.sh > agent.log 2>&1 ||
  { cat agent.log; fail "the agent failed"; }
[ "$(cat out.2)" = "RANK=2 LOCAL_RANK=0 WORLD_SIZE=4 LOCAL_WORLD_SIZE=2 GROUP_RANK=1 MASTER=n3:24242 CUDA=0 OMP=1" ] ||
  fail "worker 0: $(cat out.2)"
[ "$(cat out.3)" = "RANK=3 LOCAL_RANK=1 WORLD_SIZE=4 LOCAL_WORLD_SIZE=2 GROUP_RANK=1 MASTER=n3:24242 CUDA=1 OMP=1" ] ||
  fail "worker 1: $(cat out.3)"
grep -q "started 2 workers (.*, OMP_NUM_THREADS 1: set it in the job to tune it)" agent.log ||
  fail "no OMP_NUM_THREADS in the agent's line: $(grep started agent.log)"
rm -f out.*

echo "== the job's own OMP_NUM_THREADS: every worker keeps it"
run_agent SLURM_GPUS_ON_NODE=2 CUDA_VISIBLE_DEVICES=0,1 OMP_NUM_THREADS=3 "$agent" $options \
  -- ./worker.sh > agent.log 2>&1 || { cat agent.log; fail "the agent failed"; }
grep -q " OMP=3$" out.0 && grep -q " OMP=3$" out.1 || fail "$(cat out.0 out.1)"
rm -f out.*

echo "== --nproc-per-node 1 on that node: one process that sees both GPUs"
run_agent SLURM_GPUS_ON_NODE=2 CUDA_VISIBLE_DEVICES=0,1 "$agent" $options --nproc-per-node 1 \
  -- ./worker.sh > agent.log 2>&1 || { cat agent.log; fail "the agent failed"; }
[ "$(ls out.* | wc -l)" -eq 1 ] || fail "$(ls out.*) workers"
grep -q "WORLD_SIZE=1 .*CUDA=0,1 OMP=none$" out.0 || fail "$(cat out.0)"
rm -f out.*

echo "== one of four workers fails: the others stop at once, the agent exits with its status"
start=$(date +%s)
status=0
run_agent SLURM_GPUS_ON_NODE=4 FAIL_RANK=2 SLEEP=60 "$agent" $options -- ./worker.sh \
  > agent.log 2>&1 || status=$?
elapsed=$(($(date +%s) - start))
[ "$status" -eq 3 ] || { cat agent.log; fail "agent exited $status, not the worker's 3"; }
[ "$elapsed" -lt 20 ] || fail "the other workers ran on for $elapsed s"
grep -q "worker 2 exited with status 3; stopping the others" agent.log || fail "$(cat agent.log)"
for pid in $(cat pid.* 2> /dev/null); do
  ! kill -0 "$pid" 2> /dev/null || fail "worker $pid survived its agent"
done

# trainer.py MESSAGE...: a pollux trainer's channel: hello (elastic), then each message; it then
# trains on for $LINGER seconds (the agent reads its channel every 20 ms), or exits at once.
cat > trainer.py <<'PY'
import os, socket, sys, time
channel = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
channel.connect(os.environ["POLLUX_AGENT_SOCKET"])
channel.send(b"hello init_batch_size=32 max_batch_size=64 min_local_bsz=8 max_local_bsz=64 "
             b"accumulation=0 elastic=1\n")
for message in sys.argv[1:]:
    channel.send(message.encode() + b"\n")
time.sleep(float(os.environ.get("LINGER", "0")))
PY

echo "== a worker that becomes the job's rank 0 makes its agent the job's lead"
for rank in 1 0; do
  rm -f status
  run_agent SLURM_PROCID=1 POLLUX_STEP_STATUS_FILE="$work/status" LINGER=1 "$agent" $options \
    -- python3 trainer.py "resized from=2 to=1 stall=0.5 rank=$rank" > agent.log 2>&1 ||
    { cat agent.log; fail "the agent failed"; }
  if [ "$rank" = 0 ]; then
    grep -q "this node's worker is the job's rank 0 now" agent.log ||
      { cat agent.log; fail "the agent of the new rank 0 did not take the lead"; }
    [ "$(cat status)" = 0 ] || fail "the new lead wrote status '$(cat status)'"
  else
    ! grep -q "rank 0 now" agent.log || fail "the agent of rank 1 took the lead"
    [ ! -e status ] || fail "an agent that never led wrote the step's status"
  fi
done

echo "== the lead's only worker leaves the job live: the agent leads no more, writes no status"
rm -f status
# It exits at once after `leaving`, as pollux.elastic's leavers do.
run_agent SLURM_PROCID=0 POLLUX_STEP_STATUS_FILE="$work/status" "$agent" $options \
  -- python3 trainer.py leaving > agent.log 2>&1 || { cat agent.log; fail "the agent failed"; }
grep -q "this node's workers left the job live" agent.log || { cat agent.log; fail "no leave"; }
[ ! -e status ] || fail "an agent whose workers left wrote the step's status: $(cat status)"

echo "== bad input"
status=0
run_agent CUDA_VISIBLE_DEVICES=0 "$agent" $options --nproc-per-node 2 -- ./worker.sh \
  > agent.log 2>&1 || status=$?
[ "$status" -eq 2 ] || fail "2 workers for 1 GPU: exit $status"
grep -q "one GPU per worker" agent.log || fail "$(cat agent.log)"
status=0
"$agent" --nproc-per-node many -- ./worker.sh > agent.log 2>&1 || status=$?
[ "$status" -eq 2 ] && grep -q "not a positive integer" agent.log || fail "$(cat agent.log)"
echo "PASS"
