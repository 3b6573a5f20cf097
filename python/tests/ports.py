# SPDX-License-Identifier: GPL-2.0-or-later
"""A port for a test's gloo rendezvous (MASTER_PORT)."""

import random
import socket

# Below Linux's ephemeral ports (32768-60999): a port picked by binding port 0 can be taken by
# any outgoing connection before the rendezvous binds it, which under parallel tests
# happened (the rank 0 store failed to bind, and the test waited for it). Apart from the
# cluster tests' ports (tests/cluster/cluster.sh, 26000-32767), which run beside these in CI.
FIRST, LAST = 20000, 26000


def rendezvous_port():
    """A port in [FIRST, LAST) that nothing listens on now."""
    for _ in range(200):
        port = random.randrange(FIRST, LAST)
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in [{FIRST}, {LAST})")
