#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The Debian packages (debian/) end to end: built with dpkg-buildpackage from a copy of this
# tree (never in the tree), checked with lintian, installed with dpkg; a real slurmctld
# (tests/cluster/cluster.sh, PluginDir Debian's /usr/lib/MULTIARCH/slurm-wlm) loads the
# installed sched/pollux and job_submit/pollux and places an adaptive job whose installed
# pollux-agent and pollux-emulate report to it; the installed tools and Python modules run;
# then the packages are purged and nothing of them may be left.
#
#   tests/debian_package.sh        (as root, on Debian 12 after scripts/install-deps)
#
# scripts/test runs it after `make check`. It is not one of tests/Makefile.am's TESTS: it
# needs the git checkout (not a dist tarball or a build dir), installs into the system, and
# its build would compete with the cluster tests that make check runs side by side.
# POLLUX_DEB_KEEP=DIR copies the built .deb files to DIR.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
. "$here/cluster/lib.sh"
packages="slurm-pollux pollux-agent pollux-tools"
fail() { echo "FAIL: tests/debian_package.sh: $*" >&2; exit 1; }
now() { date +%s; }

[ "$(id -u)" -eq 0 ] || fail "must run as root (it installs and purges packages with dpkg)"
for tool in dpkg-buildpackage dh lintian git; do
  command -v "$tool" > /dev/null || fail "$tool not found: run scripts/install-deps"
done
git -C "$top" rev-parse --git-dir > /dev/null 2>&1 ||
  fail "$top is not a git checkout: the packages are built from its tracked and untracked files"
for pkg in $packages; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2> /dev/null || true)
  case $status in
    ''|not-installed) ;;
    *) fail "$pkg is already on this machine ($status); the test installs and purges its own" \
         "build: remove it first (dpkg --purge $pkg)" ;;
  esac
done

work=$(mktemp -d /tmp/pollux-deb-test-XXXXXX)
# The packages build in a fixed directory, through ccache where it is installed
# (scripts/compiler-cache.sh): Debian's compiler flags name the build directory
# (-ffile-prefix-map), so a new one each run would never find the last run's objects. Hence
# one run at a time.
build_root=/var/tmp/pollux-deb-build
chmod 755 "$work"  # munged (user munge) must reach the cluster's socket under it
run=$work/cluster
installed=no
cleanup() {
  status=$?
  if [ -f "$run/run/pids" ]; then
    if [ "$status" -ne 0 ] && [ -f "$run/log/slurmctld.log" ]; then
      echo "--- slurmctld log (pollux, errors) ---" >&2
      grep -E "pollux|error" "$run/log/slurmctld.log" | tail -n 40 >&2 || true
      for out in "$run"/job-*.out; do [ -e "$out" ] && { echo "--- $out" >&2; tail -n 20 "$out" >&2; }; done
    fi
    "$here/cluster/cluster.sh" stop "$run" || { echo "FAIL: processes of $run survived its stop" >&2; status=1; }
  fi
  if [ "$installed" = yes ]; then
    # shellcheck disable=SC2086
    dpkg --purge $packages > "$work/purge.log" 2>&1 || { cat "$work/purge.log" >&2; status=1; }
  fi
  rm -rf "$work" "$build_root"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
started=$(now)

step "copy the tree (tracked and untracked files, as git sees them; no build output)"
rm -rf "$build_root"
mkdir -p "$build_root/src"
git -C "$top" ls-files -z --cached --others --exclude-standard |
  (cd "$top" && tar --null --files-from=- --ignore-failed-read -cf - 2> /dev/null) |
  tar -C "$build_root/src" -xf -
[ -f "$build_root/src/debian/control" ] || fail "the copy has no debian/control"
version=$(cd "$build_root/src" && dpkg-parsechangelog -S Version)
upstream=$(sed -n 's/^AC_INIT(\[pollux-slurm\], \[\([^]]*\)\].*/\1/p' "$top/configure.ac")
[ "${version%%-*}" = "$upstream" ] ||
  fail "debian/changelog is at $version but configure.ac's AC_INIT at $upstream: add a debian/changelog entry"

step "dpkg-buildpackage -us -uc -b (nocheck: the tests run from the tree)"
t=$(now)
if ! (cd "$build_root/src" && top=$build_root/src && . "$top/scripts/compiler-cache.sh" &&
      DEB_BUILD_OPTIONS="nocheck noddebs parallel=$(nproc)" dpkg-buildpackage -us -uc -b) \
      > "$work/build.log" 2>&1; then
  tail -n 60 "$work/build.log" >&2
  fail "dpkg-buildpackage failed (log above)"
fi
build_s=$(($(now) - t))
# The packages, .changes and .buildinfo; the binaries must find nothing of the tree (the
# tools fall back to the source tree's traces when the installed ones are missing).
find "$build_root" -maxdepth 1 -type f -exec mv {} "$work"/ \;
rm -rf "$build_root"
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
plugindir=/usr/lib/$multiarch/slurm-wlm
debs=
for pkg in $packages; do
  deb="$work/${pkg}_${version}_$arch.deb"
  [ -f "$deb" ] || fail "dpkg-buildpackage made no $(basename "$deb")"
  debs="$debs $deb"
  echo "   $(basename "$deb"): $(du -k "$deb" | cut -f1) KiB, installed $(dpkg-deb -f "$deb" Installed-Size) KiB"
done
# shellcheck disable=SC2086
[ -z "${POLLUX_DEB_KEEP:-}" ] || { mkdir -p "$POLLUX_DEB_KEEP"; cp $debs "$POLLUX_DEB_KEEP"/; }
echo "   built in ${build_s}s"

step "lintian: no errors or warnings"
t=$(now)
# spelling-error-in-binary reads the byte before a string in .rodata as part of a word, so its
# false positives move with every build; it is not checked.
lintian --fail-on error,warning --display-info --suppress-tags spelling-error-in-binary \
  "$work/pollux-slurm_${version}_$arch.changes" \
  > "$work/lintian.log" 2>&1 || { cat "$work/lintian.log" >&2; fail "lintian found errors or warnings"; }
grep -v "^running with root privileges" "$work/lintian.log" | sed 's/^/   /' || true
echo "   lintian in $(($(now) - t))s"

step "slurm-pollux depends on exactly the Slurm release it was built against"
slurm=$(dpkg-query -W -f='${Version}' slurmctld)
slurm_upstream=${slurm%-*}
depends=$(dpkg-deb -f "$work/slurm-pollux_${version}_$arch.deb" Depends)
echo "   Depends: $depends"
lower=$(echo "$depends" | sed -n 's/.*slurmctld (>= \([^)]*\)).*/\1/p')
upper=$(echo "$depends" | sed -n 's/.*slurmctld (<< \([^)]*\)).*/\1/p')
[ "$lower" = "$slurm_upstream" ] && [ -n "$upper" ] ||
  fail "slurm-pollux's Depends does not pin slurmctld $slurm_upstream: $depends"
satisfies() { dpkg --compare-versions "$1" ge "$lower" && dpkg --compare-versions "$1" lt "$upper"; }
major_minor=${slurm_upstream%.*}
micro=${slurm_upstream##*.}
for ok in "$slurm" "$slurm_upstream-99" "$slurm_upstream-4+deb12u9"; do
  satisfies "$ok" || fail "the Depends refuses slurmctld $ok, the release it was built for"
done
others="$major_minor.$((micro + 1))-1 $major_minor.$micro~rc1-1 1:$slurm 21.08.8-1 23.02.7-1 24.11.1-1"
[ "$micro" -eq 0 ] || others="$others $major_minor.$((micro - 1))-1"
for other in $others; do
  if satisfies "$other"; then fail "the Depends accepts slurmctld $other, another release"; fi
done

step "dpkg -i the three packages"
installed=yes
# shellcheck disable=SC2086
dpkg -i $debs > "$work/install.log" 2>&1 || { cat "$work/install.log" >&2; fail "dpkg -i failed"; }
for pkg in $packages; do
  [ "$(dpkg-query -W -f='${db:Status-Status}' "$pkg")" = installed ] || fail "$pkg is not installed"
  dpkg -L "$pkg" >> "$work/files"
done
for file in "$plugindir/sched_pollux.so" "$plugindir/job_submit_pollux.so" \
    /usr/share/man/man8/sched_pollux.8.gz /usr/share/man/man5/pollux.conf.5.gz \
    /usr/share/doc/slurm-pollux/examples/slurm.conf.example \
    /usr/share/doc/slurm-pollux/examples/pollux.conf.example \
    /usr/bin/pollux-agent /usr/libexec/pollux-slurm/scontrol /usr/include/pollux/pollux_train.h \
    /usr/lib/python3/dist-packages/pollux/__init__.py /usr/lib/python3/dist-packages/pollux/parallel.py \
    /usr/lib/python3/dist-packages/pollux/store.py /usr/share/man/man7/pollux-python.7.gz \
    /usr/share/doc/pollux-agent/examples/train_ddp.sbatch /usr/share/man/man1/pollux-agent.1.gz \
    /usr/bin/pollux-sim /usr/bin/pollux-policy /usr/bin/pollux-replay /usr/bin/pollux-fit \
    /usr/bin/pollux-emulate /usr/share/pollux-slurm/data/adaptdl/traces/cifar10/placements.csv \
    /usr/share/man/man1/pollux-sim.1.gz; do
  grep -qx "$file" "$work/files" || fail "no package lists $file (dpkg -L)"
  [ -e "$file" ] || fail "$file is listed but not installed"
done
! grep -E '^/(etc|usr/local)(/|$)' "$work/files" || fail "the packages install under /etc or /usr/local"
! grep -E '\.la$|/__pycache__/' "$work/files" || fail "the packages ship libtool archives or byte code"

step "the plugins: every library found, Slurm's plugin symbols defined"
for plugin in sched_pollux job_submit_pollux; do
  ! ldd "$plugindir/$plugin.so" | grep "not found" || fail "$plugin.so: a library is missing"
  for symbol in plugin_name plugin_type plugin_version; do
    nm -D --defined-only "$plugindir/$plugin.so" | grep -q " $symbol\$" || fail "$plugin.so lacks $symbol"
  done
done

step "the tools and Python modules run from their installed places"
pollux-sim --workload /usr/share/pollux-slurm/data/adaptdl/workloads/workload-1.csv --policy fifo \
  --json > "$work/sim.json" || fail "pollux-sim on an installed workload"
python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["jobs"] == 160' "$work/sim.json" ||
  fail "pollux-sim's summary: $(cat "$work/sim.json")"
(cd / && /usr/bin/python3 -c 'import importlib.metadata, pollux, pollux.parallel, pollux.data
assert pollux.__file__.startswith("/usr/lib/python3/dist-packages/pollux/"), pollux.__file__
assert importlib.metadata.version("pollux") == pollux.__version__ != "0+unknown", pollux.__version__') ||
  fail "the installed Python package does not import"

step "a cluster whose slurmctld loads the installed plugins places an adaptive job"
mkdir "$run"
port=$(free_port)
"$here/cluster/cluster.sh" start "$run" sched/pollux \
  "pollux_interval=2,pollux_rest_port=$port,pollux_min_change_interval=0" "$plugindir" \
  "JobSubmitPlugins=pollux"
. "$run/env"
grep -q "sched/pollux: REST listening on http://127.0.0.1:$port" "$run/log/slurmctld.log" ||
  fail "the installed sched/pollux did not start its REST endpoint"
grep -q "^PluginDir=$plugindir\$" "$run/etc/slurm.conf" || fail "the cluster's PluginDir is not $plugindir"
cd "$run"
printf '#!/bin/sh\nsleep 600\n' > job.sh
if sbatch --comment=adaptive:min_gpus=zero -o /dev/null job.sh 2> sbatch.err; then
  fail "sbatch accepted a malformed adaptive comment: job_submit/pollux is not loaded"
fi
grep -q "min_gpus needs a number" sbatch.err || fail "sbatch message: $(cat sbatch.err)"
cat > train.sh <<EOF
#!/bin/sh
srun /usr/bin/pollux-agent --nproc-per-node 1 --report-interval 1 -v -- \\
  /usr/bin/pollux-emulate --app cifar10 --time-scale 20 --target-fraction 0.5 --startup 1 \\
  --checkpoint "$run/ckpt-\$SLURM_JOB_ID"
EOF
job=$(sbatch --parsable --comment=adaptive:max_gpus=4 -o "$run/job-%j.out" train.sh)
wait_until 30 "job $job placed by sched/pollux" grep -q "sched/pollux: JobId=$job start:" log/slurmctld.log
wait_until 30 "job $job running" is_running "$job"
wait_until 60 "a report of job $job's installed agent accepted" grep -q "report accepted" "job-$job.out"
shows_reported() {
  /usr/libexec/pollux-slurm/scontrol show pollux "job=$job" --json > show.json &&
    python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); assert j["adaptive"] and j["reported"], j' show.json
}
wait_until 20 "the installed scontrol wrapper showing job $job reported" shows_reported
/usr/libexec/pollux-slurm/scontrol show job "$job" | grep -q "JobId=$job" ||
  fail "the installed scontrol wrapper does not pass other commands to Slurm's scontrol"
scancel "$job"
cd /
"$here/cluster/cluster.sh" stop "$run"
rm -f "$run/run/pids"

step "dpkg --purge leaves nothing behind"
# shellcheck disable=SC2086
dpkg --purge $packages > "$work/purge.log" 2>&1 || { cat "$work/purge.log" >&2; fail "dpkg --purge failed"; }
installed=no
for pkg in $packages; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2> /dev/null || true)
  case $status in ''|not-installed) ;; *) fail "$pkg is still $status after its purge" ;; esac
done
while read -r file; do
  [ -d "$file" ] && continue  # directories other packages share stay
  [ ! -e "$file" ] && [ ! -L "$file" ] || fail "$file is left after the purge"
done < "$work/files"
for dir in /usr/libexec/pollux-slurm /usr/share/pollux-slurm /usr/include/pollux \
    /usr/share/doc/slurm-pollux /usr/share/doc/pollux-agent /usr/share/doc/pollux-tools; do
  [ ! -e "$dir" ] || fail "$dir is left after the purge"
done
! ls /usr/lib/python3/dist-packages/__pycache__/pollux_* 2> /dev/null ||
  fail "the modules' byte code is left after the purge"
echo "debian packages: built, lintian-clean, installed, loaded by slurmctld, purged" \
  "(build ${build_s}s, all $(($(now) - started))s)"
