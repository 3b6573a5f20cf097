#!/bin/sh
# QOS and association limits under slurmdbd with a real MariaDB (AccountingStorageEnforce=
# limits,qos), licenses and a partition's MaxNodes: sched/pollux places a job only as large
# as Slurm would start it, never claims GPUs for a job Slurm keeps back, and takes back, once,
# a placement Slurm refuses. Each case checks what Slurm shows. The jobs of a user under
# limits run as `daemon`: Slurm 26.05 does not resolve the user nobody (65534) in its
# association manager.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/cluster/lib.sh"
setup_test_cluster limits

step "start MariaDB, slurmdbd and a cluster that enforces limits and QOS"
"$here/cluster/cluster.sh" plugindir > /dev/null
"$here/cluster/accounting.sh" start "$run" > /dev/null
. "$run/dbd/env"
start_pollux_cluster "$ACCOUNTING_CONF\nAccountingStorageEnforce=limits,qos\nAccountingStorageTRES=gres/gpu\nPriorityType=priority/multifactor\nLicenses=lic:1\nPartitionName=small Nodes=n[1-4] MaxNodes=1 State=UP"
wait_until 30 "slurmctld registered with slurmdbd" \
  sh -c "sacctmgr -n -P list cluster format=cluster,controlport | grep -qx '$ACCOUNTING_CLUSTER|$(cat port_base)'"
{
  sacctmgr -i add account acct1 cluster="$ACCOUNTING_CLUSTER"
  sacctmgr -i add user daemon account=acct1
  sacctmgr -i add qos gpu2 MaxTRESPerUser=gres/gpu=2
  sacctmgr -i modify user daemon set qos=normal,gpu2
} > sacctmgr.out
printf '#!/bin/sh\nsleep 600\n' > job.sh
chmod 644 job.sh
knows_qos() { scontrol show assoc_mgr flags=qos qos="$1" | grep -q "^QOS=$1("; }
# knows_user USER: slurmctld has the user's association.
knows_user() { scontrol show assoc_mgr flags=assoc users="$1" | grep -q "UserName=$1("; }
wait_until 30 "slurmctld knowing QOS gpu2" knows_qos gpu2
wait_until 30 "slurmctld knowing user daemon" knows_user daemon

# as_daemon_adaptive OPTIONS COMMENT: daemon's adaptive job; prints its id. Retried for 10 s
# while slurmctld has yet to learn daemon's QOS list from slurmdbd.
as_daemon_adaptive() {
  for _ in $(seq 20); do
    runuser -u daemon -- env SLURM_CONF="$SLURM_CONF" PATH="$PATH" \
      sbatch --parsable --chdir=/tmp -o /dev/null $1 --comment="$2" "$run/job.sh" \
      2> sbatch.err && return 0
    sleep 0.5
  done
  fail "sbatch as daemon $1: $(cat sbatch.err)"
}
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
  ! placed "$1" || fail "job $1 was placed: $(grep "JobId=$1 start" log/slurmctld.log)"
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

step "association MaxJobs=1: daemon's second job waits, claims nothing, then runs"
sacctmgr -i modify user daemon set MaxJobs=1 > /dev/null
sleep 2
m1=$(as_daemon_adaptive "" adaptive:min_gpus=4,max_gpus=4)
wait_until 30 "job $m1 running" is_running "$m1"
m2=$(as_daemon_adaptive "" adaptive:min_gpus=4,max_gpus=4)
sleep 6
waits_for "$m2" AssocMaxJobsLimit
cancel_all "$m1"
wait_until 30 "job $m2 running once $m1 ended" is_running "$m2"
cancel_all "$m2"
sacctmgr -i modify user daemon set MaxJobs=-1 > /dev/null

step "account GrpTRES=gres/gpu=4: daemon's second 4-GPU job waits"
sacctmgr -i modify account acct1 set GrpTRES=gres/gpu=4 > /dev/null
sleep 2
g1=$(as_daemon_adaptive "" adaptive:min_gpus=4,max_gpus=4)
wait_until 30 "job $g1 running" is_running "$g1"
g2=$(as_daemon_adaptive "" adaptive:min_gpus=4,max_gpus=4)
sleep 6
waits_for "$g2" AssocGrpGRES
cancel_all "$g1" "$g2"
sacctmgr -i modify account acct1 set GrpTRES=gres/gpu=-1 > /dev/null

step "partition small (MaxNodes=1): an 8-GPU job waits; a growing one keeps to one node"
wide=$(sbatch --parsable -p small --comment=adaptive:min_gpus=8,max_gpus=8 -o /dev/null job.sh)
narrow=$(sbatch --parsable -p small --comment=adaptive:max_gpus=8 -o /dev/null job.sh)
wait_until 30 "job $narrow running" is_running "$narrow"
sleep 6
waits_for "$wide" PartitionNodeLimit
[ "$(job_field "$narrow" NumNodes)" = 1 ] || fail "job $narrow runs on $(job_field "$narrow" NodeList)"
cancel_all "$wide" "$narrow"

step "licenses (lic:1 held by a rigid job): the adaptive job's placement is taken back once"
holder=$(sbatch --parsable -L lic:1 -o /dev/null job.sh)
wait_until 30 "job $holder running" is_running "$holder"
licensed=$(sbatch --parsable -L lic:1 --comment=adaptive:min_gpus=4,max_gpus=4 -o /dev/null job.sh)
wait_until 30 "job $licensed's placement refused" \
  grep -q "JobId=$licensed refused by Slurm where placed (Reason=Licenses" log/slurmctld.log
sleep 6
placed_once "$licensed"
"$build/src/cli/scontrol" show pollux job="$licensed" | grep -q "Waiting=Licenses" ||
  fail "job $licensed not shown waiting for Licenses"
held_by_pollux "$licensed" || fail "job $licensed still claims its placement"
cancel_all "$holder"
wait_until 30 "job $licensed running once the license is free" is_running "$licensed"
cancel_all "$licensed"

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

for reason in QOSMaxGRESPerUser AssocMaxJobsLimit AssocGrpGRES PartitionNodeLimit; do
  ! grep -q "refused by Slurm where placed (Reason=$reason" log/slurmctld.log ||
    fail "a placement was refused for $reason, which Pollux reads ahead"
done
echo "PASS"
