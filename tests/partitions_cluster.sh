#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Partitions: an adaptive job runs only on the nodes of its partition (Slurm would never start
# it elsewhere), even where GPUs of a faster type are free outside it.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/cluster/lib.sh"
setup_test_cluster partitions

step "start a cluster: partition gpu (n1-n4, default) and partition v100 (n3, n4)"
start_pollux_cluster 'PartitionName=v100 Nodes=n[3-4] State=UP'
printf '#!/bin/sh\nsleep 600\n' > job.sh

step "an untyped adaptive job in partition v100 runs on n3 or n4, though a100 is 3x faster"
in_v100=$(sbatch --parsable -p v100 --comment=adaptive:max_gpus=4 -o /dev/null job.sh)
wait_until 30 "job $in_v100 running" is_running "$in_v100"
case "$(job_field "$in_v100" NodeList)" in
  n3|n4) ;;
  *) fail "job $in_v100 runs on $(job_field "$in_v100" NodeList), outside partition v100" ;;
esac
placed_once "$in_v100"
grep "sched/pollux: JobId=$in_v100 start:" log/slurmctld.log | sed 's/^.*sched/   sched/'

step "an untyped adaptive job in partition gpu takes the faster a100"
in_gpu=$(sbatch --parsable --comment=adaptive:max_gpus=4 -o /dev/null job.sh)
wait_until 30 "job $in_gpu running" is_running "$in_gpu"
case "$(job_field "$in_gpu" NodeList)" in
  n1|n2) ;;
  *) fail "job $in_gpu runs on $(job_field "$in_gpu" NodeList), not on an a100 node" ;;
esac
grep "sched/pollux: JobId=$in_gpu start:" log/slurmctld.log | sed 's/^.*sched/   sched/'
grep -q "round skipped" log/slurmctld.log &&
  fail "a round was skipped: $(grep "round skipped" log/slurmctld.log | tail -n 1)"
scancel "$in_v100" "$in_gpu"
echo "PASS"
