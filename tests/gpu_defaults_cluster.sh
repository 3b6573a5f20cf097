#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# DefCpuPerGPU and DefMemPerGPU, slurm.conf's and a partition's: select/cons_tres gives a GPU
# job that asked for no CPUs or memory per GPU those defaults, so sched/pollux counts them
# when it places an adaptive job: only on a node whose free CPUs and memory cover them, and
# right the first time. (Slurm writes the defaults into a job's CpusPerTres and MemPerTres
# only when it first tries to start it: without them the job was placed wrongly once and
# placed again a round later.)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/cluster/lib.sh"
setup_test_cluster gpu-defaults

step "start a cluster: CR_Core_Memory, DefCpuPerGPU=1, partition v100 with DefMemPerGPU=800"
start_pollux_cluster 'SelectTypeParameters=CR_Core_Memory\nDefMemPerCPU=100\nDefCpuPerGPU=1\nPartitionName=v100 Nodes=n[3-4] DefMemPerGPU=800 State=UP'
scontrol show partition v100 | grep -q "JobDefaults=DefMemPerGPU=800" ||
  fail "partition v100 lacks its default: $(scontrol show partition v100 | grep JobDefaults)"
printf '#!/bin/sh\nsleep 600\n' > job.sh

step "CPU-only jobs take a CPU of n1, and a CPU and 1500 MB of n3"
blocker_n1=$(sbatch --parsable -w n1 -c 1 --mem=100 -o /dev/null job.sh)
blocker_n3=$(sbatch --parsable -p v100 -w n3 -c 1 --mem=1500 -o /dev/null job.sh)
wait_until 20 "job $blocker_n1 running on n1" runs_on "$blocker_n1" n1
wait_until 20 "job $blocker_n3 running on n3" runs_on "$blocker_n3" n3

step "a 2-GPU a100 job needs 2 CPUs by DefCpuPerGPU: it goes to n2, not n1 (1 CPU free)"
two_gpus=$(sbatch --parsable --comment=adaptive:gpu_type=a100,min_gpus=2,max_gpus=2 \
  -o /dev/null job.sh)
wait_until 30 "job $two_gpus running on n2" runs_on "$two_gpus" n2
placed_once "$two_gpus"
echo "   job $two_gpus: $(job_field "$two_gpus" NodeList), $(job_field "$two_gpus" TresPerNode)"

step "a 1-GPU job in v100 needs 800 MB by DefMemPerGPU: it goes to n4, not n3 (500 MB free)"
one_gpu=$(sbatch --parsable -p v100 --comment=adaptive:gpu_type=v100,max_gpus=1 -o /dev/null job.sh)
wait_until 30 "job $one_gpu running on n4" runs_on "$one_gpu" n4
placed_once "$one_gpu"
echo "   job $one_gpu: $(job_field "$one_gpu" NodeList), $(job_field "$one_gpu" TresPerNode)"
grep -q "round skipped" log/slurmctld.log &&
  fail "a round was skipped: $(grep "round skipped" log/slurmctld.log | tail -n 1)"
scancel "$blocker_n1" "$blocker_n3" "$two_gpus" "$one_gpu"
echo "PASS"
