# SPDX-License-Identifier: GPL-2.0-or-later
"""pollux.store: the job's control store (pollux.elastic) in a process of its own, so that it
outlives any worker, rank 0 included.

    python3 -m pollux.store PORT

hosts a TCPStore on every address of this host at PORT until SIGTERM or SIGINT, or until its
parent exits. Workers started with POLLUX_STORE_HOSTED=1 then all open it as clients
(MASTER_ADDR:MASTER_PORT), and any of them may leave or fail without taking the store along.
Prints "pollux.store: listening on PORT" once it accepts connections; exits 2 on a bad
argument and 1 when the port cannot be bound.
"""

import ctypes
import datetime
import signal
import sys
from typing import List

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """SIGTERM when the process that started this one exits (Linux), so that a launcher killed
    outright leaves no store behind."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


def main(argv: List[str]) -> int:
    if len(argv) != 1 or not argv[0].isdigit() or not 0 < int(argv[0]) < 65536:
        print("usage: python3 -m pollux.store PORT (1-65535)", file=sys.stderr)
        return 2
    port = int(argv[0])
    stop_signals = {signal.SIGTERM, signal.SIGINT}
    signal.pthread_sigmask(signal.SIG_BLOCK, stop_signals)  # taken by sigwait below
    _die_with_parent()
    import torch.distributed as dist
    try:
        store = dist.TCPStore("0.0.0.0", port, None, True, datetime.timedelta(seconds=60),
                              wait_for_workers=False)
    except RuntimeError as error:
        print(f"pollux.store: cannot listen on port {port}: {error}", file=sys.stderr)
        return 1
    print(f"pollux.store: listening on port {port}", flush=True)
    signal.sigwait(stop_signals)
    del store
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
