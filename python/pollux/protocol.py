# SPDX-License-Identifier: GPL-2.0-or-later
"""pollux.protocol: a training loop's side of the pollux-agent channel (standard library only).

The Python twin of include/pollux/pollux_train.h, which specifies the protocol: pollux-agent
starts the training command with POLLUX_AGENT_SOCKET naming a UNIX SOCK_SEQPACKET socket; the
trainer sends `hello` once, `step` after every optimizer step, `checkpointed` after writing a
checkpoint and, optionally, `length` (how long the job is: declare_target); the agent sends
`decision` (the batch configuration to use from the next step on) and `checkpoint` (write a
checkpoint, send `checkpointed`, exit). The lines sent are byte-for-byte those of the C
header (numbers in C-locale %.9g / %.17g).

A job that declares its length (declare_target(epochs=N, examples_per_epoch=D) or
declare_target(examples=X), after each start: the agent keeps it across restarts too) lets
sched/pollux estimate its remaining time and shorten job completion times. The agent counts
progress in the goodput model's unit, examples at the initial batch size with statistical
efficiency applied (each step adds its examples x the efficiency of its batch size), and takes
the target in that unit: X examples, or N x D for epochs (without D, from the step totals,
examples / epochs).

Outside pollux-agent (POLLUX_AGENT_SOCKET unset or empty) every method is a cheap no-op, so the
same script runs with and without it. Sends never block: a step the agent cannot take at once
is dropped. Under the agent, a SIGTERM is a checkpoint request too: Slurm signals every process
of a job step it stops (for a requeue, say), the agent's workers as well as the agent, and the
agent's own request may arrive after the signal (the handler is installed from the main thread
and put back by close()).

    with pollux.Trainer(init_batch_size=256, max_batch_size=4096, min_local_bsz=16,
                        max_local_bsz=128, accumulation=True) as trainer:
        trainer.declare_target(epochs=90, examples_per_epoch=len(dataset))  # optional
        for ...:
            ... one optimizer step ...
            trainer.report_step(step_time, local_bsz, accum_steps, examples, epochs)
            decision = trainer.decision()        # None until the agent has decided
            if trainer.checkpoint_requested():
                ... save ...; trainer.checkpointed(); break

pollux.AdaptiveDataParallel opens its own Trainer from the loader's pollux.BatchSizeLimits;
use Trainer directly only for a training loop of your own.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import os
import re
import signal
import socket
import threading
from typing import Any, Dict, Optional, Tuple

from pollux.limits import BatchSizeLimits
from pollux.log import log

__all__ = ["Decision", "Leavers", "Trainer", "MAX_LINE", "MAX_DECLARED"]

MAX_LINE = 1024  # POLLUX_MAX_LINE: the longest message either side sends
MAX_DECLARED = 1e18  # POLLUX_MAX_DECLARED: the largest declared examples, epochs or data set

_SEND_FLAGS = socket.MSG_DONTWAIT | socket.MSG_NOSIGNAL
_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
_NAME = re.compile(r"[A-Za-z0-9._-]+")  # a Slurm job id or node name


@dataclasses.dataclass(frozen=True)
class Decision:
    """The batch configuration the agent asks for (lr = base lr * lr_scale).

    accum_steps counts the micro-batches beyond the first (0: no accumulation), so
    batch_size = replicas * local_bsz * (accum_steps + 1).
    """

    batch_size: int
    local_bsz: int
    accum_steps: int
    lr_scale: float


@dataclasses.dataclass(frozen=True)
class Leavers:
    """The workers a live change lets go, by where they run rather than by rank (ranks move
    with every change): those of Slurm job `job` (the training job's own step, or one of its
    parts), on `nodes` only where given (SLURM_JOB_ID and SLURMD_NODENAME of each worker)."""

    job: str
    nodes: Tuple[str, ...] = ()


class Trainer:
    """The connection to pollux-agent, or a no-op outside it (see the module's doc)."""

    def __init__(self, init_batch_size: int, max_batch_size: int, min_local_bsz: int,
                 max_local_bsz: int, accumulation: bool, elastic: bool = False) -> None:
        """Connects to POLLUX_AGENT_SOCKET and sends `hello` with the job's batch limits
        (and the optional `elastic=1` when the trainer re-forms its group live after a
        worker's death, pollux.elastic: the agent then lets the other workers go on).

        Raises OSError if the variable names a socket that cannot be connected to.
        """
        self._socket: Optional[socket.socket] = None
        self._decision: Optional[Decision] = None
        self._checkpoint_requested = False
        self._resize: Optional[Tuple[list, int]] = None
        self._reported = (0.0, 0.0)  # examples and epochs of the last step reported
        self._length_line = None     # a declared length the agent has not taken yet
        path = os.environ.get("POLLUX_AGENT_SOCKET")
        if not path:
            return
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            connection.connect(path)
            hello = _hello_line(init_batch_size, max_batch_size, min_local_bsz,
                                max_local_bsz, accumulation)
            if elastic:
                hello = hello[:-1] + b" elastic=1\n"
            connection.send(hello, _SEND_FLAGS)
        except OSError:
            connection.close()
            raise
        self._socket = connection
        self._previous_sigterm: Any = None
        if threading.current_thread() is threading.main_thread():
            self._previous_sigterm = signal.signal(signal.SIGTERM, self._on_sigterm)

    @classmethod
    def from_limits(cls, limits: BatchSizeLimits, elastic: bool = False) -> "Trainer":
        """A Trainer announcing `limits` (what pollux.AdaptiveDataParallel opens)."""
        return cls(limits.init_batch_size, limits.max_batch_size, limits.min_local_bsz,
                   limits.max_local_bsz, limits.accumulation, elastic)

    def _on_sigterm(self, signum: int, frame: Any) -> None:
        self._checkpoint_requested = True

    @property
    def connected(self) -> bool:
        """True under pollux-agent (until close())."""
        return self._socket is not None

    def report_step(self, step_time: float, local_bsz: int, accum_steps: int, examples: float,
                    epochs: float, compute_time: Optional[float] = None,
                    grad_sqr: Optional[float] = None,
                    grad_var: Optional[float] = None) -> bool:
        """Reports one optimizer step; picks up any decision or checkpoint request.

        step_time: seconds of the whole step (all micro-batches); accum_steps: micro-batches
        beyond the first (0: no accumulation); compute_time: seconds of one micro-batch's
        forward/backward, if measured; grad_sqr and grad_var: |g|^2 and tr(Sigma) of ONE
        example's gradient, both or neither (as in C, sent only when grad_var >= 0); examples,
        epochs: totals since the job first started. Returns False if the step was dropped (the
        agent could not take it at once), else True.
        """
        if (grad_sqr is None) != (grad_var is None):
            raise ValueError("grad_sqr and grad_var come together")
        self._reported = (examples, epochs)
        if self._socket is None:
            return True
        self._send_length()
        sent = self._send(_step_line(step_time, local_bsz, accum_steps, examples, epochs,
                                     compute_time, grad_sqr, grad_var))
        self._drain()
        return sent

    def declare_target(self, epochs: Optional[float] = None, examples: Optional[float] = None,
                       examples_per_epoch: Optional[float] = None) -> bool:
        """Declares how long the job is: `epochs` epochs (of a data set of
        `examples_per_epoch` examples; None: the agent derives it from the step totals) or
        `examples` examples, exactly one of the two. Call it after each start (the latest
        declaration wins); AdaptDL's remaining_epochs_until(N) says the same.

        Returns True if declared (sent, or sent before the next step if the agent cannot take
        it at once; outside pollux-agent nothing is sent). A bad declaration is refused: False,
        with the reason on stderr and nothing sent, and training goes on with the job
        undeclared. Refused: neither or both of epochs and examples; a value that is not a
        finite number > 0 (at most MAX_DECLARED); a target not beyond the totals of the last
        step reported (the progress is already beyond it). The agent refuses (and logs) a
        target its own count of the progress already reached.
        """
        problem = _length_problem(epochs, examples, examples_per_epoch, *self._reported)
        if problem is not None:
            log(f"declared length refused: {problem}; the job runs undeclared")
            return False
        if self._socket is not None:
            self._length_line = _length_line(epochs, examples, examples_per_epoch)
            self._send_length()
        return True

    def decision(self) -> Optional[Decision]:
        """The agent's latest Decision, or None if it has not sent one."""
        self._drain()
        return self._decision

    def checkpoint_requested(self) -> bool:
        """True once the agent has asked for a checkpoint (the job is about to stop)."""
        self._drain()
        return self._checkpoint_requested

    def resize_request(self) -> Optional[Tuple[Any, int]]:
        """The agent's latest live-change request, once: (who leaves, joiners), from the
        optional `resize [leave=R,R...] [leave_job=J [leave_nodes=N,N...]] [join=N]` message;
        who leaves is a list of ranks (leave=) or a Leavers (leave_job=: the workers of that
        Slurm job, on those nodes where given: an in-place shrink or a part's leave); None if
        there is none. pollux.AdaptiveDataParallel asks for it on rank 0."""
        self._drain()
        request, self._resize = self._resize, None
        return request

    def report_resize(self, old_world: int, new_world: int, stall: float,
                      rank: Optional[int] = None) -> bool:
        """Tells the agent of a live change of the world size, its stall in seconds and this
        process's rank after it (the optional `resized from=W to=W stall=S [rank=R]`, which
        the agent reports as resize_stall_s and older agents ignore). False if it could not
        be sent."""
        message = b"resized from=%d to=%d stall=%.9g" % (old_world, new_world, stall)
        if rank is not None:
            message += b" rank=%d" % rank
        return self._socket is None or self._send(message + b"\n")

    def report_leaving(self) -> bool:
        """Tells the agent this worker leaves the job at a live change and exits 0 next (the
        optional `leaving`; the job goes on without it). False if it could not be sent."""
        return self._socket is None or self._send(b"leaving\n")

    def checkpointed(self) -> bool:
        """Tells the agent a checkpoint has been written. False if it could not be sent."""
        return self._socket is None or self._send(b"checkpointed\n")

    def close(self) -> None:
        """Closes the connection (and puts the previous SIGTERM handler back)."""
        if self._socket is not None:
            self._socket.close()
            if self._previous_sigterm is not None:
                signal.signal(signal.SIGTERM, self._previous_sigterm)
                self._previous_sigterm = None
        self._socket = None

    def __enter__(self) -> "Trainer":
        return self

    def __exit__(self, *exception: Any) -> None:
        self.close()

    def _send(self, line):
        try:
            return self._socket.send(line, _SEND_FLAGS) == len(line)
        except OSError:
            return False

    def _send_length(self):
        if self._length_line is not None and self._send(self._length_line):
            self._length_line = None

    def _drain(self):
        """Applies whatever the agent has sent, without blocking."""
        while self._socket is not None:
            try:
                message = self._socket.recv(MAX_LINE, socket.MSG_DONTWAIT)
            except OSError:
                return
            if not message:
                return
            self._apply(message)

    def _apply(self, message):
        kind, fields = _parse(message)
        if kind == "checkpoint":
            self._checkpoint_requested = True
        elif kind == "decision":
            self._decision = _decision(fields) or self._decision
        elif kind == "resize":
            self._resize = _resize(fields) or self._resize


def _hello_line(init_batch_size, max_batch_size, min_local_bsz, max_local_bsz, accumulation):
    return b"hello init_batch_size=%d max_batch_size=%d min_local_bsz=%d max_local_bsz=%d " \
           b"accumulation=%d\n" % (init_batch_size, max_batch_size, min_local_bsz,
                                   max_local_bsz, 1 if accumulation else 0)


def _step_line(step_time, local_bsz, accum_steps, examples, epochs, compute_time, grad_sqr,
               grad_var):
    # bytes %-formatting of floats is locale-independent and matches C's printf for %g.
    line = b"step time=%.9g local_bsz=%d accum_steps=%d examples=%.17g epochs=%.9g" % (
        step_time, local_bsz, accum_steps, examples, epochs)
    if compute_time is not None and compute_time >= 0:
        line += b" compute_time=%.9g" % compute_time
    if grad_var is not None and grad_var >= 0:
        line += b" grad_sqr=%.9g grad_var=%.9g" % (grad_sqr, grad_var)
    return line + b"\n"


def _is_number(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _amount_problem(name, value):
    """Why `value` is no declarable amount (None if it is one)."""
    if not _is_number(value) or not math.isfinite(value) or not 0 < value <= MAX_DECLARED:
        return f"{name}={value!r} is not a finite number > 0 (at most 1e18)"
    return None


def _length_problem(epochs, examples, examples_per_epoch, reported_examples, reported_epochs):
    """Why the declaration is refused, or None."""
    if (epochs is None) == (examples is None):
        return "give epochs or examples, exactly one of them"
    if examples is not None:
        if examples_per_epoch is not None:
            return "examples_per_epoch goes with epochs only"
        problem = _amount_problem("examples", examples)
        if problem is None and examples <= reported_examples:
            problem = (f"examples={examples!r} is not beyond the {reported_examples!r} "
                       f"examples already trained")
        return problem
    problem = _amount_problem("epochs", epochs)
    if problem is None and examples_per_epoch is not None:
        problem = _amount_problem("examples_per_epoch", examples_per_epoch)
    if problem is None and epochs <= reported_epochs:
        problem = f"epochs={epochs!r} is not beyond the {reported_epochs!r} epochs already trained"
    return problem


def _length_line(epochs, examples, examples_per_epoch):
    if examples is not None:
        return b"length examples=%.17g\n" % examples
    if examples_per_epoch is not None:
        return b"length epochs=%.17g examples_per_epoch=%.17g\n" % (epochs, examples_per_epoch)
    return b"length epochs=%.17g\n" % epochs


def _parse(message):
    """b"kind key=value ..." -> ("kind", {key: value}); ("", {}) for a non-ASCII message."""
    try:
        words = message.decode("ascii").split()
    except UnicodeDecodeError:
        return "", {}
    if not words:
        return "", {}
    fields = dict(word.split("=", 1) for word in words[1:] if "=" in word)
    return words[0], fields


def _decision(fields):
    """The Decision in a `decision` message's fields, None if any key is missing or bad."""
    integers = [fields.get(key, "") for key in ("batch_size", "local_bsz", "accum_steps")]
    lr_scale = fields.get("lr_scale", "")
    if not all(_INTEGER.fullmatch(value) for value in integers) \
            or not _DECIMAL.fullmatch(lr_scale):
        return None
    return Decision(*(int(value) for value in integers), float(lr_scale))


def _resize(fields):
    """(who leaves, joiners) of a `resize` message, None if malformed: who leaves is a list
    of ranks (leave=) or a Leavers (leave_job=, leave_nodes=)."""
    join_text = fields.get("join", "0")
    if not _INTEGER.fullmatch(join_text) or int(join_text) < 0:
        return None
    join = int(join_text)
    if "leave_job" in fields:
        job = fields["leave_job"]
        nodes = tuple(word for word in fields.get("leave_nodes", "").split(",") if word)
        if "leave" in fields or not _NAME.fullmatch(job) or \
                not all(_NAME.fullmatch(node) for node in nodes):
            return None
        return Leavers(job, nodes), join
    if "leave_nodes" in fields:
        return None
    ranks = [word for word in fields.get("leave", "").split(",") if word]
    if not all(_INTEGER.fullmatch(word) for word in ranks):
        return None
    leave = [int(word) for word in ranks]
    if any(rank < 0 for rank in leave) or (not leave and not join):
        return None
    return leave, join
