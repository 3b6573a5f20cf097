#!/bin/sh
# sched_pollux.so inside a real slurmctld under valgrind memcheck: an adaptive job under
# pollux-agent reports and is grown through a requeue, a rigid job runs beside it, status
# and metrics are read, slurmctld reconfigures, then stops cleanly so the plugin's fini runs
# and valgrind checks for leaks. Fails on any memcheck error or definite leak with a frame in
# the plugin (sched_pollux.so, the pollux service or core). Slurm's own findings are counted
# and printed, not judged: they are not this project's code.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/cluster/lib.sh"
setup_test_cluster valgrind
command -v valgrind > /dev/null || fail "valgrind is not installed (scripts/install-deps)"
report="$run/valgrind.log"

step "start slurmctld with sched/pollux under valgrind memcheck"
export SLURMCTLD_PATIENCE=180
SLURMCTLD_WRAPPER="valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite \
--errors-for-leak-kinds=definite --num-callers=40 --keep-debuginfo=yes --log-file=$report" \
  "$here/cluster/cluster.sh" start "$run" sched/pollux \
  "pollux_interval=2,pollux_rest_port=$port,pollux_min_change_interval=0,pollux_speed_a100=3" \
  "$plugins" 'JobSubmitPlugins=pollux\nMinJobAge=600'
. "$run/env"
cd "$run"
write_train_script

step "an adaptive job reports and is grown; a rigid job runs beside it"
job=$(submit_adaptive cifar10 20 0.4)
rigid=$(sbatch --parsable --gres=gpu:v100:2 -o /dev/null --wrap "sleep 20")
wait_until 120 "job $job reported" grep -q "report accepted" "job-$job.out"
requeued() { grep -q "JobId=$job requeue: resize" log/slurmctld.log; }
wait_until 180 "job $job requeued to grow" requeued

step "status, metrics and a reconfigure"
"$build/src/cli/scontrol" show pollux > /dev/null || fail "scontrol show pollux failed"
"$build/src/cli/scontrol" show pollux "job=$job" --json > /dev/null || fail "show pollux job=$job failed"
curl -sf "$api/metrics" > /dev/null || fail "GET /metrics failed"
scontrol reconfigure
wait_until 240 "jobs $job and $rigid complete" all_finished "$job" "$rigid"

step "stop slurmctld cleanly; valgrind's verdict"
"$here/cluster/cluster.sh" stop-ctld "$run"
grep -q "ERROR SUMMARY" "$report" || fail "valgrind wrote no summary to $report"
python3 - "$report" <<'PY'
import re, sys

text = open(sys.argv[1]).read()
# One record per error or leak: valgrind separates them with an empty "==PID== " line.
records = [r for r in re.split(r"\n==\d+== *\n", text) if r.strip()]
ours = re.compile(r"sched_pollux\.(so|c)|pollux::|pollux_service|src/plugins/sched/pollux|src/common/")
kinds = re.compile(r"Invalid (read|write|free)|uninitialised|Mismatched free|overlap|"
                   r"definitely lost in|Syscall param|Argument .* of function")
findings = [r for r in records if kinds.search(r)]
plugin = [r for r in findings if ours.search(r)]
summary = re.findall(r"ERROR SUMMARY: (\d+) errors", text)
lost = re.findall(r"definitely lost: ([\d,]+) bytes in ([\d,]+) blocks", text)
print(f"   valgrind: ERROR SUMMARY {summary[-1] if summary else '?'} error(s) in slurmctld; "
      f"definitely lost {lost[-1][0] + ' bytes in ' + lost[-1][1] + ' blocks' if lost else '0 bytes'}")
print(f"   records: {len(findings)} in all, {len(plugin)} with a frame in sched/pollux")
for record in findings:  # what and where, in brief
    lines = [l.split("== ", 1)[-1].strip() for l in record.splitlines() if l.strip()]
    print("     " + " | ".join(lines[:4])[:300])
for record in plugin:
    print(record[:4000], file=sys.stderr)
sys.exit(1 if plugin else 0)
PY
echo "PASS"
