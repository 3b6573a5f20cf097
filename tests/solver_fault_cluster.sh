#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# GLPK failing inside a real slurmctld: slurmctld runs with tests/glpk_fault.c preloaded,
# which makes glp_intopt/glp_simplex raise a GLPK internal error or report an exhausted time
# limit while a control file says so. Each such round must keep the current allocations (no
# job started, resized or stopped), say so in the log and in scontrol show pollux, and leave
# slurmctld running; once GLPK works again, rounds place jobs as before.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/cluster/lib.sh"
setup_test_cluster solver-fault
fault_library="$build/tests/.libs/libglpkfault.so"
[ -f "$fault_library" ] || fail "$fault_library not built (make check builds it)"
fault_file="$run/glpk-fault"

step "start a cluster with sched/pollux and GLPK under fault injection"
SLURMCTLD_WRAPPER="env LD_PRELOAD=$fault_library POLLUX_GLPK_FAULT_FILE=$fault_file" \
  "$here/cluster/cluster.sh" start "$run" sched/pollux \
  "pollux_interval=2,pollux_rest_port=$port" "$plugins" 'JobSubmitPlugins=pollux\nMinJobAge=600'
. "$run/env"
cd "$run"
printf '#!/bin/sh\nsleep 600\n' > job.sh
submit() { sbatch --parsable --comment=adaptive:max_gpus=4 -o /dev/null job.sh; }
first=$(submit)
second=$(submit)
wait_until 30 "jobs $first and $second running" sh -c "[ \"\$(squeue -h -t R -o %i | wc -l)\" -eq 2 ]"
placement() { squeue -h -t R -o "%i %N %b" | sort; }

show_round() { "$build/src/cli/scontrol" show pollux --json; }
round_field() {  # round_field KEY: the last round's KEY from scontrol show pollux --json
  show_round | python3 -c "import json,sys; print(json.load(sys.stdin)['last_round']['$1'])"
}
log_lines() { grep -c "$1" log/slurmctld.log || true; }

for fault in error timeout; do
  case $fault in
    error) expected="solver failed: GLPK internal error: round keeps every current allocation" ;;
    timeout) expected="solver time_limit: round keeps every current allocation" ;;
  esac
  step "GLPK $fault: rounds keep the current allocations"
  before=$(placement)
  actions_before=$(log_lines "sched/pollux: JobId=")
  echo "$fault" > "$fault_file"
  third=$(submit)
  seen_twice() { [ "$(log_lines "sched/pollux: $expected")" -ge 2 ]; }
  wait_until 30 "two rounds logging '$expected'" seen_twice
  [ "$(round_field kept_current)" = True ] || fail "scontrol show pollux: kept_current is not true"
  [ "$(placement)" = "$before" ] || fail "allocations changed under a GLPK $fault: $(placement)"
  [ "$(job_state "$third")" = PENDING ] || fail "job $third was started although GLPK failed"
  [ "$(log_lines "sched/pollux: JobId=")" -eq "$actions_before" ] ||
    fail "actions taken under a GLPK $fault: $(grep "sched/pollux: JobId=" log/slurmctld.log | tail -n 2)"
  echo "   $(grep -o "sched/pollux: solver.*" log/slurmctld.log | tail -n 1); solver_status $(round_field solver_status)"
  rm -f "$fault_file"
  step "GLPK works again: the waiting job is placed"
  wait_until 30 "job $third running" is_running "$third"
  kill -0 "$(cat run/slurmctld.bgpid)" || fail "slurmctld died"
  scancel "$third"
  wait_until 30 "job $third gone" sh -c "! squeue -h -t R -o %i | grep -qx $third"
done
echo "PASS"
