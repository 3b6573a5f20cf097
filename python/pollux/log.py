# SPDX-License-Identifier: GPL-2.0-or-later
"""The pollux package's messages: one line on stderr in a single write.

A job's processes (srun, pollux-agent, every rank) share its output file; print() writes a
message and its newline separately, so another process's line could land in between.
"""
import sys


def log(message: str) -> None:
    """Writes "pollux: MESSAGE" and its newline at once, then flushes."""
    sys.stderr.write(f"pollux: {message}\n")
    sys.stderr.flush()
