#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Forged and misused credentials against sched/pollux inside a real slurmctld: reports and
# status reads. Every case must get the documented status (and a status read no more than the
# caller may see); the table of cases is printed.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/cluster/lib.sh"
setup_test_cluster security

"$here/cluster/cluster.sh" start "$run" sched/pollux "pollux_interval=2,pollux_rest_port=$port" \
  "$plugins" "JobSubmitPlugins=pollux"
. "$run/env"
cd "$run"
printf '#!/bin/sh\nsleep 300\n' > job.sh
mine=$(sbatch --parsable --comment=adaptive -o /dev/null job.sh)
other=$(sbatch --parsable --comment=adaptive -o /dev/null job.sh)
wait_until 30 "job $mine running" is_running "$mine"
sed "s/@JOB@/$mine/" "$here/data/report-scales.json.in" > report.json
sed "s/@JOB@/$mine/; s/\"epochs\": 0/\"epochs\": 1/" "$here/data/report-scales.json.in" > other-body.json
sha=$(sha256sum report.json | cut -d' ' -f1)

credential() {  # credential [munge options...] PAYLOAD
  munge --socket="$MUNGE_SOCKET" "$@"
}
post() {  # post JOB BODY CREDENTIAL: the HTTP status
  curl -s -o /dev/null -w '%{http_code}' -H "X-Munge-Cred: $3" --data-binary @"$2" \
    "$api/v1/jobs/$1/report"
}

failures=0
check() {  # check CASE EXPECTED GOT
  verdict=ok
  [ "$2" = "$3" ] || { verdict="FAIL (expected $2)"; failures=$((failures + 1)); }
  printf '  %-58s %s  %s\n' "$1" "$3" "$verdict"
}

echo "== report credentials, status each gets (sched/pollux in slurmctld, real munged)"
good=$(credential -s "pollux-report/1 $mine $sha")
check "valid credential of the job's owner" 200 "$(post "$mine" report.json "$good")"
check "the same credential replayed" 401 "$(post "$mine" report.json "$good")"
check "forged credential (not from munged)" 401 \
  "$(post "$mine" report.json "MUNGE:AwQDAACm9Pq0forgedforgedforgedforgedforged:")"
check "no credential" 401 \
  "$(curl -s -o /dev/null -w '%{http_code}' --data-binary @report.json "$api/v1/jobs/$mine/report")"
expired=$(credential -t 1 -s "pollux-report/1 $mine $sha")
sleep 3
check "expired credential (ttl 1 s, used after 3 s)" 401 "$(post "$mine" report.json "$expired")"
check "credential for another job's URL" 401 \
  "$(post "$other" report.json "$(credential -s "pollux-report/1 $mine $sha")")"
check "credential over another body" 401 \
  "$(post "$mine" other-body.json "$(credential -s "pollux-report/1 $mine $sha")")"
check "payload without the pollux-report/1 prefix" 401 \
  "$(post "$mine" report.json "$(credential -s "$mine $sha")")"
check "another user's valid credential (user nobody)" 403 \
  "$(post "$mine" report.json "$(runuser -u nobody -- munge --socket="$MUNGE_SOCKET" -s "pollux-report/1 $mine $sha")")"
check "valid credential, job unknown" 404 \
  "$(post 999999 report.json "$(credential -s "pollux-report/1 999999 $sha")")"
head -c 70000 /dev/zero | tr '\0' ' ' > big.json
check "70 KB body" 413 "$(post "$mine" big.json "$(credential -s "pollux-report/1 $mine x")")"

read_status() {  # read_status PATH CREDENTIAL: the HTTP status; the body goes to read.json
  curl -s -o read.json -w '%{http_code}' -H "X-Munge-Cred: $2" "$api$1"
}
status_credential() {  # status_credential PATH [USER]
  runuser -u "${2:-root}" -- munge --socket="$MUNGE_SOCKET" -s "pollux-status/1 $1"
}
shows_details() { grep -q '"progress"' read.json && echo details || echo redacted; }

echo "== status reads (GET /v1/status, /v1/jobs/ID), status each gets"
check "no credential" 401 "$(curl -s -o /dev/null -w '%{http_code}' "$api/v1/status")"
check "credential for another path" 401 \
  "$(read_status "/v1/jobs/$mine" "$(status_credential /v1/status)")"
check "a report credential" 401 \
  "$(read_status "/v1/jobs/$mine" "$(credential -s "pollux-report/1 $mine $sha")")"
check "job's owner (root)" 200 "$(read_status "/v1/jobs/$mine" "$(status_credential "/v1/jobs/$mine")")"
check "  ... sees the job's model and progress" details "$(shows_details)"
check "another user (nobody)" 200 \
  "$(read_status "/v1/jobs/$mine" "$(status_credential "/v1/jobs/$mine" nobody)")"
check "  ... sees only what squeue and scontrol show" redacted "$(shows_details)"
check "another user, whole status" 200 \
  "$(read_status /v1/status "$(status_credential /v1/status nobody)")"
check "  ... sees no job's model or progress" redacted "$(shows_details)"
read_as_nobody() { read_status "/v1/jobs/$mine" "$(status_credential "/v1/jobs/$mine" nobody)"; }
echo "PrivateData=jobs" >> etc/slurm.conf
reconfigure_slurmctld
for _ in $(seq 20); do [ "$(read_as_nobody)" = 404 ] && break; sleep 1; done
check "another user under PrivateData=jobs" 404 "$(read_as_nobody)"
check "job's owner under PrivateData=jobs" 200 \
  "$(read_status "/v1/jobs/$mine" "$(status_credential "/v1/jobs/$mine")")"

scontrol ping | grep -q UP || fail "slurmctld is not answering"
[ "$failures" -eq 0 ] || fail "$failures case(s) got the wrong status"
echo "PASS"
