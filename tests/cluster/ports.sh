# SPDX-License-Identifier: GPL-2.0-or-later
# free_port_block LOW HIGH COUNT: prints a base port P, a multiple of COUNT in LOW..HIGH, with
# P..P+COUNT-1 free on 127.0.0.1 (empty if none was found). Test clusters take their ports
# below Linux's ephemeral ones (32768-60999), which any outgoing connection may take between
# this probe and the daemons' bind; each user of this takes its own range.
free_port_block() {
  python3 - "$1" "$2" "$3" <<'PY'
import random, socket, sys
low, high, count = (int(arg) for arg in sys.argv[1:4])
for _ in range(200):
    base = random.randrange(low, high - count, count)
    socks = []
    try:
        for p in range(base, base + count):
            s = socket.socket(); s.bind(("127.0.0.1", p)); socks.append(s)
        print(base); break
    except OSError:
        pass
    finally:
        for s in socks: s.close()
PY
}
