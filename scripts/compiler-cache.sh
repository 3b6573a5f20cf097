# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by scripts/build and scripts/test: compile through ccache where it is installed and
# the caller chose no compiler, so that CI's builds of the same sources (./build, the ASan
# build, one build per Slurm release) reuse their objects from run to run. The cache lives
# outside the tree, in /var/cache/pollux-ccache for root (as the Slurm builds do), else in
# ccache's own default.
if command -v ccache > /dev/null && [ -z "${CC:-}" ] && [ -z "${CXX:-}" ]; then
  export CC="ccache gcc" CXX="ccache g++"
  if [ -z "${CCACHE_DIR:-}" ] && [ "$(id -u)" -eq 0 ]; then export CCACHE_DIR=/var/cache/pollux-ccache; fi
  # Clones in different directories share hits (the working directory only shows in debug info).
  export CCACHE_BASEDIR="$top" CCACHE_NOHASHDIR=1
fi
