# SPDX-License-Identifier: GPL-2.0-or-later
"""A private single-machine Slurm cluster for the benchmark scripts (tests/cluster/cluster.sh)."""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
CLUSTER = os.path.join(TOP, "tests/cluster/cluster.sh")
# Slurm's own plugins of SLURM_PREFIX (default /usr, Debian's Slurm).
SLURM_PLUGINS = subprocess.run([CLUSTER, "plugindir"], capture_output=True, text=True,
                               check=True).stdout.strip()


def pollux_plugin_dir(build):
    """PluginDir with the built sched/pollux and job_submit/pollux ahead of Slurm's own."""
    plugins = os.path.join(build, "src/plugins")
    return f"{plugins}/sched/pollux/.libs:{plugins}/job_submit/pollux/.libs:{SLURM_PLUGINS}"


class Cluster:
    """A cluster.sh cluster in a fresh temp dir; stop() stops it by the PIDs it recorded."""

    def __init__(self, scheduler, params, plugin_dir, extra, name="bench"):
        self.name = name
        self.run = tempfile.mkdtemp(prefix=f"pollux-{name}-")
        self.started = False
        out = subprocess.run([CLUSTER, "start", self.run, scheduler, params, plugin_dir, extra],
                             capture_output=True, text=True)
        self.started = True  # even a failed start may have left processes to stop
        if out.returncode != 0:
            self.stop(keep=True)
            raise RuntimeError(f"cluster.sh start failed ({self.run}):\n{out.stdout}{out.stderr}")
        prefix = os.environ.get("SLURM_PREFIX", "/usr")
        self.env = dict(os.environ, SLURM_CONF=os.path.join(self.run, "etc/slurm.conf"),
                        MUNGE_SOCKET=os.path.join(self.run, "munge/munge.socket"),
                        PATH=f"{prefix}/sbin:{prefix}/bin:{os.environ['PATH']}")
        with open(os.path.join(self.run, "job.sh"), "w") as f:
            f.write("#!/bin/sh\nsleep 600\n")

    def stop(self, keep=False):
        if self.started:
            # sched/pollux starts adaptive jobs despite --begin; slurmstepd outlives slurmd, so
            # cancel the jobs first, stop the daemons by PID, then any slurmstepd left by this
            # cluster (found by its SLURM_CONF) with its children.
            env = getattr(self, "env", None)
            if env:
                subprocess.run(["scancel", f"--user={os.geteuid()}"],
                               env=env, check=False, capture_output=True)
                for _ in range(50):
                    q = subprocess.run(["squeue", "-h", "-o", "%i"], env=env,
                                       capture_output=True, text=True)
                    if q.returncode != 0 or not q.stdout.strip():
                        break
                    time.sleep(0.2)
            subprocess.run([CLUSTER, "stop", self.run], check=False)
            conf = f"SLURM_CONF={self.run}/etc/slurm.conf"
            steps = subprocess.run(["pgrep", "-x", "slurmstepd"], capture_output=True, text=True)
            for pid in steps.stdout.split():
                try:
                    with open(f"/proc/{pid}/environ", "rb") as f:
                        if conf.encode() not in f.read().split(b"\0"):
                            continue
                    kids = subprocess.run(["pgrep", "-P", pid], capture_output=True, text=True)
                    for p in kids.stdout.split() + [pid]:
                        os.kill(int(p), signal.SIGKILL)
                except (OSError, ValueError):
                    pass
            self.started = False
        if keep:
            print(f"{self.name}: logs kept in {self.run}", file=sys.stderr)
        else:
            shutil.rmtree(self.run, ignore_errors=True)

    def submit(self, adaptive):
        cmd = ["sbatch", "--parsable", "--begin=now+1hour", "-o", "/dev/null", "-J", "bench"]
        if adaptive:
            cmd.append("--comment=adaptive")
        cmd.append(os.path.join(self.run, "job.sh"))
        t0 = time.monotonic_ns()
        out = subprocess.run(cmd, env=self.env, capture_output=True, text=True)
        elapsed_ms = (time.monotonic_ns() - t0) / 1e6
        if out.returncode != 0:
            raise RuntimeError(f"sbatch failed: {out.stderr.strip()}")
        return elapsed_ms
