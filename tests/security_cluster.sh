#!/bin/sh
# Forged and misused report credentials against sched/pollux inside a real slurmctld: every
# case must get the documented status, and the table of cases is printed.
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
scontrol ping | grep -q UP || fail "slurmctld is not answering"
[ "$failures" -eq 0 ] || fail "$failures case(s) got the wrong status"
echo "PASS"
