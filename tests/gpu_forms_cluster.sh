#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Rigid jobs ask for GPUs in every form Slurm takes, not only --gres=gpu:N: --gpus (per job),
# --gpus-per-task, --gpus-per-node. sched/pollux counts the GPUs each node's jobs hold as
# Slurm does, however they asked, so it never places an adaptive job on GPUs a rigid job
# holds (Slurm would not start it there); and it reads a waiting rigid --gpus job's GPUs as
# the demand adaptive jobs yield to.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/cluster/lib.sh"
setup_test_cluster gpu-forms

step "start a cluster with sched/pollux"
start_pollux_cluster
printf '#!/bin/sh\nsleep 600\n' > job.sh

step "rigid jobs hold all GPUs of n1 (--gpus=a100:4) and of n2 (--gpus-per-task=4)"
per_job=$(sbatch --parsable -w n1 --gpus=a100:4 -o /dev/null job.sh)
per_task=$(sbatch --parsable -w n2 -n 1 --gpus-per-task=4 -o /dev/null job.sh)
wait_until 20 "job $per_job running on n1" runs_on "$per_job" n1
wait_until 20 "job $per_task running on n2" runs_on "$per_task" n2

step "an adaptive a100 job has no a100 GPU to go to: it stays held, unplaced"
adaptive=$(sbatch --parsable --comment=adaptive:gpu_type=a100,max_gpus=4 -o /dev/null job.sh)
sleep 8  # four rounds
placed "$adaptive" &&
  fail "job $adaptive was placed on GPUs a rigid job holds: $(grep "JobId=$adaptive start:" log/slurmctld.log)"
[ "$(job_state "$adaptive")" = PENDING ] || fail "job $adaptive is $(job_state "$adaptive")"
held_by_pollux "$adaptive" || fail "job $adaptive was let begin without a place"
"$build/src/cli/scontrol" show pollux > pollux.txt
for node in n1 n2; do
  grep -q "^NodeName=$node .* Gpus=4 FreeGpus=0 " pollux.txt ||
    fail "$node's GPUs are not counted as held: $(grep "^NodeName=$node " pollux.txt)"
done
grep "^NodeName=n[12] " pollux.txt | sed 's/^/   /'

step "when the --gpus-per-task job ends, the adaptive job is placed on n2 and runs"
scancel "$per_task"
wait_until 30 "job $adaptive running on n2" runs_on "$adaptive" n2
grep "sched/pollux: JobId=$adaptive start:" log/slurmctld.log | sed 's/^.*sched/   sched/'

step "a waiting rigid --gpus=a100:8 job is read as 8 a100 GPUs of demand"
waiting=$(sbatch --parsable --gpus=a100:8 -o /dev/null job.sh)
sleep 4  # two rounds
"$build/src/cli/scontrol" show pollux > pollux.txt
grep -q "^JobId=$waiting .*State=pending Adaptive=no MinGpus=8 MaxGpus=8 GpuType=a100" \
  pollux.txt || fail "the --gpus job's request was not read: $(grep "^JobId=$waiting " pollux.txt)"
grep "^JobId=$waiting " pollux.txt | sed 's/^/   /'
grep -q "round skipped" log/slurmctld.log &&
  fail "a round was skipped: $(grep "round skipped" log/slurmctld.log | tail -n 1)"
scancel "$per_job" "$adaptive" "$waiting"
echo "PASS"
