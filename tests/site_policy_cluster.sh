#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Site policy: sched/pollux places an adaptive job only where and when Slurm itself would
# start it, and never undoes a hold it did not set. Each case checks what Slurm shows.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/cluster/lib.sh"
setup_test_cluster site-policy

step "start a cluster (n1,n2: 4 x a100; n3,n4: 4 x v100); n4 has feature ib"
start_pollux_cluster
printf '#!/bin/sh\nsleep 600\n' > job.sh
scontrol update NodeName=n4 AvailableFeatures=ib ActiveFeatures=ib

adaptive() {  # adaptive [SBATCH-OPTIONS...]: a job of 4 GPUs; prints its id
  sbatch --parsable --comment=adaptive:min_gpus=4,max_gpus=4 -o /dev/null "$@" job.sh
}
reason() { squeue -h -j "$1" -o %r; }
# still_pending JOB REASON: after two rounds and more, JOB pends for REASON and Pollux never
# placed it.
still_pending() {
  sleep 6
  [ "$(job_state "$1")" = PENDING ] || fail "job $1 is $(job_state "$1"), not PENDING"
  [ "$(reason "$1")" = "$2" ] || fail "job $1 pends for $(reason "$1"), not $2"
  ! placed "$1" || fail "job $1 was placed: $(grep "JobId=$1 start:" log/slurmctld.log)"
}
runs_within() {  # runs_within JOB NODE-PATTERN
  wait_until 30 "job $1 running" is_running "$1"
  nodes=$(job_field "$1" NodeList)
  case "$nodes" in
    $2) echo "   job $1 runs on $nodes" ;;
    *) fail "job $1 runs on $nodes, not on $2" ;;
  esac
}

step "sbatch --hold: the job stays held by its user; released, Pollux places it"
held=$(adaptive --hold)
still_pending "$held" JobHeldUser
[ "$(job_field "$held" Priority)" = 0 ] || fail "job $held: priority $(job_field "$held" Priority)"
scontrol release "$held"
runs_within "$held" 'n[1-4]'

step "an admin's hold of a job waiting for GPUs outlasts the GPUs it waited for"
fillers=""
for _ in 1 2 3; do fillers="$fillers $(adaptive)"; done
for job in $fillers; do wait_until 30 "job $job running" is_running "$job"; done
waiting=$(adaptive)
sleep 4
[ "$(job_state "$waiting")" = PENDING ] || fail "job $waiting runs on a full cluster"
scontrol hold "$waiting"
scancel $fillers
wait_until 30 "fillers gone" all_finished $fillers
still_pending "$waiting" JobHeldAdmin
scontrol release "$waiting"
runs_within "$waiting" 'n[1-4]'
scancel "$held" "$waiting"
wait_until 30 "jobs gone" all_finished "$held" "$waiting"

step "a job waiting for a dependency claims no GPUs; it runs once the dependency is met"
first=$(sbatch --parsable -o /dev/null job.sh)
wait_until 30 "job $first running" is_running "$first"
after=$(adaptive --dependency=afterany:"$first")
still_pending "$after" Dependency
scancel "$first"
runs_within "$after" 'n[1-4]'
scancel "$after"
wait_until 30 "job $after gone" all_finished "$after"

step "a job of reservation rv (n3) runs in it; a MAINT reservation keeps n1 from others"
scontrol create reservation ReservationName=rv StartTime=now Duration=30 Nodes=n3 Users=root
scontrol create reservation ReservationName=maint StartTime=now Duration=30 Nodes=n1 \
  Users=root Flags=MAINT
in_rv=$(adaptive --reservation=rv)
runs_within "$in_rv" n3
a100=$(sbatch --parsable --comment=adaptive:min_gpus=4,max_gpus=4,gpu_type=a100 -o /dev/null job.sh)
runs_within "$a100" n2
scancel "$in_rv" "$a100"
wait_until 30 "jobs gone" all_finished "$in_rv" "$a100"
scontrol delete ReservationName=rv
scontrol delete ReservationName=maint

step "--constraint, --exclude and --nodelist are kept"
with_ib=$(adaptive --constraint=ib)
runs_within "$with_ib" n4
excluding=$(adaptive --exclude=n1,n2)
runs_within "$excluding" n3
scancel "$with_ib" "$excluding"
wait_until 30 "jobs gone" all_finished "$with_ib" "$excluding"
listed=$(adaptive --nodelist=n2)
runs_within "$listed" n2
scancel "$listed"

step "a MAINT reservation ahead: a running job is moved off in time and keeps what --time had left"
timed=$(sbatch --parsable -t 3 --comment=adaptive:min_gpus=4,max_gpus=4,gpu_type=a100 \
  -o /dev/null job.sh)
wait_until 30 "job $timed running" is_running "$timed"
first_node=$(job_field "$timed" NodeList)
sleep 60
scontrol create reservation ReservationName=ahead StartTime=now+90 Duration=10 \
  Nodes="$first_node" Users=root Flags=MAINT,IGNORE_JOBS
wait_until 30 "job $timed moved off $first_node" \
  sh -c "[ \"\$(squeue -h -j $timed -t R -o %N)\" != '' ] && [ \"\$(squeue -h -j $timed -o %N)\" != $first_node ]"
limit=$(job_field "$timed" TimeLimit)
echo "   job $timed: $first_node -> $(job_field "$timed" NodeList), TimeLimit=$limit"
[ "$limit" = 00:02:00 ] || fail "job $timed got TimeLimit=$limit after its requeue, not the 2 minutes left"
[ "$(job_field "$timed" Restarts)" = 1 ] || fail "job $timed: Restarts=$(job_field "$timed" Restarts)"
scancel "$timed"
wait_until 30 "job $timed gone" all_finished "$timed"
scontrol delete ReservationName=ahead

! grep "refused by Slurm" log/slurmctld.log ||
  fail "Slurm refused a placement that the site's policy forbade"
for job in $held $waiting $after $in_rv $a100 $with_ib $excluding $listed; do
  placed_once "$job"
done
echo "PASS"
