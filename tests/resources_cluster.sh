#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# CPUs and memory, not only GPUs: on a real cluster with memory as a consumable resource
# (CR_Core_Memory; two CPUs and 2000 MB per node), sched/pollux places adaptive jobs only on
# nodes whose free CPUs and memory cover their --cpus-per-task and --mem, and holds a job no
# node can take rather than placing it where Slurm would never start it.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/cluster/lib.sh"
setup_test_cluster resources

step "start a cluster with sched/pollux and SelectTypeParameters=CR_Core_Memory"
start_pollux_cluster 'SelectTypeParameters=CR_Core_Memory'
scontrol show config | grep -q "^SelectTypeParameters *= CR_CORE_MEMORY" ||
  fail "memory is not consumable: $(scontrol show config | grep SelectTypeParameters)"
printf '#!/bin/sh\nsleep 600\n' > job.sh

step "CPU-only jobs take one CPU of n1 and one CPU and 1000 MB of n3"
blocker_n1=$(sbatch --parsable -w n1 -c 1 --mem=100 -o /dev/null job.sh)
blocker_n3=$(sbatch --parsable -w n3 -c 1 --mem=1000 -o /dev/null job.sh)
wait_until 20 "job $blocker_n1 running on n1" runs_on "$blocker_n1" n1
wait_until 20 "job $blocker_n3 running on n3" runs_on "$blocker_n3" n3

step "an a100 job with --cpus-per-task=2 goes to n2, where two CPUs are free"
two_cpus=$(sbatch --parsable --comment=adaptive:gpu_type=a100,max_gpus=4 -c 2 --mem=500 \
  -o /dev/null job.sh)
wait_until 30 "job $two_cpus running on n2" runs_on "$two_cpus" n2
echo "   job $two_cpus: $(job_field "$two_cpus" NodeList), $(job_field "$two_cpus" TresPerNode)"

step "a v100 job with --mem=1500 goes to n4: n3 has a CPU but only 1000 MB left"
big_memory=$(sbatch --parsable --comment=adaptive:gpu_type=v100,max_gpus=4 -c 1 --mem=1500 \
  -o /dev/null job.sh)
wait_until 30 "job $big_memory running on n4" runs_on "$big_memory" n4

step "another a100 job with --cpus-per-task=2 fits no a100 node: it stays held, unplaced"
waiting=$(sbatch --parsable --comment=adaptive:gpu_type=a100,max_gpus=4 -c 2 --mem=100 \
  -o /dev/null job.sh)
sleep 8  # four rounds
[ "$(job_state "$waiting")" = PENDING ] || fail "job $waiting is $(job_state "$waiting")"
held_by_pollux "$waiting" || fail "job $waiting was let begin without a place"
placed "$waiting" && fail "job $waiting was placed: $(grep "JobId=$waiting start:" log/slurmctld.log)"
"$build/src/cli/scontrol" show pollux > pollux.txt
grep -q "^NodeName=n1 .* FreeCpus=1 FreeMem=1900$" pollux.txt ||
  fail "scontrol show pollux lacks n1's free CPUs and memory: $(grep NodeName pollux.txt)"
echo "   job $waiting held; $(grep "^NodeName=n1 " pollux.txt)"

step "when n1's CPU-only job ends, the waiting job is placed there"
scancel "$blocker_n1"
wait_until 30 "job $waiting running on n1" runs_on "$waiting" n1
grep -q "round skipped" log/slurmctld.log && fail "a round was skipped: $(grep "round skipped" log/slurmctld.log | tail -n 1)"
scancel "$two_cpus" "$big_memory" "$waiting" "$blocker_n3"
echo "PASS"
