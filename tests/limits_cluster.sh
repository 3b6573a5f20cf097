#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# QOS (the job's, per user, per account, its partition's) and association limits on GPUs,
# CPUs, nodes and jobs under slurmdbd with a real MariaDB (AccountingStorageEnforce=
# limits,qos), licenses, a partition's MaxNodes and MaxTime, Slurm's priority (nice) and
# fairshare between two accounts: sched/pollux places a job only as large as Slurm would start
# it, never claims GPUs for a job Slurm keeps back, and gives contended GPUs to the job Slurm
# ranks first. Each case checks what Slurm shows. The jobs of a user under limits run as
# `daemon`: Slurm 26.05 does not resolve the user nobody (65534) in its association manager.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/cluster/lib.sh"
setup_test_cluster limits

step "start MariaDB, slurmdbd and a cluster that enforces limits and QOS"
"$here/cluster/cluster.sh" plugindir > /dev/null
"$here/cluster/accounting.sh" start "$run" > /dev/null
. "$run/dbd/env"
# Fairshare is recomputed every PriorityCalcPeriod (1 minute, the least Slurm takes).
start_pollux_cluster "$ACCOUNTING_CONF\nAccountingStorageEnforce=limits,qos\nAccountingStorageTRES=gres/gpu\nPriorityType=priority/multifactor\nPriorityWeightFairshare=10000\nPriorityCalcPeriod=1\nLicenses=lic:1\nPartitionName=small Nodes=n[1-4] MaxNodes=1 State=UP\nPartitionName=short Nodes=n[1-4] MaxTime=1 State=UP\nPartitionName=pqos Nodes=n[1-4] State=UP"
wait_until 30 "slurmctld registered with slurmdbd" \
  sh -c "sacctmgr -n -P list cluster format=cluster,controlport | grep -qx '$ACCOUNTING_CLUSTER|$(cat port_base)'"
{
  sacctmgr -i add account acct1 cluster="$ACCOUNTING_CLUSTER"
  sacctmgr -i add user daemon account=acct1
  sacctmgr -i add account acct2 cluster="$ACCOUNTING_CLUSTER"
  sacctmgr -i add user daemon account=acct2
  sacctmgr -i add qos gpu2 MaxTRESPerUser=gres/gpu=2
  sacctmgr -i add qos cpu2 MaxTRESPerUser=cpu=2
  sacctmgr -i add qos node1 MaxTRESPerJob=node=1
  sacctmgr -i add qos usernode1 MaxTRESPerUser=node=1
  sacctmgr -i add qos acctgpu2 MaxTRESPerAccount=gres/gpu=2
  sacctmgr -i add qos partgpu1 MaxTRESPerUser=gres/gpu=1
  sacctmgr -i modify user daemon set qos=normal,gpu2,cpu2,node1,usernode1,acctgpu2
} > sacctmgr.out
printf '#!/bin/sh\nsleep 600\n' > job.sh
chmod 644 job.sh
knows_qos() { scontrol show assoc_mgr flags=qos qos="$1" | grep -q "^QOS=$1("; }
# knows_user USER: slurmctld has the user's association.
knows_user() { scontrol show assoc_mgr flags=assoc users="$1" | grep -q "UserName=$1("; }
# assoc_shows PATTERN: slurmctld's associations of daemon and acct1 show PATTERN (a limit
# sacctmgr set reaches slurmctld from slurmdbd a moment later).
assoc_shows() {
  scontrol show assoc_mgr flags=assoc users=daemon accounts=acct1 | grep -q "$1"
}
wait_until 30 "slurmctld knowing QOS gpu2" knows_qos gpu2
wait_until 30 "slurmctld knowing user daemon" knows_user daemon

# as_daemon OPTIONS: daemon's job; prints its id. Retried for 10 s while slurmctld has yet to
# learn daemon's QOS list from slurmdbd.
as_daemon() {
  for _ in $(seq 20); do
    runuser -u daemon -- env SLURM_CONF="$SLURM_CONF" PATH="$PATH" \
      sbatch --parsable --chdir=/tmp -o /dev/null $1 "$run/job.sh" 2> sbatch.err && return 0
    sleep 0.5
  done
  fail "sbatch as daemon $1: $(cat sbatch.err)"
}
# as_daemon_adaptive OPTIONS COMMENT: daemon's adaptive job; prints its id.
as_daemon_adaptive() { as_daemon "$1 --comment=$2"; }
# daemon_gpus: GPUs daemon's running jobs hold.
daemon_gpus() {
  total=0
  for job in $(squeue -h -u daemon -t R -o %i); do total=$((total + $(job_gpus "$job"))); done
  echo "$total"
}
# waits_for JOB REASON: pending, held by Pollux, never placed, and shown waiting for REASON.
waits_for() {
  [ "$(job_state "$1")" = PENDING ] || fail "job $1 is $(job_state "$1"), not PENDING"
  held_by_pollux "$1" || fail "job $1 may begin: $(job_field "$1" EligibleTime)"
  ! placed "$1" || fail "job $1 was placed: $(grep "JobId=$1 start:" log/slurmctld.log)"
  "$build/src/cli/scontrol" show pollux job="$1" | grep -q "Waiting=$2" ||
    fail "job $1 not shown waiting for $2: $("$build/src/cli/scontrol" show pollux job="$1")"
}
cancel_all() { scancel "$@"; wait_until 30 "jobs $* gone" all_finished "$@"; }

step "QOS gpu2 (MaxTRESPerUser=gres/gpu=2): daemon's three jobs hold at most 2 GPUs together"
q1=$(as_daemon_adaptive --qos=gpu2 adaptive:max_gpus=8)
q2=$(as_daemon_adaptive --qos=gpu2 adaptive:max_gpus=8)
wait_until 30 "jobs $q1 and $q2 running" sh -c "squeue -h -j $q1,$q2 -t R -o %i | grep -c . | grep -qx 2"
q3=$(as_daemon_adaptive --qos=gpu2 adaptive:max_gpus=8)
for _ in 1 2 3 4 5; do
  [ "$(daemon_gpus)" -le 2 ] || fail "daemon holds $(daemon_gpus) GPUs under MaxTRESPerUser=2"
  sleep 1
done
waits_for "$q3" QOSMaxGRESPerUser
root_job=$(sbatch --parsable --comment=adaptive:min_gpus=4,max_gpus=4 -o /dev/null job.sh)
wait_until 30 "root's job $root_job running beside them" is_running "$root_job"
cancel_all "$q1" "$q2" "$q3" "$root_job"

step "QOS cpu2 (MaxTRESPerUser=cpu=2): daemon's third job waits, never placed, for the CPUs"
c1=$(as_daemon_adaptive --qos=cpu2 adaptive:max_gpus=8)
c2=$(as_daemon_adaptive --qos=cpu2 adaptive:max_gpus=8)
wait_until 30 "jobs $c1 and $c2 running" sh -c "squeue -h -j $c1,$c2 -t R -o %i | grep -c . | grep -qx 2"
c3=$(as_daemon_adaptive --qos=cpu2 adaptive:max_gpus=8)
sleep 6
cpus=$(squeue -h -u daemon -t R -o %C | awk '{total += $1} END {print total + 0}')
[ "$cpus" -le 2 ] || fail "daemon's running jobs hold $cpus CPUs under MaxTRESPerUser=cpu=2"
waits_for "$c3" QOSMaxCpuPerUserLimit
! grep -q "JobId=$c3 refused by Slurm" log/slurmctld.log || fail "job $c3 was placed and refused"
cancel_all "$c1" "$c2" "$c3"

step "QOS node1 (MaxTRESPerJob=node=1): a job of up to 8 GPUs grows only within one node"
n1job=$(as_daemon_adaptive --qos=node1 adaptive:max_gpus=8)
wait_until 30 "job $n1job running" is_running "$n1job"
sleep 6
[ "$(job_field "$n1job" NumNodes)" = 1 ] || fail "job $n1job runs on $(job_field "$n1job" NumNodes) nodes"
! grep -q "JobId=$n1job refused by Slurm" log/slurmctld.log || fail "job $n1job was refused"
cancel_all "$n1job"

step "QOS usernode1 (MaxTRESPerUser=node=1): daemon's job keeps to one node, the next waits"
u1=$(as_daemon_adaptive --qos=usernode1 adaptive:max_gpus=8)
wait_until 30 "job $u1 running" is_running "$u1"
u2=$(as_daemon_adaptive --qos=usernode1 adaptive:max_gpus=8)
sleep 6
[ "$(job_field "$u1" NumNodes)" = 1 ] || fail "job $u1 runs on $(job_field "$u1" NumNodes) nodes"
waits_for "$u2" QOSMaxNodePerUserLimit
cancel_all "$u1"
wait_until 30 "job $u2 running once $u1 ended" is_running "$u2"
cancel_all "$u2"

step "QOS acctgpu2 (MaxTRESPerAccount=gres/gpu=2): acct1's jobs hold at most 2 GPUs together"
a1=$(as_daemon_adaptive --qos=acctgpu2 adaptive:max_gpus=8)
a2=$(as_daemon_adaptive --qos=acctgpu2 adaptive:max_gpus=8)
wait_until 30 "jobs $a1 and $a2 running" sh -c "squeue -h -j $a1,$a2 -t R -o %i | grep -c . | grep -qx 2"
a3=$(as_daemon_adaptive --qos=acctgpu2 adaptive:max_gpus=8)
sleep 6
[ "$(daemon_gpus)" -le 2 ] || fail "acct1 holds $(daemon_gpus) GPUs under MaxTRESPerAccount=2"
waits_for "$a3" MaxGRESPerAccount
cancel_all "$a1" "$a2" "$a3"

step "partition pqos with QOS partgpu1 (MaxTRESPerUser=gres/gpu=1): its jobs are under it too"
scontrol update PartitionName=pqos QOS=partgpu1
p1=$(as_daemon_adaptive -ppqos adaptive:max_gpus=8)
wait_until 30 "job $p1 running" is_running "$p1"
p2=$(as_daemon_adaptive -ppqos adaptive:max_gpus=8)
sleep 6
[ "$(job_gpus "$p1")" = 1 ] || fail "job $p1 holds $(job_gpus "$p1") GPUs under its partition's QOS"
waits_for "$p2" QOSMaxGRESPerUser
cancel_all "$p1" "$p2"

step "association MaxJobs=1: daemon's second job waits, claims nothing, then runs"
sacctmgr -i modify user daemon set MaxJobs=1 > /dev/null
wait_until 30 "slurmctld knowing MaxJobs=1" assoc_shows "MaxJobs=1("
m1=$(as_daemon_adaptive "" adaptive:min_gpus=4,max_gpus=4)
wait_until 30 "job $m1 running" is_running "$m1"
m2=$(as_daemon_adaptive "" adaptive:min_gpus=4,max_gpus=4)
sleep 6
waits_for "$m2" AssocMaxJobsLimit
cancel_all "$m1"
wait_until 30 "job $m2 running once $m1 ended" is_running "$m2"
cancel_all "$m2"
sacctmgr -i modify user daemon set MaxJobs=-1 > /dev/null
wait_until 30 "slurmctld forgetting MaxJobs=1" sh -c "! scontrol show assoc_mgr flags=assoc users=daemon accounts=acct1 | grep -q 'MaxJobs=1('"

step "account GrpTRES=gres/gpu=4: daemon's second 4-GPU job waits"
sacctmgr -i modify account acct1 set GrpTRES=gres/gpu=4 > /dev/null
wait_until 30 "slurmctld knowing GrpTRES=gres/gpu=4" assoc_shows "gres/gpu=4("
g1=$(as_daemon_adaptive "" adaptive:min_gpus=4,max_gpus=4)
wait_until 30 "job $g1 running" is_running "$g1"
g2=$(as_daemon_adaptive "" adaptive:min_gpus=4,max_gpus=4)
sleep 6
waits_for "$g2" AssocGrpGRES
cancel_all "$g1" "$g2"
sacctmgr -i modify account acct1 set GrpTRES=gres/gpu=-1 > /dev/null
wait_until 30 "slurmctld forgetting GrpTRES=gres/gpu=4" sh -c "! scontrol show assoc_mgr flags=assoc users=daemon accounts=acct1 | grep -q 'gres/gpu=4('"

step "partition small (MaxNodes=1): an 8-GPU job waits; a growing one keeps to one node"
wide=$(sbatch --parsable -p small --comment=adaptive:min_gpus=8,max_gpus=8 -o /dev/null job.sh)
narrow=$(sbatch --parsable -p small --comment=adaptive:max_gpus=8 -o /dev/null job.sh)
wait_until 30 "job $narrow running" is_running "$narrow"
sleep 6
waits_for "$wide" PartitionNodeLimit
[ "$(job_field "$narrow" NumNodes)" = 1 ] || fail "job $narrow runs on $(job_field "$narrow" NodeList)"
cancel_all "$wide" "$narrow"

step "licenses (lic:1 held by a rigid job): the adaptive job is never placed until it is free"
holder=$(sbatch --parsable -L lic:1 -o /dev/null job.sh)
wait_until 30 "job $holder running" is_running "$holder"
scontrol show licenses lic | grep -q "Used=1" || fail "lic not in use: $(scontrol show licenses lic)"
licensed=$(sbatch --parsable -L lic:1 --comment=adaptive:min_gpus=4,max_gpus=4 -o /dev/null job.sh)
sleep 6
waits_for "$licensed" Licenses
cancel_all "$holder"
wait_until 30 "job $licensed running once the license is free" is_running "$licensed"
placed_once "$licensed"
cancel_all "$licensed"

step "licenses ahead (a reservation from in 10 minutes holds lic:1): a --time=30 job waits, a --time=3 one runs"
scontrol create reservation ReservationName=licahead StartTime=now+10minutes Duration=10 \
  Users=root Licenses=lic:1 Flags=LICENSE_ONLY > /dev/null
long=$(sbatch --parsable -L lic:1 --time=30 --comment=adaptive:min_gpus=1,max_gpus=1 -o /dev/null job.sh)
sleep 6
waits_for "$long" Licenses
short=$(sbatch --parsable -L lic:1 --time=3 --comment=adaptive:min_gpus=1,max_gpus=1 -o /dev/null job.sh)
wait_until 30 "job $short running" is_running "$short"
cancel_all "$long" "$short"
scontrol delete ReservationName=licahead

step "partition short (MaxTime=1): a --time=5 job waits; one that may also use gpu runs there"
rigid_long=$(sbatch --parsable -p short --time=5 --gres=gpu:1 -o /dev/null job.sh)
long=$(sbatch --parsable -p short --time=5 --comment=adaptive:max_gpus=4 -o /dev/null job.sh)
either=$(sbatch --parsable -p short,gpu --time=5 --comment=adaptive:max_gpus=4 -o /dev/null job.sh)
wait_until 30 "job $either running" is_running "$either"
[ "$(squeue -h -j "$either" -o %P)" = gpu ] || fail "job $either runs in $(squeue -h -j "$either" -o %P)"
sleep 4
[ "$(squeue -h -j "$rigid_long" -o %r)" = PartitionTimeLimit ] ||
  fail "rigid job $rigid_long pends for $(squeue -h -j "$rigid_long" -o %r), not PartitionTimeLimit"
waits_for "$long" PartitionTimeLimit
cancel_all "$rigid_long" "$long" "$either"

step "priority (multifactor, nice): of two jobs waiting for one a100 node, Slurm's first gets it"
rigid1=$(sbatch --parsable --gres=gpu:a100:4 -w n1 -o /dev/null job.sh)
rigid2=$(sbatch --parsable --gres=gpu:a100:4 -w n2 -o /dev/null job.sh)
wait_until 30 "the a100 nodes taken" sh -c "squeue -h -j $rigid1,$rigid2 -t R -o %i | grep -c . | grep -qx 2"
low=$(sbatch --parsable --nice=10000 --comment=adaptive:min_gpus=4,max_gpus=4,gpu_type=a100 \
  -o /dev/null job.sh)
high=$(sbatch --parsable --nice=-10000 --comment=adaptive:min_gpus=4,max_gpus=4,gpu_type=a100 \
  -o /dev/null job.sh)
sleep 4
[ "$(job_field "$high" Priority)" -gt "$(job_field "$low" Priority)" ] ||
  fail "Slurm's priorities: $high $(job_field "$high" Priority), $low $(job_field "$low" Priority)"
cancel_all "$rigid1"
wait_until 30 "job $high (priority $(job_field "$high" Priority)) running" is_running "$high"
[ "$(job_state "$low")" = PENDING ] || fail "job $low is $(job_state "$low")"
cancel_all "$high" "$low" "$rigid2"

step "fairshare: acct1 has used GPUs, acct2 not; acct2's waiting job gets the a100 node freed"
busy1=$(as_daemon "-A acct1 --gres=gpu:a100:4 -w n1")
busy2=$(as_daemon "-A acct1 --gres=gpu:a100:4 -w n2")
wait_until 30 "acct1 holding both a100 nodes" sh -c "squeue -h -j $busy1,$busy2 -t R -o %i | grep -c . | grep -qx 2"
first=$(as_daemon_adaptive "-A acct1" adaptive:min_gpus=4,max_gpus=4,gpu_type=a100)
second=$(as_daemon_adaptive "-A acct2" adaptive:min_gpus=4,max_gpus=4,gpu_type=a100)
# priority JOB: Slurm's priority of the job (sprio lists only eligible jobs, not those Pollux
# holds by their begin time).
priority() { squeue -h -j "$1" -o %Q; }
# fairshare ACCOUNT: daemon's fairshare factor in ACCOUNT, as sshare shows it.
fairshare() { sshare -h -P -A "$1" -u daemon -o Account,User,FairShare | awk -F'|' '$2 == "daemon" {print $3}'; }
ranks_first() { [ "$(priority "$1")" -gt "$(priority "$2")" ]; }
wait_until 90 "Slurm ranking acct2's job $second above acct1's $first" ranks_first "$second" "$first"
echo "   sshare: daemon's fairshare in acct1 $(fairshare acct1), in acct2 $(fairshare acct2);" \
  "squeue priority: $first (acct1) $(priority "$first"), $second (acct2) $(priority "$second")"
python3 -c "import sys; sys.exit(not float(sys.argv[1]) > float(sys.argv[2]))" \
  "$(fairshare acct2)" "$(fairshare acct1)" || fail "sshare does not rank acct2 above acct1"
cancel_all "$busy1"
wait_until 30 "acct2's job $second running on the a100 node freed" is_running "$second"
[ "$(job_state "$first")" = PENDING ] || fail "acct1's job $first is $(job_state "$first")"
cancel_all "$first" "$second" "$busy2"

for reason in QOSMaxGRESPerUser AssocMaxJobsLimit AssocGrpGRES PartitionNodeLimit Licenses \
  PartitionTimeLimit; do
  ! grep -q "refused by Slurm where placed (Reason=$reason" log/slurmctld.log ||
    fail "a placement was refused for $reason, which Pollux reads ahead"
done
echo "PASS"
