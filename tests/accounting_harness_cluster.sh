#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The test clusters' accounting (tests/cluster/accounting.sh): a private MariaDB and slurmdbd
# on loopback, and a cluster (stock sched/backfill, no pollux plugin) that accounts to them
# with AccountingStorageEnforce=limits,qos. A QOS gpu2 (MaxTRESPerUser=gres/gpu=2) holds the
# second of daemon's two 2-GPU jobs PENDING with Reason QOSMaxGRESPerUser while the first
# runs; sacct sees the first job. Then everything stops with a job still running, and no
# process of the run is left: no mariadbd, slurmdbd, slurmctld, slurmd, slurmstepd or munged.
# The test user is `daemon`: Slurm 26.05 does not resolve the user nobody (65534) in its
# association manager ("couldn't get a uid").
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/cluster/lib.sh"
# The release's own sacctmgr, before the cluster's env sets PATH (cluster.sh does for it).
PATH="${SLURM_PREFIX:-/usr}/bin:$PATH"
# As setup_test_cluster, without a build: the test needs none of this tree's plugins.
run=$(mktemp -d "/tmp/pollux-accounting_harness-test-XXXXXX")
trap stop_test_cluster EXIT

# The daemons of this run still alive, one "PID NAME" a line: a mariadbd, slurmdbd,
# slurmctld, slurmd, slurmstepd or munged whose command line or environment names the run
# dir or that has a file open under it.
run_daemons() {
  grep -lsxE 'mariadbd|slurmdbd|slurmctld|slurmd|slurmstepd|munged' /proc/[0-9]*/comm |
    while IFS=/ read -r _ _ pid _; do
      name=$(cat "/proc/$pid/comm" 2> /dev/null) || continue
      case $name in
        mariadbd | slurmdbd | slurmctld | slurmd | slurmstepd | munged) ;;
        *) continue ;;  # a PID reused since the list was read
      esac
      if grep -qsF "$run/" "/proc/$pid/cmdline" "/proc/$pid/environ" ||
         find "/proc/$pid/fd/" -lname "$run/*" 2> /dev/null | grep -q .; then
        grep -q '^State:[[:space:]]*Z' "/proc/$pid/status" 2> /dev/null || echo "$pid $name"
      fi
    done
}
count_daemons() { run_daemons | awk -v n="$1" '$2 == n' | wc -l; }
# pending_for JOB REASON
pending_for() { [ "$(squeue -h -j "$1" -o %T:%r 2> /dev/null)" = "PENDING:$2" ]; }
# knows_qos QOS: slurmctld's association manager has the QOS (slurmdbd pushed it).
knows_qos() { scontrol show assoc_mgr flags=qos qos="$1" | grep -q "^QOS=$1("; }
as_daemon() { runuser -u daemon -- env SLURM_CONF="$SLURM_CONF" PATH="$PATH" "$@"; }
# submit_gpu2 FILE: submits job.sh as daemon with 2 GPUs under QOS gpu2, its id into FILE.
submit_gpu2() {
  as_daemon sbatch --parsable --qos=gpu2 --gres=gpu:2 --chdir=/tmp -o /dev/null job.sh \
    > "$1" 2> sbatch.err
}

step "start MariaDB and slurmdbd on loopback"
"$here/cluster/accounting.sh" start "$run"
. "$run/dbd/env"
[ "$(stat -c %a "$run/dbd/etc/slurmdbd.conf")" = 600 ] || fail "slurmdbd.conf is not mode 600"
SLURM_CONF=$ACCOUNTING_SLURM_CONF sacctmgr -n -P list cluster format=cluster |
  grep -qx "$ACCOUNTING_CLUSTER" || fail "cluster $ACCOUNTING_CLUSTER not in the database"

step "start a cluster with sched/backfill accounting to slurmdbd, limits and QOS enforced"
"$here/cluster/cluster.sh" start "$run" sched/backfill "" "" \
  "$ACCOUNTING_CONF\nAccountingStorageEnforce=limits,qos\nAccountingStorageTRES=gres/gpu\nPriorityType=priority/multifactor"
. "$run/env"
cd "$run"
scontrol show config | grep -E '^AccountingStorageEnforce' | grep -q qos ||
  fail "slurmctld does not enforce QOS: $(scontrol show config | grep AccountingStorageEnforce)"
wait_until 30 "slurmctld registered with slurmdbd" \
  sh -c "sacctmgr -n -P list cluster format=cluster,controlport | grep -qx '$ACCOUNTING_CLUSTER|$(cat port_base)'"

step "account acct1 with the user daemon, QOS gpu2 with MaxTRESPerUser=gres/gpu=2"
{
  sacctmgr -i add account acct1 cluster="$ACCOUNTING_CLUSTER"
  sacctmgr -i add user daemon account=acct1
  sacctmgr -i add qos gpu2 MaxTRESPerUser=gres/gpu=2
  sacctmgr -i modify user daemon set qos=normal,gpu2
} > sacctmgr.out
wait_until 30 "slurmctld knowing QOS gpu2" knows_qos gpu2

step "daemon's second 2-GPU job under gpu2 waits for QOSMaxGRESPerUser while the first runs"
printf '#!/bin/sh\nsleep 600\n' > job.sh
chmod 644 job.sh
# Retried while slurmctld has yet to learn daemon's new QOS list from slurmdbd.
wait_until 20 "sbatch --qos=gpu2 accepted from daemon (see sbatch.err)" submit_gpu2 first.id
first=$(cat first.id)
wait_until 20 "job $first running" is_running "$first"
submit_gpu2 second.id || fail "second sbatch: $(cat sbatch.err)"
second=$(cat second.id)
wait_until 20 "job $second PENDING for QOSMaxGRESPerUser" pending_for "$second" QOSMaxGRESPerUser
is_running "$first" || fail "job $first is no longer running: $(job_state "$first")"
[ "$(job_field "$first" QOS)" = gpu2 ] || fail "job $first has QOS $(job_field "$first" QOS)"

step "sacct sees the first job"
wait_until 30 "sacct showing job $first running as daemon in acct1 under gpu2" \
  sh -c "sacct -n -P -X -j $first -o JobID,State,User,Account,QOS | grep -qx '$first|RUNNING|daemon|acct1|gpu2'"
sacct -n -P -X -j "$first" -o AllocTRES | grep -q "gres/gpu=2" ||
  fail "sacct's AllocTRES for job $first: $(sacct -n -P -X -j "$first" -o AllocTRES)"

step "stop everything with job $first running: nothing of the run is left"
for name in mariadbd slurmdbd slurmctld munged slurmstepd; do
  [ "$(count_daemons "$name")" -ge 1 ] || fail "no $name of the run found before the stop"
done
[ "$(count_daemons slurmd)" = 4 ] || fail "$(count_daemons slurmd) slurmd of the run, not 4"
[ "$(count_daemons munged)" = 2 ] || fail "$(count_daemons munged) munged of the run, not 2"
cd /
"$here/cluster/cluster.sh" stop "$run" || fail "cluster.sh stop"
"$here/cluster/accounting.sh" stop "$run" || fail "accounting.sh stop"
"$here/cluster/cluster.sh" check "$run" || fail "cluster.sh check"
"$here/cluster/accounting.sh" check "$run" || fail "accounting.sh check"
left=$(run_daemons)
[ -z "$left" ] || fail "left after the stop: $(echo "$left" | tr '\n' ' ')"
echo "PASS"
