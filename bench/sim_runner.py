# SPDX-License-Identifier: GPL-2.0-or-later
"""Running pollux-sim from the benchmark scripts: finding the build, one run, many at a time."""
import concurrent.futures
import csv
import json
import os
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ADAPTDL_WORKLOADS = [os.path.join(TOP, "data/adaptdl/workloads/workload-%d.csv" % i)
                     for i in range(1, 9)]


def find_sim(explicit, caller):
    """Path of a built pollux-sim: in --build DIR, else the first of build, build-quality, build-sim."""
    candidates = [explicit] if explicit else ["build", "build-quality", "build-sim"]
    for build in candidates:
        path = os.path.join(TOP, build) if not os.path.isabs(build) else build
        sim = os.path.join(path, "src/sim/pollux-sim")
        if os.access(sim, os.X_OK):
            return sim
    sys.exit("%s: no built src/sim/pollux-sim (use --build DIR)" % caller)


def run(sim, args):
    """pollux-sim --json ARGS: its summary, or {"error": last stderr line}; the summary's
    "jobs" holds each job's row of --jobs (name: {column: value}, numbers as floats)."""
    with tempfile.TemporaryDirectory() as folder:
        if "--jobs" in args:  # the caller keeps the rows
            jobs_csv = args[args.index("--jobs") + 1]
        else:
            jobs_csv = os.path.join(folder, "jobs.csv")
            args = ["--jobs", jobs_csv] + args
        out = subprocess.run([sim, "--json"] + args, capture_output=True, text=True)
        if out.returncode != 0:
            message = (out.stderr.strip().splitlines() or ["exit %d" % out.returncode])[-1]
            return {"error": message}
        summary = json.loads(out.stdout)
        with open(jobs_csv, newline="") as rows:
            summary["jobs"] = {row["name"]: {key: float(value) for key, value in row.items()
                                             if key not in ("name", "application")}
                               for row in csv.DictReader(rows)}
    return summary


def quantile(values, q):
    """The q-quantile of `values`, interpolated as pollux-sim's summary computes it."""
    values = sorted(values)
    position = q * (len(values) - 1)
    lo = int(position)
    hi = min(lo + 1, len(values) - 1)
    return values[lo] + (position - lo) * (values[hi] - values[lo])


def run_all(sim, runs, parallel):
    """runs: {key: args}; returns {key: summary}, `parallel` simulations at a time."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
        futures = {pool.submit(run, sim, args): key for key, args in runs.items()}
        return {futures[f]: f.result() for f in concurrent.futures.as_completed(futures)}
