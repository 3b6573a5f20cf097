#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# sched/pollux on a cluster of a modest real size, so that scale regressions show: 32 nodes
# (one slurmd each: Slurm built with --enable-multiple-slurmd, as scripts/build-slurm builds
# it; Debian's is too) x 8 fake GPUs of three types, 400 short jobs submitted in two bursts:
# rigid ones in every GPU request form and 60 adaptive ones whose goodput reports come from
# bench/report_load --agents (real MUNGE credentials, a report per job every 2 s). Every job
# must complete, no round may fail, and each round logs its line with its phases.
# bench/cluster-scale measures the same at 128 nodes against sched/backfill.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/cluster/lib.sh"
setup_test_cluster scale
nodes=32 jobs=400 adaptive=60

step "start a cluster of $nodes nodes x 8 GPUs with sched/pollux"
CLUSTER_NODES=$nodes CLUSTER_GPUS_PER_NODE=8 CLUSTER_CPUS_PER_NODE=8 CLUSTER_DEBUG=info
export CLUSTER_NODES CLUSTER_GPUS_PER_NODE CLUSTER_CPUS_PER_NODE CLUSTER_DEBUG
# A node asked to register probes every step's socket and deletes the batch script of one
# that refuses it (slurmd's _handle_stray_script), as a batch step starting between its
# bind and listen does: its job fails. slurmctld asks TreeWidth nodes per ping, from its
# first ping 3 s after start; a TreeWidth above the node count asks none for 20 pings.
start_pollux_cluster "MinJobAge=3600\\nTreeWidth=50"
printf '#!/bin/sh\nsleep "$1"\n' > sleep.sh
mkdir out
[ "$(sinfo -h -N -o %N | sort -u | wc -l)" -eq "$nodes" ] || fail "not $nodes nodes"

# The running adaptive jobs, for report_load, once a second until the file stop-agents exists.
: > agents
(
  while [ ! -e stop-agents ]; do
    squeue -h -t R -o "%i %k" 2> /dev/null | sed -n 's/ adaptive.*//p' > agents.new || true
    mv agents.new agents
    sleep 1
  done
) &
lister=$!
"$build/bench/report_load" --url "$api" --agents agents --socket "$MUNGE_SOCKET" --interval 2 \
  --connections 2 --allow 404 > reports.out 2>&1 &
reporter=$!
stop_helpers() {
  touch "$run/stop-agents"
  kill "$reporter" 2> /dev/null || true
  wait "$lister" "$reporter" 2> /dev/null || true
}
# stop_test_cluster takes the test's exit status from $?: set again, without set -e.
trap 'rc=$?; set +e; stop_helpers; (exit "$rc"); stop_test_cluster' EXIT

step "submit $jobs jobs ($adaptive adaptive) in two bursts"
started=$(date +%s)
forms="--gres=gpu:2|--gres=gpu:a100:1|--gpus=4|--gpus=v100:2|-N 2 --gpus-per-node=1|--gpus-per-node=h100:2|-n 2 --gpus-per-task=1"
i=0
: > ids
while [ "$i" -lt "$jobs" ]; do
  if [ "$i" -eq $((jobs / 2)) ]; then sleep 5; fi
  if [ $((i % (jobs / adaptive))) -eq 0 ] && [ "$(grep -c adaptive ids || true)" -lt "$adaptive" ]; then
    options="--comment=adaptive:max_gpus=4"
  else
    options=$(echo "$forms" | cut -d'|' -f$((i % 7 + 1)))
  fi
  # shellcheck disable=SC2086
  id=$(sbatch --parsable -o "out/%j.out" -J scale $options sleep.sh $((i % 3 + 1))) ||
    fail "sbatch $options failed"
  echo "$id ${options%%:*}" >> ids
  i=$((i + 1))
done
echo "   submitted in $(($(date +%s) - started)) s: $(grep -c adaptive ids) adaptive"

step "every job completes"
wait_until 480 "all $jobs jobs finished" sh -c '[ -z "$(squeue -h -o %i)" ]'
echo "   all finished $(($(date +%s) - started)) s after the first submission"
squeue -h -t all -o "%i %T" > states
completed=$(grep -c " COMPLETED$" states || true)
if [ "$completed" -ne "$jobs" ]; then
  # What Slurm and the logs say of the first few that did not complete.
  for id in $(grep -v " COMPLETED$" states | head -n 3 | cut -d' ' -f1); do
    echo "--- job $id: $(grep "^$id " ids)" >&2
    scontrol show job "$id" | grep -E "JobState|Restarts|NodeList=|AdminComment|Comment" >&2 || true
    grep -hE "JobId=$id([^0-9]|$)|job $id([^0-9]|$)|StepId=$id\." log/*.log | tail -n 20 >&2 || true
    echo "   its output: $(tail -n 5 "out/$id.out" 2> /dev/null)" >&2
    node=$(scontrol show hostnames "$(squeue -h -t all -j "$id" -o %N)" | head -n 1)
    [ -z "$node" ] || grep -hE "error|Purging|job0*$id/|_$id\\.|StepId=$id\\." \
      "log/slurmd-$node.log" | tail -n 12 >&2 || true
  done
  fail "$completed of $jobs jobs completed: $(grep -v " COMPLETED$" states | head -n 5 | tr '\n' ' ')"
fi
placed_adaptive=0
for id in $(grep adaptive ids | cut -d' ' -f1); do
  placed "$id" && placed_adaptive=$((placed_adaptive + 1))
done
[ "$placed_adaptive" -eq "$adaptive" ] ||
  fail "sched/pollux placed $placed_adaptive of $adaptive adaptive jobs"

step "no round failed; each round logged its phases"
stop_helpers
grep -E "sched/pollux: (round skipped|round not planned|cannot describe the round)" \
  log/slurmctld.log > round-errors || true
[ ! -s round-errors ] || fail "rounds failed: $(head -n 3 round-errors)"
grep -E "sched/pollux: round [0-9.]+ ms: load [0-9.]+ build [-0-9.]+ solve [0-9.]+ act [0-9.]+ finish [0-9.]+ \(save [0-9.]+\) ms; jobs [0-9]+ nodes $nodes actions [0-9]+ state [0-9]+ bytes; cpu [0-9.]+ ms" \
  log/slurmctld.log > rounds || fail "no round logged its phases"
sed -E 's/.*round ([0-9.]+) ms.*/\1/' rounds | sort -n |
  awk '{ v[NR] = $1 } END { printf "   %d rounds, median %.1f ms, max %.1f ms\n", NR, v[int((NR + 1) / 2)], v[NR] }'
grep -q "HTTP 200" reports.out || fail "no report was accepted: $(cat reports.out)"
grep -E "^ +HTTP [0-9]+ " reports.out | grep -qvE "HTTP (200|404) " &&
  fail "reports refused: $(cat reports.out)"
sed -n 's/^agents: /   reports: /p' reports.out
echo "PASS"
