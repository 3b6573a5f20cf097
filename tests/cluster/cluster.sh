#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A real single-machine Slurm cluster for integration tests: a private munged, slurmctld and
# four slurmd (n1,n2: 4 x a100; n3,n4: 4 x v100 fake GPUs), in a fresh run dir on private ports.
#
#   cluster.sh start RUN_DIR [SCHEDULER [SCHED_PARAMS [PLUGIN_DIR [EXTRA_CONF]]]]
#                                  (EXTRA_CONF: slurm.conf lines, separated by a literal \n)
#   cluster.sh restart-ctld RUN_DIR [--kill]   restarts slurmctld keeping its state
#                                  (--kill: SIGKILL instead of a clean SIGTERM)
#   cluster.sh stop-ctld RUN_DIR [--kill] | start-ctld RUN_DIR    the two halves of it
#   cluster.sh stop-munged RUN_DIR | start-munged RUN_DIR          munged of this run
#   cluster.sh stop RUN_DIR        stops only the processes this run started, by PID, and the
#                                  run's jobs and slurmstepd (found by RUN_DIR, see stop());
#                                  fails if any of them survives
#   cluster.sh check RUN_DIR       lists the run's processes still alive; fails if any
#
# After start, RUN_DIR/env holds SLURM_CONF, MUNGE_SOCKET and PATH to source.
# SLURMCTLD_WRAPPER, if set, is a command that start and start-ctld put in front of slurmctld
# (it must exec slurmctld in place, as env and valgrind do, so the recorded PID stays right);
# slurmctld then gets SLURMCTLD_PATIENCE seconds (default 30) to answer and to exit.
# SLURMD_WRAPPER, if set, is a command that start puts in front of each slurmd, which its
# jobs' steps inherit (it must exec slurmd in place, as nice does): `nice -n 19` keeps them
# from taking slurmctld's CPU, as on a real cluster, where they run on other hosts.
# CLUSTER_UNTYPED_GPUS=1 gives the nodes GPUs without a type (Gres=gpu:4).
# CLUSTER_GPUS_PER_NODE=N (1-8) gives each node N GPUs instead of 4.
# CLUSTER_CPUS_PER_NODE=N gives each node N CPUs instead of 2 (slurmd takes the configured
# count: SlurmdParameters=config_overrides).
# CLUSTER_NODES=N (at least 4) gives the cluster N nodes n1..nN instead of four: a third each
# with a100, v100 and h100 GPUs (n1.. a100, then v100, then h100), all in partition gpu;
# Slurm must be built with --enable-multiple-slurmd (one slurmd per node on this machine,
# each on its own port).
# CLUSTER_DEBUG=LEVEL sets SlurmctldDebug and SlurmdDebug (default debug).
# SLURM_PREFIX (default /usr, Debian's Slurm) is the Slurm release to run: its sbin/ and bin/
# come first in PATH (RUN_DIR/env sets that PATH too) and its plugin directory is the default
# PLUGIN_DIR. `cluster.sh plugindir` prints that directory.
set -eu
# Not in this script's own environment (callers may have sourced RUN_DIR/env), so that its
# subshells never look like the run's jobs (run_tasks); the commands that need it
# set it.
if [ -n "${SLURM_CONF+set}" ]; then exec env -u SLURM_CONF /bin/sh "$0" "$@"; fi
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

# Cluster ports: 16 from 26000-32767, apart from the python tests' (python/tests/ports.py)
# and accounting.sh's.
. "$here/ports.sh"

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
  nodes=${CLUSTER_NODES:-4}
  case $nodes in *[!0-9]*|'') nodes=0 ;; esac
  [ "$nodes" -ge 4 ] || { echo "cluster.sh: CLUSTER_NODES=${CLUSTER_NODES:-} is not a number >= 4" >&2; exit 1; }
  node_names=$(seq -f 'n%g' 1 "$nodes")
  for n in $node_names; do mkdir -p "$run/spool/$n"; done
  for i in 0 1 2 3 4 5 6 7; do [ -e "$run/fakedev/nvidia$i" ] || mknod "$run/fakedev/nvidia$i" c 195 "$i"; done
  [ -n "$params" ] || params="default_queue_depth=100"
  # slurmctld's port, then one per slurmd, in blocks of 16.
  base=$(free_port_block 26000 32768 $(( (nodes + 16) / 16 * 16 )))
  [ -n "$base" ] || { echo "cluster.sh: no free port block" >&2; exit 1; }
  echo "$base" > "$run/port_base"
  sed -e "s|@RUN_DIR@|$run|g" -e "s|@CTLD_PORT@|$base|" -e "s|@SLURMD_PORT@|$((base + 1))|" \
      -e "s|@N1_PORT@|$((base + 1))|" -e "s|@N2_PORT@|$((base + 2))|" \
      -e "s|@N3_PORT@|$((base + 3))|" -e "s|@N4_PORT@|$((base + 4))|" \
      -e "s|@SCHEDULER@|$scheduler|" -e "s|@SCHED_PARAMS@|$params|" \
      -e "s|@PLUGIN_DIR@|$plugin_dir|" -e "s|@EXTRA@|$extra|" \
      "$here/slurm.conf.in" > "$run/etc/slurm.conf"
  sed -e "s|@RUN_DIR@|$run|g" "$here/gres.conf.in" > "$run/etc/gres.conf"
  if [ "$nodes" -gt 4 ]; then scale_nodes "$run" "$nodes" "$base"; fi
  gpus=${CLUSTER_GPUS_PER_NODE:-4}
  case $gpus in 1|2|3|4|5|6|7|8) ;; *) echo "cluster.sh: CLUSTER_GPUS_PER_NODE=$gpus is not 1-8" >&2; exit 1 ;; esac
  sed -i -E "s/(Gres=gpu:[a-z0-9:]*)4/\1$gpus/" "$run/etc/slurm.conf"
  cpus=${CLUSTER_CPUS_PER_NODE:-2}
  case $cpus in
    [1-9]|[1-9][0-9]) ;;
    *) echo "cluster.sh: CLUSTER_CPUS_PER_NODE=$cpus is not 1-99" >&2; exit 1 ;;
  esac
  sed -i -E "s/ CPUs=[0-9]+ / CPUs=$cpus /" "$run/etc/slurm.conf"
  if [ -n "${CLUSTER_DEBUG:-}" ]; then
    sed -i -E "s/^(Slurm(ctld|d)Debug)=.*/\1=$CLUSTER_DEBUG/" "$run/etc/slurm.conf"
  fi
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
  for n in $node_names; do
    ${SLURMD_WRAPPER:-} slurmd -D -N "$n" -f "$SLURM_CONF" > "$run/log/slurmd-$n.out" 2>&1 &
    echo $! >> "$run/run/pids"
  done
  wait_for "${SLURMCTLD_PATIENCE:-30}" slurmctld scontrol ping
  wait_for $((60 + nodes)) "$nodes idle nodes" sh -c "[ \$(sinfo -h -N -t idle -o %N | sort -u | wc -l) -eq $nodes ]"
  echo "cluster.sh: cluster up in $run (slurmctld port $base)"
}

# scale_nodes RUN_DIR N BASE_PORT: the run's slurm.conf and gres.conf with nodes n1..nN (a
# third each a100, v100, h100; n1 on port BASE+1, nK on BASE+K) instead of the four.
scale_nodes() {
  run=$1; nodes=$2; base=$3
  third=$(( (nodes + 2) / 3 ))
  conf="$run/etc/slurm.conf"
  sed -i -e '/^NodeName=/d' -e '/^PartitionName=/d' "$conf"
  for k in $(seq 1 "$nodes"); do
    if [ "$k" -le "$third" ]; then type=a100
    elif [ "$k" -le $((2 * third)) ]; then type=v100
    else type=h100; fi
    echo "NodeName=n$k NodeHostname=n$k NodeAddr=127.0.0.1 Port=$((base + k)) CPUs=2 RealMemory=2000 Gres=gpu:$type:4"
  done >> "$conf"
  echo "PartitionName=gpu Nodes=n[1-$nodes] Default=YES MaxTime=INFINITE State=UP" >> "$conf"
  {
    grep -v '^NodeName=' "$here/gres.conf.in" | sed -e "s|@RUN_DIR@|$run|g"
    echo "NodeName=n[1-$third] Name=gpu Type=a100 File=$run/fakedev/nvidia[0-3]"
    echo "NodeName=n[$((third + 1))-$((2 * third))] Name=gpu Type=v100 File=$run/fakedev/nvidia[0-3]"
    echo "NodeName=n[$((2 * third + 1))-$nodes] Name=gpu Type=h100 File=$run/fakedev/nvidia[0-3]"
  } > "$run/etc/gres.conf"
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
  for _ in $(seq $((${2:-10} * 10))); do alive "$1" || return 0; sleep 0.1; done
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

# This script and its callers (they may have sourced RUN_DIR/env or cd'ed into RUN_DIR):
# never counted as the run's processes.
caller_pids() {
  callers=" $$ "
  pid=$$
  while [ "$pid" -gt 1 ]; do
    pid=$(ps -o ppid= -p "$pid" | tr -d ' ')
    callers="$callers$pid "
  done
  echo "$callers"
}

# alive PID: the process exists and is no zombie (an exited slurmstepd, whose parent is
# PID 1, stays a zombie until PID 1 reaps it).
alive() {
  state=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2> /dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}

# stepd_of_run PID RUN_DIR: PID is a slurmstepd of this run: its environment names this run's
# slurm.conf, or one of its open files is under RUN_DIR (the slurmd log it inherits), or one
# of its sockets is bound under RUN_DIR/spool (its step socket). slurmstepd writes its
# process title over its environment, which may leave SLURM_CONF unreadable in
# /proc/PID/environ; it outlives slurmd and slurmctld when it cannot report its job's end,
# blocking SIGTERM then (SIGKILL ends it).
stepd_of_run() {
  [ "$(cat "/proc/$1/comm" 2> /dev/null)" = slurmstepd ] || return 1
  grep -qszxF "SLURM_CONF=$2/etc/slurm.conf" "/proc/$1/environ" && return 0
  for fd in "/proc/$1/fd/"* "/proc/$1/cwd"; do
    link=$(readlink "$fd" 2> /dev/null) || continue
    case $link in
      "$2"/*) return 0 ;;
      "socket:["*"]")
        inode=${link#socket:\[}; inode=${inode%]}
        grep -q " $inode $2/spool/" /proc/net/unix && return 0 ;;
    esac
  done
  return 1
}

# The jobs' processes of this run but slurmstepd (run_stepds): those whose environment
# names this run's slurm.conf (slurmd and sbatch pass SLURM_CONF on), as PIDs. Another
# cluster's processes never match.
run_tasks() {
  callers=$(caller_pids)
  grep -lszxF "SLURM_CONF=$1/etc/slurm.conf" /proc/[0-9]*/environ |
    while IFS=/ read -r _ _ pid _; do
      case "$callers" in *" $pid "*) continue ;; esac
      [ "$(cat "/proc/$pid/comm" 2> /dev/null)" = slurmstepd ] || echo "$pid"
    done
  return 0
}

# This run's slurmstepd processes (stepd_of_run), as PIDs.
run_stepds() {
  grep -lsx slurmstepd /proc/[0-9]*/comm | while IFS=/ read -r _ _ pid _; do
    if stepd_of_run "$pid" "$1"; then echo "$pid"; fi
  done
  return 0
}

# Processes of this run besides the recorded daemons: its jobs' and its slurmstepd.
run_processes() { run_tasks "$1"; run_stepds "$1"; }

# Every live process of this run: run_processes, and those whose command line names this
# run's etc/ or munge/ (slurmctld, slurmd, munged, SLURMCTLD_WRAPPER's). Not the processes
# of accounting.sh in RUN_DIR/dbd.
survivors() {
  callers=$(caller_pids)
  {
    run_processes "$1"
    # The patterns on stdin, not in grep's own command line, which it reads too.
    # shellcheck disable=SC2062
    printf '%s\n' "$1/etc/" "$1/munge/" | grep -lszF -f - /proc/[0-9]*/cmdline |
      while IFS=/ read -r _ _ pid _; do
        case "$callers" in *" $pid "*) ;; *) echo "$pid" ;; esac
      done
  } | sort -un | while read -r pid; do if alive "$pid"; then echo "$pid"; fi; done
  return 0
}

# check RUN_DIR: lists the run's processes still alive and fails if there is any.
check() {
  left=$(survivors "$1" | paste -sd, -)
  [ -z "$left" ] && return 0
  echo "cluster.sh: processes of $1 still alive:" >&2
  ps -o pid,ppid,user,stat,args -p "$left" >&2 || true
  return 1
}

# kill_all SECONDS PID...: SIGTERM, then SIGKILL to those still alive after SECONDS; waits
# (up to 10 s more) until they are gone.
kill_all() {
  limit=$1; shift
  [ $# -gt 0 ] || return 0
  kill "$@" 2> /dev/null || true
  for _ in $(seq $((limit * 5))); do
    left=""
    for pid in "$@"; do alive "$pid" && left="$left $pid"; done
    [ -z "$left" ] && return 0
    sleep 0.2
  done
  # shellcheck disable=SC2086
  kill -9 $left 2> /dev/null || true
  for _ in $(seq 50); do
    left1=""
    for pid in $left; do alive "$pid" && left1="$left1 $pid"; done
    [ -z "$left1" ] && return 0
    sleep 0.2
  done
}

# stop RUN_DIR: the recorded daemons and the jobs' processes (SIGKILL after 10 s), then the
# run's slurmstepd and any job process left or started meanwhile (SIGKILL after 3 s: a
# slurmstepd that cannot reach slurmctld blocks SIGTERM); fails, listing them, if any
# process of the run survives.
stop() {
  run=$1
  [ -f "$run/run/pids" ] || return 0
  # The recorded PIDs whose command line still names the run (not reused by another process).
  recorded=$(while read -r pid; do
    if grep -qsF "$run/" "/proc/$pid/cmdline"; then echo "$pid"; fi
  done < "$run/run/pids")
  # shellcheck disable=SC2046,SC2086
  kill_all 10 $recorded $(run_tasks "$run")
  for _ in 1 2 3; do
    left=$(run_processes "$run" | while read -r pid; do if alive "$pid"; then echo "$pid"; fi; done)
    [ -n "$left" ] || break
    # shellcheck disable=SC2086
    kill_all 3 $left
  done
  check "$run" || exit 1
  rm -f "$run/run/pids"
}

case "${1:-}" in
  start) shift; start "$@" ;;
  plugindir) echo "$slurm_plugins" ;;
  stop) shift; stop "$@" ;;
  check) shift; check "$@" ;;
  restart-ctld) shift; restart_ctld "$@" ;;
  stop-ctld) shift; stop_ctld "$@" ;;
  start-ctld) shift; start_ctld "$@" ;;
  stop-munged) shift; stop_munged "$@" ;;
  start-munged) shift; start_munged "$@" ;;
  *) echo "usage: cluster.sh start RUN_DIR [SCHEDULER [PARAMS [PLUGIN_DIR [EXTRA]]]] | plugindir | restart-ctld RUN_DIR [--kill] | stop-ctld RUN_DIR [--kill] | start-ctld RUN_DIR | stop-munged RUN_DIR | start-munged RUN_DIR | stop RUN_DIR | check RUN_DIR" >&2; exit 2 ;;
esac
