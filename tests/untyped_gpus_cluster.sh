#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Nodes whose GPUs have no type (Gres=gpu:4, gres.conf without Type=): sched/pollux places
# adaptive jobs on them and then leaves a job that keeps its allocation alone, round after
# round (it used to requeue such a job every round, finding its untyped GPUs of no type).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/cluster/lib.sh"
setup_test_cluster untyped-gpus

step "start a cluster with sched/pollux on nodes with untyped GPUs"
CLUSTER_UNTYPED_GPUS=1 start_pollux_cluster
scontrol show node n1 | grep -q "Gres=gpu:4$" || fail "n1 has typed GPUs: $(scontrol show node n1 | grep Gres)"
printf '#!/bin/sh\nsleep 600\n' > job.sh

step "an adaptive job is placed on untyped GPUs and runs"
job=$(sbatch --parsable --comment=adaptive:max_gpus=4 -o /dev/null job.sh)
wait_until 30 "job $job running" is_running "$job"
grep "sched/pollux: JobId=$job start:" log/slurmctld.log | sed 's/^.*sched/   sched/'

step "five rounds later it still runs where it started, never requeued"
sleep 10
grep -q "sched/pollux: JobId=$job requeue" log/slurmctld.log &&
  fail "job $job was requeued: $(grep "JobId=$job requeue" log/slurmctld.log | head -n 2)"
[ "$(job_field "$job" Restarts)" = 0 ] || fail "job $job restarted $(job_field "$job" Restarts) times"
is_running "$job" || fail "job $job is $(job_state "$job")"
"$build/src/cli/scontrol" show pollux > pollux.txt
grep -q "^NodeName=n1 GpuType=gpu Gpus=4 " pollux.txt ||
  fail "n1 is not shown with untyped GPUs: $(grep "^NodeName=n1 " pollux.txt)"
grep "^NodeName=n1 \|Allocation=" pollux.txt | sed 's/^ */   /'
scancel "$job"
echo "PASS"
