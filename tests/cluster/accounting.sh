#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Slurm accounting for a cluster.sh test cluster: a private MariaDB and slurmdbd on loopback,
# all under RUN_DIR/dbd (which may be the cluster's own run dir, or any other).
#
#   accounting.sh start RUN_DIR    starts them; run it before `cluster.sh start`
#   accounting.sh stop RUN_DIR     stops only the processes start started, by PID
#   accounting.sh check RUN_DIR    lists processes of RUN_DIR/dbd still alive; fails if any
#
# start: mariadbd (datadir, socket, pid file and log in RUN_DIR/dbd, initialised once by
# mariadb-install-db --no-defaults, listening on 127.0.0.1 at a free port) with a DB user
# slurm; a munged of its own in RUN_DIR/dbd/munge (slurmdbd must run before slurmctld, hence
# before the cluster's munged; both use /etc/munge/munge.key, so credentials pass between
# them); slurmdbd (RUN_DIR/dbd/etc/slurmdbd.conf, mode 600, another free port); then
# `sacctmgr -i add cluster` for tests/cluster/slurm.conf.in's ClusterName, a default account
# `test` and the user root in it (enforced associations refuse jobs without one).
# After start, RUN_DIR/dbd/env holds, to source:
#   ACCOUNTING_CONF         the slurm.conf lines the cluster needs, separated by a literal \n,
#                           for cluster.sh start's EXTRA_CONF (AccountingStorageType,
#                           AccountingStorageHost, AccountingStoragePort, AccountingStoragePass)
#   ACCOUNTING_SLURM_CONF   a minimal slurm.conf for sacctmgr before the cluster is up
#   ACCOUNTING_CLUSTER, ACCOUNTING_ACCOUNT, ACCOUNTING_DB_SOCKET (mariadb -S, as root)
# and RUN_DIR/dbd/slurm.conf.extra the same lines one a line; start prints ACCOUNTING_CONF.
# SLURM_PREFIX (default /usr, Debian's Slurm with slurmdbd and slurm-wlm-mysql-plugin) is the
# Slurm release, as for cluster.sh: PREFIX/sbin/slurmdbd, its accounting_storage_mysql plugin
# in cluster.sh's plugin directory (a release from scripts/build-slurm has it when
# libmariadb-dev was installed at its configure time).
set -eu
# Not in this script's own environment, so that its subshells never look like processes of
# RUN_DIR/dbd (dbd_processes); start sets it for slurmdbd and sacctmgr.
if [ -n "${SLURM_CONF+set}" ]; then exec env -u SLURM_CONF /bin/sh "$0" "$@"; fi
here=$(cd "$(dirname "$0")" && pwd)
slurm_prefix=${SLURM_PREFIX:-/usr}
PATH="$slurm_prefix/sbin:$slurm_prefix/bin:$PATH"
export PATH

fail() { echo "accounting.sh: $*" >&2; exit 1; }

# Ports: two consecutive from 16000-19999, below the python tests' (20000-25999) and the
# cluster tests' (26000-32767).
. "$here/ports.sh"

# wait_ready SECONDS WHAT PID LOG COMMAND...: until COMMAND succeeds; fails early, showing
# the end of LOG, if PID has exited.
wait_ready() {
  limit=$1; what=$2; pid=$3; log=$4; shift 4
  i=0
  until "$@" > /dev/null 2>&1; do
    if ! kill -0 "$pid" 2> /dev/null; then
      tail -n 20 "$log" >&2
      fail "$what (PID $pid) exited while starting (log above: $log)"
    fi
    i=$((i + 1))
    [ "$i" -le $((limit * 5)) ] || { tail -n 20 "$log" >&2; fail "timed out waiting for $what"; }
    sleep 0.2
  done
}

# alive_as PID NAME: whether PID is alive (no zombie) and still the process NAME (not a
# reused PID).
alive_as() {
  [ "$(cat "/proc/$1/comm" 2> /dev/null)" = "$2" ] &&
    ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2> /dev/null
}

# stop_recorded NAME...: SIGTERM to the processes of these names that start recorded, SIGKILL
# to those left after 30 s; waits until they are gone.
stop_recorded() {
  pids=""
  while read -r recorded pid; do
    for name in "$@"; do
      if [ "$recorded" = "$name" ] && alive_as "$pid" "$name"; then pids="$pids $name:$pid"; fi
    done
  done < "$dbd/pids"
  for np in $pids; do kill "${np#*:}" 2> /dev/null || true; done
  for i in $(seq 400); do
    left=""
    for np in $pids; do alive_as "${np#*:}" "${np%%:*}" && left="$left $np"; done
    [ -n "$left" ] || return 0
    if [ "$i" = 300 ]; then  # 30 s
      echo "accounting.sh: still alive 30 s after SIGTERM:$left; SIGKILL" >&2
      for np in $left; do kill -9 "${np#*:}" 2> /dev/null || true; done
    fi
    sleep 0.1
  done
  echo "accounting.sh: survived SIGKILL:$left" >&2
}

start() {
  run=$1; dbd=$run/dbd
  [ -d "$run" ] || fail "no run dir $run"
  plugindir=$("$here/cluster.sh" plugindir)
  [ -f "$plugindir/accounting_storage_mysql.so" ] ||
    fail "no accounting_storage_mysql.so in $plugindir (Debian: slurm-wlm-mysql-plugin; a built release: libmariadb-dev at its configure time)"
  slurmdbd=$slurm_prefix/sbin/slurmdbd
  [ -x "$slurmdbd" ] || fail "no $slurmdbd (Debian: install slurmdbd)"
  cluster=$(sed -n 's/^ClusterName=//p' "$here/slurm.conf.in")
  account="test"

  chmod 755 "$run"  # munged runs as user munge and must reach its socket dir
  mkdir -p "$dbd/data" "$dbd/etc" "$dbd/log" "$dbd/run" "$dbd/tmp" "$dbd/munge"
  chmod 755 "$dbd"
  [ ! -s "$dbd/pids" ] || fail "$dbd/pids lists processes of an earlier start: stop it first"
  : > "$dbd/pids"
  base=$(free_port_block 16000 20000 2)
  [ -n "$base" ] || fail "no free ports"
  dbport=$base; dbdport=$((base + 1))
  sock=$dbd/run/mysqld.sock

  if [ ! -d "$dbd/data/mysql" ]; then
    mariadb-install-db --no-defaults --user=root --datadir="$dbd/data" --skip-test-db \
      > "$dbd/log/install-db.log" 2>&1 ||
      { tail -n 20 "$dbd/log/install-db.log" >&2; fail "mariadb-install-db failed"; }
  fi
  /usr/sbin/mariadbd --no-defaults --user=root --datadir="$dbd/data" --socket="$sock" \
    --port="$dbport" --bind-address=127.0.0.1 --skip-name-resolve \
    --pid-file="$dbd/run/mysqld.pid" --log-error="$dbd/log/mysqld.err" --tmpdir="$dbd/tmp" \
    --innodb-buffer-pool-size=128M --innodb-log-file-size=64M \
    --innodb-lock-wait-timeout=900 --max-allowed-packet=16M > "$dbd/log/mysqld.out" 2>&1 &
  echo "mariadbd $!" >> "$dbd/pids"
  wait_ready 60 mariadbd $! "$dbd/log/mysqld.err" \
    mariadb --no-defaults -S "$sock" -u root -e "SELECT 1"
  pass=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
  mariadb --no-defaults -S "$sock" -u root -e "
    CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY '$pass';
    ALTER USER 'slurm'@'127.0.0.1' IDENTIFIED BY '$pass';
    GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1'; FLUSH PRIVILEGES;" ||
    fail "could not create the database user slurm"

  chown munge:munge "$dbd/munge"
  munge_socket=$dbd/munge/munge.socket
  runuser -u munge -- /usr/sbin/munged --socket="$munge_socket" \
    --pid-file="$dbd/munge/munged.pid" --seed-file="$dbd/munge/seed" \
    --log-file="$dbd/munge/munged.log" --key-file=/etc/munge/munge.key ||
    fail "munged did not start (log: $dbd/munge/munged.log)"
  echo "munged $(cat "$dbd/munge/munged.pid")" >> "$dbd/pids"

  accounting="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$dbdport
AccountingStoragePass=socket=$munge_socket"
  echo "$accounting" > "$dbd/slurm.conf.extra"
  # slurmdbd reads slurmdbd.conf beside $SLURM_CONF; sacctmgr reads this slurm.conf.
  cat > "$dbd/etc/slurm.conf" <<EOF
ClusterName=$cluster
SlurmctldHost=localhost
AuthType=auth/munge
AuthInfo=socket=$munge_socket
PluginDir=$plugindir
$accounting
NodeName=n1 CPUs=1
PartitionName=p Nodes=n1
EOF
  (umask 077 && cat > "$dbd/etc/slurmdbd.conf" <<EOF
AuthType=auth/munge
AuthInfo=socket=$munge_socket
DbdAddr=127.0.0.1
DbdHost=localhost
DbdPort=$dbdport
SlurmUser=root
DebugLevel=info
LogFile=$dbd/log/slurmdbd.log
PidFile=$dbd/run/slurmdbd.pid
PluginDir=$plugindir
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$dbport
StorageUser=slurm
StoragePass=$pass
StorageLoc=slurm_acct_db
EOF
  )
  chmod 600 "$dbd/etc/slurmdbd.conf"
  SLURM_CONF=$dbd/etc/slurm.conf "$slurmdbd" -D > "$dbd/log/slurmdbd.out" 2>&1 &
  echo "slurmdbd $!" >> "$dbd/pids"
  export SLURM_CONF="$dbd/etc/slurm.conf"
  wait_ready 60 slurmdbd $! "$dbd/log/slurmdbd.log" sacctmgr -n list cluster

  # Each added unless there already (a database kept from an earlier start).
  log=$dbd/log/sacctmgr.out
  : > "$log"
  not_added() { cat "$log" >&2; fail "sacctmgr could not add $1"; }
  { sacctmgr -n -P list cluster "$cluster" format=cluster | grep -qx "$cluster" ||
      sacctmgr -i add cluster "$cluster"; } >> "$log" 2>&1 || not_added "cluster $cluster"
  { sacctmgr -n -P list account "$account" format=account | grep -qx "$account" ||
      sacctmgr -i add account "$account" cluster="$cluster" Description=test Organization=test
  } >> "$log" 2>&1 || not_added "account $account"
  { sacctmgr -n -P list assoc cluster="$cluster" account="$account" user=root format=user |
      grep -qx root || sacctmgr -i add user root account="$account" cluster="$cluster"
  } >> "$log" 2>&1 || not_added "user root to account $account"

  conf_line=$(echo "$accounting" | sed ':a;N;$!ba;s/\n/\\n/g')
  cat > "$dbd/env" <<ENV
ACCOUNTING_CONF='$conf_line'; export ACCOUNTING_CONF
ACCOUNTING_SLURM_CONF=$dbd/etc/slurm.conf; export ACCOUNTING_SLURM_CONF
ACCOUNTING_CLUSTER=$cluster; export ACCOUNTING_CLUSTER
ACCOUNTING_ACCOUNT=$account; export ACCOUNTING_ACCOUNT
ACCOUNTING_DB_SOCKET=$sock; export ACCOUNTING_DB_SOCKET
ENV
  echo "accounting.sh: slurmdbd up in $dbd (slurmdbd port $dbdport, mariadbd port $dbport)"
  printf '%s\n' "$conf_line"
}

# Processes of RUN_DIR/dbd: those start recorded, while they live, and any whose command
# line or SLURM_CONF names RUN_DIR/dbd/ (except this script and its callers).
dbd_processes() {
  dbd=$1/dbd
  callers=" $$ "
  pid=$$
  while [ "$pid" -gt 1 ]; do
    pid=$(ps -o ppid= -p "$pid" | tr -d ' ')
    callers="$callers$pid "
  done
  found=""
  if [ -f "$dbd/pids" ]; then
    while read -r name pid; do
      if alive_as "$pid" "$name"; then found="$found $pid"; fi
    done < "$dbd/pids"
  fi
  # The patterns on stdin, not in grep's own command line, which a reused PID could show.
  # shellcheck disable=SC2062
  for pid in $( {
    printf '%s\n' "$dbd/" | grep -lszF -f - /proc/[0-9]*/cmdline || true
    printf '^SLURM_CONF=%s/\n' "$(printf '%s' "$dbd" | sed 's/[][\\.*^$]/\\&/g')" |
      grep -lsz -f - /proc/[0-9]*/environ || true
  } | cut -d/ -f3 | sort -un); do
    case "$callers$found " in *" $pid "*) continue ;; esac
    grep -qs '^State:[[:space:]]*[^Z[:space:]]' "/proc/$pid/status" && found="$found $pid"
  done
  echo "${found# }"
}

check() {
  left=$(dbd_processes "$1")
  # A process still ending as the stop returns (seen: gone before ps could list it) is given
  # 5 s to be gone; only one alive after that was left behind.
  for _ in $(seq 25); do
    [ -z "$left" ] && return 0
    sleep 0.2
    left=$(dbd_processes "$1")
  done
  [ -z "$left" ] && return 0
  echo "accounting.sh: processes of $1/dbd still alive:" >&2
  ps -o pid,ppid,user,stat,args -p "$(echo "$left" | tr ' ' ,)" >&2 || true
  return 1
}

stop() {
  run=$1; dbd=$run/dbd
  [ -f "$dbd/pids" ] || return 0
  # slurmdbd first (it writes to the database), then mariadbd and munged.
  stop_recorded slurmdbd
  stop_recorded mariadbd munged
  check "$run" || return 1
  rm -f "$dbd/pids"
}

case "${1:-}" in
  start) shift; start "$@" ;;
  stop) shift; stop "$@" ;;
  check) shift; check "$@" ;;
  *) echo "usage: accounting.sh start RUN_DIR | stop RUN_DIR | check RUN_DIR" >&2; exit 2 ;;
esac
