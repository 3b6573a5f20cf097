# SPDX-License-Identifier: GPL-2.0-or-later
"""pollux.elastic: live changes of a job's world size, without restarting the workers that
stay (pollux-python(7), "Live changes of the world size").

One control store per job: a TCPStore on MASTER_ADDR:MASTER_PORT for the job's life, hosted by
rank 0, or, with POLLUX_STORE_HOSTED=1, by a process of its own (pollux.store, started by the
job's launcher) that every rank opens as a client. Each size of the job is a generation g whose
process group is initialised on PrefixStore("pollux/g<g>/pg/") of that store. A change is
decided by rank 0 and carried, as a generation number, in pollux.AdaptiveDataParallel's
agreeing all-reduce (no extra collective); its details (the old ranks that stay, in their
new order, and the joiners) are in the store under pollux/plan/<g>. At the agreeing step
every rank drops its DDP wrapper and destroys the group; the leavers exit 0; the rest, and the
joiners admitted to g, meet at pollux/g<g>/arrived (a rendezvous with a timeout), initialise
the group at the new size and rebuild DDP (whose constructor broadcasts the parameters from
rank 0); when there are joiners, rank 0 broadcasts the optimizer, LR scheduler, GradScaler,
sampler position, noise average and progress in memory. No checkpoint file is read or written.

A worker that dies is seen by its peers in their next collective: they leave the step,
report to the store, one of them (rank 0, or with the store hosted apart the first to report)
writes the plan that re-forms the group from the survivors (when at least min_replicas are
left), and the new rank 0's state is broadcast to all. Before it writes the plan, the leader
calls the roll: every live worker answers it from a thread of its own, whatever its training
loop is doing, so the leader waits for each live worker to report, however late (a loaded
host), and leaves out those that have not answered once no report came for settle_s (2 s,
and twice a step). With the store hosted apart, rank 0 too may leave or die: the first rank that
stays becomes rank 0.

Joins are authenticated: a joiner (POLLUX_JOIN=1) writes HMAC-SHA256(POLLUX_JOIN_TOKEN,
"pollux-join:" + its random id) to the store, and rank 0 admits it only if it matches the
job's own token. The token never travels over the network. This keeps out processes that do
not have the token (another job's or user's worker pointed at the wrong port, a stray
restart); it does not make the TCPStore or gloo's endpoints themselves authenticated (torch
1.13 cannot): a process on the network that speaks their protocol can still read or change
the store's keys or disturb a collective. Keep the ports inside the cluster's network.

When a change cannot complete (a joiner not ready within join_timeout_s, a rendezvous or a
broadcast error, a rank dying during the change), every rank that is left stops as for a
checkpoint request (model.stop_requested): rank 0 writes the checkpoint, without a
collective, and the script exits 143 as at a requeue (model.resize_failed says why).

Environment: POLLUX_ELASTIC=1 turns it on (pollux-agent sets it for the pollux package's
scripts; pollux.init_process_group(elastic=True) too); POLLUX_JOIN=1 makes a process a
joiner; POLLUX_JOIN_TOKEN the job's token; POLLUX_JOIN_TIMEOUT (seconds, default 60),
POLLUX_RESIZE_TIMEOUT (default 30), POLLUX_MIN_REPLICAS (default 1) and POLLUX_STORE_HOSTED=1
(the store is hosted apart, see above).
"""

from __future__ import annotations

import atexit
import datetime
import gc
import hashlib
import hmac
import itertools
import json
import math
import os
import socket
import threading
import time
import uuid
import weakref
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch
import torch.distributed as dist

from pollux.log import log

__all__ = ["ElasticGroup", "ResizeError", "current", "start", "broadcast_state"]

PREFIX = "pollux/"
# Tests only: a point at which this process fails on purpose ("rendezvous", "die",
# "die-in-broadcast"), or "stalled": after a failed collective, its report and its roll-call
# answer come 1 s late, as from a main thread that holds the interpreter while it tears down
# the group on a loaded host.
_FAULT: Optional[str] = None


class ResizeError(RuntimeError):
    """A live change that could not complete."""


def _float_env(name: str, default: float) -> float:
    text = os.environ.get(name, "")
    try:
        value = float(text) if text else default
    except ValueError:
        raise ValueError(f"{name}={text!r} is not a number") from None
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name}={text!r} is not a number > 0")
    return value


def proof(token: bytes, member: str) -> str:
    """What a joiner writes to prove it holds the job's token."""
    return hmac.new(token, b"pollux-join:" + member.encode("ascii"), hashlib.sha256).hexdigest()


class ElasticGroup:
    """The job's control store and the current generation of its process group."""

    def __init__(self, store: Any, backend: str, rank: int, world: int, token: bytes,
                 generation: int = 0, joined: bool = False, hosted: bool = False) -> None:
        self.store = store
        self.hosted = hosted  # the store lives apart from rank 0: rank 0 too may leave
        self.backend = backend
        self.rank, self.world = rank, world
        self.token = token
        self.generation = generation
        self.joined = joined  # this process joined a running job: it receives the state
        self.join_timeout_s = _float_env("POLLUX_JOIN_TIMEOUT", 60.0)
        self.resize_timeout_s = _float_env("POLLUX_RESIZE_TIMEOUT", 30.0)
        # After a failure, the recovery's leader gives the workers this long, and at least
        # twice a step, to answer its roll call or report; one that answered is waited for.
        # A live worker's answer may wait on its main thread, which holds the interpreter
        # while it tears down the failed group: a loaded host needs more than a few steps.
        self.settle_s = 2.0
        self.member = uuid.uuid4().hex  # this process, whatever its rank (the roll call's name)
        self._answerer: Optional[threading.Thread] = None
        self._next = generation + 1  # rank 0: the next generation number to hand out
        self._seen_joiners = 0
        self._ready: List[str] = []   # rank 0: joiners proven and waiting, by member id
        self.collective_timeout = datetime.timedelta(minutes=30)
        # Where this process runs, which every generation records for a change that lets
        # workers go by where they run (ranks_of).
        self.place = {"job": os.environ.get("SLURM_JOB_ID", ""),
                      "node": os.environ.get("SLURMD_NODENAME") or socket.gethostname()}

    # -- rendezvous -----------------------------------------------------------------------

    def form(self, generation: int, rank: int, world: int,
             timeout_s: Optional[float] = None) -> None:
        """Meets the generation's other members (all `world` of them, or ResizeError after
        the timeout) and initialises the default process group at that size."""
        if _FAULT == "rendezvous" and generation > 0:
            raise ResizeError("rendezvous failed (forced by a test)")
        if _FAULT == "die" and generation > 0:
            os._exit(9)
        self.store.set(f"{PREFIX}g{generation}/who/{rank}",
                       json.dumps(dict(self.place, member=self.member)))
        key = f"{PREFIX}g{generation}/arrived"
        self.store.add(key, 1)
        deadline = time.monotonic() + (timeout_s or self.resize_timeout_s)
        while int(self.store.add(key, 0)) < world:
            if time.monotonic() > deadline:
                raise ResizeError(f"generation {generation}: only "
                                  f"{int(self.store.add(key, 0))} of {world} ranks arrived")
            time.sleep(0.002)
        dist.init_process_group(self.backend, timeout=self.collective_timeout,
                                store=dist.PrefixStore(f"{PREFIX}g{generation}/pg/", self.store),
                                rank=rank, world_size=world)
        self.generation, self.rank, self.world = generation, rank, world
        self._next = max(self._next, generation + 1)

    def ranks_of(self, job: str, nodes: Sequence[str] = ()) -> List[int]:
        """The ranks of this generation whose workers run in Slurm job `job`, on `nodes`
        only where given (each member recorded where it runs when it formed the generation)."""
        ranks = []
        for rank in range(self.world):
            place = json.loads(self.store.get(f"{PREFIX}g{self.generation}/who/{rank}"))
            if place.get("job") == job and (not nodes or place.get("node") in nodes):
                ranks.append(rank)
        return ranks

    # -- rank 0: joiners and plans --------------------------------------------------------

    def ready_joiners(self) -> List[str]:
        """Rank 0: the joiners that proved the token and wait for a generation."""
        count = int(self.store.add(f"{PREFIX}joiners", 0))
        while self._seen_joiners < count:
            index = self._seen_joiners
            self._seen_joiners += 1
            try:
                request = json.loads(self.store.get(f"{PREFIX}join/{index}"))
                member, given = str(request["member"]), str(request["proof"])
            except (ValueError, KeyError, TypeError, RuntimeError):
                log(f"join request {index} is malformed; refused")
                continue
            if int(self.store.add(f"{PREFIX}answered/{member}", 0)):
                continue  # answered by an earlier rank 0, which left since
            if not hmac.compare_digest(given, proof(self.token, member)):
                log(f"joiner {member[:12]} did not prove the job's join token; refused")
                self._answer(member, {"refused": True})
                continue
            self._ready.append(member)
        return list(self._ready)

    def write_plan(self, stay: List[int], joiners: List[str]) -> int:
        """Rank 0: the next generation's plan, in the store before the agreeing all-reduce
        that announces it; returns its number."""
        generation = self._next
        self._next += 1
        plan = {"generation": generation, "stay": stay, "joiners": joiners,
                "world": len(stay) + len(joiners)}
        self.store.set(f"{PREFIX}plan/{generation}", json.dumps(plan))
        return generation

    def read_plan(self, generation: int) -> Dict[str, Any]:
        self.store.set_timeout(datetime.timedelta(seconds=self.resize_timeout_s))
        return json.loads(self.store.get(f"{PREFIX}plan/{generation}"))

    def admit(self, plan: Dict[str, Any]) -> None:
        """Rank 0, once the change is agreed: tells each planned joiner its rank."""
        first = len(plan["stay"])
        for offset, member in enumerate(plan["joiners"]):
            self._ready.remove(member)
            self._answer(member, {"generation": plan["generation"], "rank": first + offset,
                                  "world": plan["world"]})

    def _answer(self, member: str, answer: Dict[str, Any]) -> None:
        self.store.add(f"{PREFIX}answered/{member}", 1)
        self.store.set(f"{PREFIX}admit/{member}", json.dumps(answer))

    # -- a failure ------------------------------------------------------------------------

    def survivors(self, min_replicas: int, step_s: float = 0.0) -> Dict[str, Any]:
        """After a failed collective (the group already destroyed): each survivor reports to
        the store; the leader (rank 0, or with the store hosted apart the first survivor to
        report) calls the roll, waits for every worker that answered it to report (up to the
        resize timeout) and for the others settle_s (and twice `step_s`, its last step's
        time; up to the resize timeout while fewer than min_replicas have come), and writes
        the plan of the next generation, the survivors in their old order, or a fallback when
        fewer than min_replicas are left. Raises on a store error (the store's host is
        gone)."""
        settle_s = max(self.settle_s, 2 * step_s)
        self.store.set_timeout(datetime.timedelta(seconds=self.resize_timeout_s))
        base = f"{PREFIX}g{self.generation}/failed/"
        if _FAULT == "stalled":
            time.sleep(1.0)
        self.store.add(base + str(self.rank), 1)
        self.store.add(base + "count", 1)
        key = f"{PREFIX}recover/{self.generation}"
        if self.hosted:
            leads = int(self.store.add(key + "/leader", 1)) == 1
        else:
            leads = self.rank == 0
        if not leads:  # the leader may wait up to the resize timeout from its own report
            self.store.wait([key], datetime.timedelta(seconds=2 * self.resize_timeout_s))
            return json.loads(self.store.get(key))
        members = [self._member_of(rank) for rank in range(self.world)]
        roll = self._call_roll(members)
        started = changed = time.monotonic()
        last = 0
        while True:
            count = int(self.store.add(base + "count", 0))
            now = time.monotonic()
            if count != last:
                last, changed = count, now
            if count >= self.world or now - started > self.resize_timeout_s:
                break
            # Short of the minimum the others may only be late (a loaded host): the fallback
            # costs the job a restart, so it waits up to the resize timeout for them.
            if now - changed > settle_s and count >= min_replicas and \
                    not self._answered_yet_to_report(roll, base, members):
                break
            time.sleep(0.01)
        alive = [rank for rank in range(self.world) if int(self.store.add(base + str(rank), 0))]
        lost = [rank for rank in range(self.world) if rank not in alive]
        if lost:
            log(f"rank {self.rank} leads the recovery of generation {self.generation}: rank(s) "
                f"{lost} left out (no report, no answer to the roll call, "
                f"{time.monotonic() - changed:.2f} s after the last report)")
        if len(alive) < min_replicas:
            plan: Dict[str, Any] = {"fallback": f"{len(alive)} rank(s) left, below the "
                                                f"minimum of {min_replicas}"}
        else:
            plan = {"generation": self._next, "stay": alive, "joiners": [],
                    "world": len(alive)}
            self._next += 1
        self.store.set(key, json.dumps(plan))
        return plan

    def _call_roll(self, members: List[str]) -> str:
        """The leader of a recovery: asks `members` (this generation's workers, by rank) to
        answer (each worker's answer_roll_calls thread); returns the roll call's key."""
        roll = f"{PREFIX}rollcall/{int(self.store.add(f'{PREFIX}rollcalls', 1))}"
        for member in members:
            self._wake(member, roll)
        return roll

    def _answered_yet_to_report(self, roll: str, base: str, members: List[str]) -> bool:
        """Whether a worker of this generation (`members`, by rank) answered the roll call but
        has not reported its failed collective yet (alive, only late)."""
        return any(not int(self.store.add(base + str(rank), 0)) and
                   int(self.store.add(f"{roll}/{member}", 0))
                   for rank, member in enumerate(members))

    def _member_of(self, rank: int) -> str:
        return json.loads(self.store.get(f"{PREFIX}g{self.generation}/who/{rank}"))["member"]

    def _wake(self, member: str, what: str) -> None:
        """Hands `what` (a roll call's key, or "stop") to `member`'s answering thread."""
        turn = int(self.store.add(f"{PREFIX}wake/{member}/turns", 1)) - 1
        self.store.set(f"{PREFIX}wake/{member}/{turn}", what)

    def answer_roll_calls(self, address: str, port: int) -> None:
        """Answers every roll call from a thread of its own, with its own connection to the
        store, whatever the training loop is doing (until stop_answering or the store is
        gone)."""
        self._answerer = threading.Thread(target=_answer_roll_calls,
                                          args=(address, port, self.member),
                                          name="pollux-roll-call", daemon=True)
        self._answerer.start()

    def stop_answering(self) -> None:
        """Ends the answering thread before the interpreter exits (a thread still blocked in
        the store when the interpreter finalizes aborts the process)."""
        if self._answerer is None:
            return
        try:
            self._wake(self.member, "stop")
        except (RuntimeError, OSError):
            pass  # the store is gone: so is the thread's wait
        self._answerer.join(5.0)
        self._answerer = None


def _answer_roll_calls(address: str, port: int, member: str) -> None:
    try:
        store = dist.TCPStore(address, port, None, False, datetime.timedelta(seconds=30))
        for turn in itertools.count():
            key = f"{PREFIX}wake/{member}/{turn}"
            store.wait([key], datetime.timedelta(days=30))
            what = store.get(key).decode()
            if what == "stop":
                return
            if _FAULT == "stalled":
                time.sleep(1.0)
            store.add(f"{what}/{member}", 1)
    except (RuntimeError, OSError):
        return  # the store is gone: no roll call will come


_group: Optional[ElasticGroup] = None
_wrappers: "weakref.WeakSet[Any]" = weakref.WeakSet()  # AdaptiveDataParallel instances


def _at_exit() -> None:
    """At interpreter exit, in a safe order: the roll call's thread, each DDP wrapper's
    reducer, then the process group, then the store (torch 1.13 aborts or deadlocks at exit
    when they go in another order after a live change)."""
    global _group
    if _group is not None:
        _group.stop_answering()
    for wrapper in list(_wrappers):
        wrapper._drop_ddp()
    destroy()
    _group = None
    gc.collect()


atexit.register(_at_exit)


def current() -> Optional[ElasticGroup]:
    """The job's ElasticGroup, None when live changes are off."""
    return _group


def wanted(elastic: Optional[bool]) -> bool:
    """Whether init_process_group should start one (explicitly, or POLLUX_ELASTIC=1)."""
    if elastic is not None:
        return elastic
    return os.environ.get("POLLUX_ELASTIC", "") == "1"


def joining() -> bool:
    """This process was started to join a running job (POLLUX_JOIN=1)."""
    return os.environ.get("POLLUX_JOIN", "") == "1"


def start(backend: str, rank: int, world: int) -> Tuple[int, int]:
    """Opens the job's store (rank 0 hosts it, unless POLLUX_STORE_HOSTED=1) and forms
    generation 0, or, for a joiner (POLLUX_JOIN=1), proves the token, waits to be admitted and
    forms that generation.
    Returns (rank, world_size)."""
    global _group
    address = os.environ.get("MASTER_ADDR", "127.0.0.1")
    port = int(os.environ.get("MASTER_PORT", "29500"))
    token = os.environ.get("POLLUX_JOIN_TOKEN", "").encode()
    joiner = joining()
    join_timeout_s = _float_env("POLLUX_JOIN_TIMEOUT", 60.0)
    timeout = datetime.timedelta(seconds=max(join_timeout_s, 60.0))
    hosted = os.environ.get("POLLUX_STORE_HOSTED", "") == "1"
    if not joiner:
        store = dist.TCPStore(address, port, None, rank == 0 and not hosted, timeout,
                              wait_for_workers=False)
        group = ElasticGroup(store, backend, rank, world, token, hosted=hosted)
        group.form(0, rank, world, timeout_s=timeout.total_seconds())
        group.answer_roll_calls(address, port)
        _group = group
        return rank, world
    store = dist.TCPStore(address, port, None, False, timeout)
    member = uuid.uuid4().hex
    index = int(store.add(f"{PREFIX}joiners", 1)) - 1
    store.set(f"{PREFIX}join/{index}", json.dumps({"member": member,
                                                   "proof": proof(token, member)}))
    key = f"{PREFIX}admit/{member}"
    try:
        store.wait([key], datetime.timedelta(seconds=join_timeout_s))
    except RuntimeError:
        raise ResizeError(f"not admitted to the job within {join_timeout_s:g} s") from None
    admitted = json.loads(store.get(key))
    if admitted.get("refused"):
        raise ResizeError("the job refused this joiner (join token mismatch)")
    group = ElasticGroup(store, backend, admitted["rank"], admitted["world"], token,
                         joined=True, hosted=hosted)
    group.form(admitted["generation"], admitted["rank"], admitted["world"])
    group.answer_roll_calls(address, port)
    _group = group
    return group.rank, group.world


def destroy() -> None:
    """Destroys the current process group (after the DDP wrapper was dropped: see
    AdaptiveDataParallel), with a gc first so that nothing keeps its sockets open."""
    gc.collect()
    if dist.is_initialized():
        try:
            dist.destroy_process_group()
        except (RuntimeError, ValueError):
            pass
    gc.collect()


# -- state in memory -------------------------------------------------------------------------

class _Slot:
    """A tensor's place in a broadcast skeleton."""

    def __init__(self, index: int) -> None:
        self.index = index


def _strip(value: Any, tensors: List[torch.Tensor]) -> Any:
    if isinstance(value, torch.Tensor):
        tensors.append(value)
        return _Slot(len(tensors) - 1)
    if isinstance(value, dict):
        return {key: _strip(item, tensors) for key, item in value.items()}
    if isinstance(value, list):
        return [_strip(item, tensors) for item in value]
    if isinstance(value, tuple):
        return tuple(_strip(item, tensors) for item in value)
    return value


def _fill(value: Any, tensors: List[torch.Tensor]) -> Any:
    if isinstance(value, _Slot):
        return tensors[value.index]
    if isinstance(value, dict):
        return {key: _fill(item, tensors) for key, item in value.items()}
    if isinstance(value, list):
        return [_fill(item, tensors) for item in value]
    if isinstance(value, tuple):
        return tuple(_fill(item, tensors) for item in value)
    return value


def broadcast_state(state: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """Rank 0's `state` (nested dicts, lists, tuples, tensors and picklable values) on every
    rank: the structure by broadcast_object_list, the tensors in one flat broadcast per
    dtype (on the current CUDA device under nccl). Ranks other than 0 pass None; rank 0 gets
    its own state back."""
    rank = dist.get_rank()
    tensors: List[torch.Tensor] = []
    objects: List[Any] = [None, None]
    if rank == 0:
        skeleton = _strip(state, tensors)
        objects = [skeleton, [(t.dtype, tuple(t.shape), t.device) for t in tensors]]
    dist.broadcast_object_list(objects, src=0)
    skeleton, meta = objects
    device = (torch.device("cuda", torch.cuda.current_device())
              if dist.get_backend() == "nccl" else torch.device("cpu"))
    received: List[Optional[torch.Tensor]] = [None] * len(meta)
    for dtype in dict.fromkeys(d for d, _, _ in meta):
        indices = [i for i, (d, _, _) in enumerate(meta) if d == dtype]
        wire = torch.uint8 if dtype == torch.bool else dtype
        sizes = [math.prod(meta[i][1]) for i in indices]
        if rank == 0:
            flat = torch.cat([tensors[i].detach().reshape(-1).to(device=device, dtype=wire)
                              for i in indices])
        else:
            flat = torch.empty(sum(sizes), dtype=wire, device=device)
            if _FAULT == "die-in-broadcast":
                os._exit(9)
        dist.broadcast(flat, 0)
        if rank != 0:
            for i, part in zip(indices, torch.split(flat, sizes)):
                received[i] = part.view(meta[i][1]).to(dtype=dtype,
                                                        device=meta[i][2]).clone()
    if rank == 0:
        return state  # type: ignore[return-value]
    return _fill(skeleton, received)  # type: ignore[arg-type]
