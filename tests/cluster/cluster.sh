#!/bin/sh
# A real single-machine Slurm cluster for integration tests: a private munged, slurmctld and
# four slurmd (n1,n2: 4 x a100; n3,n4: 4 x v100 fake GPUs), in a fresh run dir on private ports.
#
#   cluster.sh start RUN_DIR [SCHEDULER [SCHED_PARAMS [PLUGIN_DIR [EXTRA_CONF]]]]
#                                  (EXTRA_CONF: slurm.conf lines, separated by a literal \n)
#   cluster.sh restart-ctld RUN_DIR [--kill]   restarts slurmctld keeping its state
#                                  (--kill: SIGKILL instead of a clean SIGTERM)
#   cluster.sh stop-ctld RUN_DIR [--kill] | start-ctld RUN_DIR    the two halves of it
#   cluster.sh stop-munged RUN_DIR | start-munged RUN_DIR          munged of this run
#   cluster.sh stop RUN_DIR        stops only the processes this run started, by PID
#
# After start, RUN_DIR/env holds SLURM_CONF, MUNGE_SOCKET and PATH to source.
# SLURMCTLD_WRAPPER, if set, is a command that start and start-ctld put in front of slurmctld
# (it must exec slurmctld in place, as env and valgrind do, so the recorded PID stays right);
# slurmctld then gets SLURMCTLD_PATIENCE seconds (default 30) to answer and to exit.
# CLUSTER_UNTYPED_GPUS=1 gives the nodes GPUs without a type (Gres=gpu:4).
# CLUSTER_GPUS_PER_NODE=N (1-4) gives each node N GPUs instead of 4.
# SLURM_PREFIX (default /usr, Debian's Slurm) is the Slurm release to run: its sbin/ and bin/
# come first in PATH (RUN_DIR/env sets that PATH too) and its plugin directory is the default
# PLUGIN_DIR. `cluster.sh plugindir` prints that directory.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
slurm_prefix=${SLURM_PREFIX:-/usr}

# Slurm's own plugin directory: Debian's multiarch slurm-wlm for /usr, else PREFIX/lib/slurm.
slurm_plugindir() {
  if [ -d "$slurm_prefix/lib/x86_64-linux-gnu/slurm-wlm" ]; then
    echo "$slurm_prefix/lib/x86_64-linux-gnu/slurm-wlm"
  else
    echo "$slurm_prefix/lib/slurm"
  fi
}
slurm_plugins=$(slurm_plugindir)
[ -f "$slurm_plugins/sched_backfill.so" ] ||
  { echo "cluster.sh: no Slurm plugins in $slurm_plugins (SLURM_PREFIX=$slurm_prefix)" >&2; exit 1; }
PATH="$slurm_prefix/sbin:$slurm_prefix/bin:$PATH"
export PATH

# Below Linux's ephemeral ports (32768-60999), which any outgoing connection may take between
# this probe and the daemons' bind, and apart from the python tests' (python/tests/ports.py).
free_port_block() {  # prints a base port P with P..P+15 free on 127.0.0.1
  python3 - <<'PY'
import random, socket
for _ in range(200):
    base = random.randrange(26000, 32768 - 16, 16)
    try:
        socks = []
        for p in range(base, base + 16):
            s = socket.socket(); s.bind(("127.0.0.1", p)); socks.append(s)
        print(base); break
    except OSError:
        pass
    finally:
        for s in socks: s.close()
PY
}

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
  limit=$1; what=$2; shift 2
  i=0
  until "$@" > /dev/null 2>&1; do
    i=$((i + 1))
    [ "$i" -le $((limit * 5)) ] || { echo "cluster.sh: timed out waiting for $what" >&2; return 1; }
    sleep 0.2
  done
}

start() {
  run=$1; scheduler=${2:-sched/backfill}; params=${3:-}; plugin_dir=${4:-$slurm_plugins}
  extra=${5:-}
  chmod 755 "$run"  # munged runs as user munge and must reach its socket dir
  mkdir -p "$run"/etc "$run"/state "$run"/log "$run"/run "$run"/fakedev "$run"/munge
  for n in n1 n2 n3 n4; do mkdir -p "$run/spool/$n"; done
  for i in 0 1 2 3; do [ -e "$run/fakedev/nvidia$i" ] || mknod "$run/fakedev/nvidia$i" c 195 "$i"; done
  [ -n "$params" ] || params="default_queue_depth=100"
  base=$(free_port_block)
  [ -n "$base" ] || { echo "cluster.sh: no free port block" >&2; exit 1; }
  echo "$base" > "$run/port_base"
  sed -e "s|@RUN_DIR@|$run|g" -e "s|@CTLD_PORT@|$base|" -e "s|@SLURMD_PORT@|$((base + 1))|" \
      -e "s|@N1_PORT@|$((base + 1))|" -e "s|@N2_PORT@|$((base + 2))|" \
      -e "s|@N3_PORT@|$((base + 3))|" -e "s|@N4_PORT@|$((base + 4))|" \
      -e "s|@SCHEDULER@|$scheduler|" -e "s|@SCHED_PARAMS@|$params|" \
      -e "s|@PLUGIN_DIR@|$plugin_dir|" -e "s|@EXTRA@|$extra|" \
      "$here/slurm.conf.in" > "$run/etc/slurm.conf"
  sed -e "s|@RUN_DIR@|$run|g" "$here/gres.conf.in" > "$run/etc/gres.conf"
  gpus=${CLUSTER_GPUS_PER_NODE:-4}
  case $gpus in 1|2|3|4) ;; *) echo "cluster.sh: CLUSTER_GPUS_PER_NODE=$gpus is not 1-4" >&2; exit 1 ;; esac
  sed -i -E "s/(Gres=gpu:[a-z0-9:]*)4/\1$gpus/" "$run/etc/slurm.conf"
  sed -i -E "s/nvidia\[0-3\]/nvidia[0-$((gpus - 1))]/" "$run/etc/gres.conf"
  if [ "${CLUSTER_UNTYPED_GPUS:-}" = 1 ]; then
    sed -i -E 's/Gres=gpu:[a-z0-9]+:/Gres=gpu:/' "$run/etc/slurm.conf"
    sed -i -E 's/ Type=[a-z0-9]+//' "$run/etc/gres.conf"
  fi
  cat > "$run/env" <<ENV
SLURM_CONF=$run/etc/slurm.conf; export SLURM_CONF
MUNGE_SOCKET=$run/munge/munge.socket; export MUNGE_SOCKET
PATH="$slurm_prefix/sbin:$slurm_prefix/bin:\$PATH"; export PATH
ENV

  chown munge:munge "$run/munge"
  : > "$run/run/pids"
  start_munged "$run"

  export SLURM_CONF="$run/etc/slurm.conf"
  ${SLURMCTLD_WRAPPER:-} slurmctld -D -i -f "$SLURM_CONF" > "$run/log/slurmctld.out" 2>&1 &
  echo $! >> "$run/run/pids"
  echo $! > "$run/run/slurmctld.bgpid"
  for n in n1 n2 n3 n4; do
    slurmd -D -N "$n" -f "$SLURM_CONF" > "$run/log/slurmd-$n.out" 2>&1 &
    echo $! >> "$run/run/pids"
  done
  wait_for "${SLURMCTLD_PATIENCE:-30}" slurmctld scontrol ping
  wait_for 60 "4 idle nodes" sh -c "[ \$(sinfo -h -N -t idle -o %N | sort -u | wc -l) -eq 4 ]"
  echo "cluster.sh: cluster up in $run (slurmctld port $base)"
}

start_munged() {
  run=$1
  runuser -u munge -- /usr/sbin/munged --socket="$run/munge/munge.socket" \
    --pid-file="$run/munge/munged.pid" --seed-file="$run/munge/seed" \
    --log-file="$run/munge/munged.log" --key-file=/etc/munge/munge.key
  wait_for 10 munged test -S "$run/munge/munge.socket"
  cat "$run/munge/munged.pid" >> "$run/run/pids"
}

stop_munged() {
  run=$1
  pid=$(cat "$run/munge/munged.pid")
  kill "$pid"
  wait_gone "$pid" || { echo "cluster.sh: munged $pid did not exit" >&2; exit 1; }
  sed -i "/^$pid\$/d" "$run/run/pids"
}

wait_gone() {  # wait_gone PID [SECONDS]: until the process has exited (default 10 s)
  for _ in $(seq $((${2:-10} * 10))); do kill -0 "$1" 2> /dev/null || return 0; sleep 0.1; done
  return 1
}

stop_ctld() {  # stop_ctld RUN_DIR [--kill]
  run=$1; signal=TERM
  [ "${2:-}" = "--kill" ] && signal=KILL
  old=$(cat "$run/run/slurmctld.bgpid")
  kill -s "$signal" "$old" 2> /dev/null || true
  wait_gone "$old" "${SLURMCTLD_PATIENCE:-30}" ||
    { echo "cluster.sh: slurmctld $old did not exit" >&2; exit 1; }
  sed -i "/^$old\$/d" "$run/run/pids"
}

start_ctld() {  # start_ctld RUN_DIR: keeps the saved state
  run=$1
  export SLURM_CONF="$run/etc/slurm.conf"
  ${SLURMCTLD_WRAPPER:-} slurmctld -D -f "$SLURM_CONF" >> "$run/log/slurmctld.out" 2>&1 &
  echo $! > "$run/run/slurmctld.bgpid"
  echo $! >> "$run/run/pids"
  wait_for "${SLURMCTLD_PATIENCE:-30}" slurmctld scontrol ping
}

restart_ctld() {
  old=$(cat "$1/run/slurmctld.bgpid")
  stop_ctld "$@"
  start_ctld "$1"
  echo "cluster.sh: slurmctld restarted ($old -> $(cat "$1/run/slurmctld.bgpid"))"
}

# Processes whose environment names this run's slurm.conf: slurmstepd and the jobs' tasks
# (slurmd and sbatch pass SLURM_CONF on), except this script and its callers, which may
# have sourced RUN_DIR/env. Another cluster's processes never match.
run_processes() {
  callers=" $$ "
  pid=$$
  while [ "$pid" -gt 1 ]; do
    pid=$(ps -o ppid= -p "$pid" | tr -d ' ')
    callers="$callers$pid "
  done
  for environ in /proc/[0-9]*/environ; do
    pid=${environ#/proc/}; pid=${pid%/environ}
    case "$callers" in *" $pid "*) continue ;; esac
    { tr '\0' '\n' < "$environ"; } 2> /dev/null | grep -qx "SLURM_CONF=$1/etc/slurm.conf" &&
      echo "$pid"
  done
  return 0
}

stop() {
  run=$1
  [ -f "$run/run/pids" ] || return 0
  pids="$(cat "$run/run/pids") $(run_processes "$run")"
  kill $pids 2> /dev/null || true
  for _ in $(seq 50); do
    alive=""
    for pid in $pids; do kill -0 "$pid" 2> /dev/null && alive="$alive $pid"; done
    [ -z "$alive" ] && break
    sleep 0.2
  done
  [ -z "$alive" ] || kill -9 $alive 2> /dev/null || true
  rm -f "$run/run/pids"
}

case "${1:-}" in
  start) shift; start "$@" ;;
  plugindir) echo "$slurm_plugins" ;;
  stop) shift; stop "$@" ;;
  restart-ctld) shift; restart_ctld "$@" ;;
  stop-ctld) shift; stop_ctld "$@" ;;
  start-ctld) shift; start_ctld "$@" ;;
  stop-munged) shift; stop_munged "$@" ;;
  start-munged) shift; start_munged "$@" ;;
  *) echo "usage: cluster.sh start RUN_DIR [SCHEDULER [PARAMS [PLUGIN_DIR [EXTRA]]]] | plugindir | restart-ctld RUN_DIR [--kill] | stop-ctld RUN_DIR [--kill] | start-ctld RUN_DIR | stop-munged RUN_DIR | start-munged RUN_DIR | stop RUN_DIR" >&2; exit 2 ;;
esac
