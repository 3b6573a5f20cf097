# SPDX-License-Identifier: GPL-2.0-or-later
"""pollux.protocol against a fake agent (a SOCK_SEQPACKET listening socket in a temp dir), and
examples/train_ddp.py (pollux.AdaptiveDataParallel) end to end under a fake agent."""

import contextlib
import ctypes
import importlib.util
import os
import random
import re
import select
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.dirname(HERE)
EXAMPLE = os.path.join(os.path.dirname(PYTHON_DIR), "examples", "train_ddp.py")
sys.path.insert(0, PYTHON_DIR)

from pollux import protocol  # noqa: E402  (after the path set-up)
from pollux.log import log  # noqa: E402

LIMITS = dict(init_batch_size=256, max_batch_size=4096, min_local_bsz=16, max_local_bsz=128,
              accumulation=True)
HELLO = (b"hello init_batch_size=256 max_batch_size=4096 min_local_bsz=16 max_local_bsz=128 "
         b"accumulation=1\n")
PLAIN_STEP = dict(step_time=0.5, local_bsz=32, accum_steps=4, examples=1000, epochs=0.25)
PLAIN_STEP_LINE = b"step time=0.5 local_bsz=32 accum_steps=4 examples=1000 epochs=0.25\n"
HAVE_TORCH = importlib.util.find_spec("torch") is not None and \
    importlib.util.find_spec("sklearn") is not None  # the example's data set


@contextlib.contextmanager
def agent_socket_variable(value):
    """POLLUX_AGENT_SOCKET set to value (None: unset) for the duration."""
    saved = os.environ.pop("POLLUX_AGENT_SOCKET", None)
    if value is not None:
        os.environ["POLLUX_AGENT_SOCKET"] = value
    try:
        yield
    finally:
        os.environ.pop("POLLUX_AGENT_SOCKET", None)
        if saved is not None:
            os.environ["POLLUX_AGENT_SOCKET"] = saved


class FakeAgent:
    """The agent's end: listens at a fresh path, then talks over the accepted connection."""

    def __init__(self):
        self._directory = tempfile.TemporaryDirectory(prefix="pollux-train-test-")
        self.path = os.path.join(self._directory.name, "agent.sock")
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._listener.bind(self.path)
        self._listener.listen(4)
        self._connection = None

    def accept(self, timeout=5.0):
        self.hang_up()
        self._listener.settimeout(timeout)
        self._connection, _ = self._listener.accept()
        self._connection.settimeout(None)

    def receive(self, timeout=1.0):
        """The next message from the trainer; b"" if none arrives in time or it hung up."""
        readable, _, _ = select.select([self._connection], [], [], timeout)
        return self._connection.recv(65536) if readable else b""

    def send(self, message):
        self._connection.send(message.encode("latin-1") if isinstance(message, str) else message)

    def hang_up(self):
        if self._connection is not None:
            self._connection.close()
        self._connection = None

    def close(self):
        self.hang_up()
        self._listener.close()
        self._directory.cleanup()


def fields_of(line):
    """b"kind key=value ..." -> {"": kind, key: value}."""
    words = line.decode("ascii").split()
    return {"": words[0], **dict(word.split("=", 1) for word in words[1:])}


class LogTest(unittest.TestCase):
    def test_a_message_is_one_write_of_the_whole_line(self):
        writes = []

        class Recorder:
            def write(self, text):
                writes.append(text)

            def flush(self):
                pass

        with contextlib.redirect_stderr(Recorder()):
            log("live change to generation 1: 1 -> 2 replicas in 0.509 s")
        self.assertEqual(writes,
                         ["pollux: live change to generation 1: 1 -> 2 replicas in 0.509 s\n"])


class NoAgentTest(unittest.TestCase):
    def test_every_call_is_a_no_op(self):
        with agent_socket_variable(None), protocol.Trainer(**LIMITS) as trainer:
            self.assertFalse(trainer.connected)
            self.assertTrue(trainer.report_step(**PLAIN_STEP, grad_sqr=1.0, grad_var=2.0))
            self.assertIsNone(trainer.decision())
            self.assertFalse(trainer.checkpoint_requested())
            self.assertTrue(trainer.checkpointed())

    def test_empty_variable_means_no_agent(self):
        with agent_socket_variable(""), protocol.Trainer(**LIMITS) as trainer:
            self.assertFalse(trainer.connected)

    def test_nobody_listening_raises(self):
        with agent_socket_variable("/nonexistent/pollux-agent.sock"):
            with self.assertRaises(FileNotFoundError):
                protocol.Trainer(**LIMITS)

    def test_grad_sqr_and_grad_var_come_together(self):
        with agent_socket_variable(None), protocol.Trainer(**LIMITS) as trainer:
            with self.assertRaises(ValueError):
                trainer.report_step(**PLAIN_STEP, grad_sqr=1.0)
            with self.assertRaises(ValueError):
                trainer.report_step(**PLAIN_STEP, grad_var=1.0)


@contextlib.contextmanager
def captured_stderr():
    """What is written to sys.stderr meanwhile, in a list of one string."""
    import io
    saved, sys.stderr = sys.stderr, io.StringIO()
    written = [""]
    try:
        yield written
    finally:
        written[0] = sys.stderr.getvalue()
        sys.stderr = saved


BAD_LENGTHS = [  # keyword arguments of declare_target, a word of the reason
    (dict(), "exactly one"),
    (dict(epochs=3, examples=100), "exactly one"),
    (dict(examples=100, examples_per_epoch=10), "examples_per_epoch goes with epochs only"),
    (dict(epochs=0), "epochs=0 is not a finite number > 0"),
    (dict(epochs=-2), "epochs=-2 is not a finite number > 0"),
    (dict(examples=float("nan")), "examples=nan is not a finite number > 0"),
    (dict(examples=float("inf")), "examples=inf"),
    (dict(examples=-float("inf")), "examples=-inf"),
    (dict(examples=2e18), "examples=2e+18"),
    (dict(examples="100"), "examples='100'"),
    (dict(epochs=True), "epochs=True"),
    (dict(epochs=3, examples_per_epoch=0), "examples_per_epoch=0"),
    (dict(epochs=3, examples_per_epoch=float("nan")), "examples_per_epoch=nan"),
]


class DeclaredLengthWithoutAgentTest(unittest.TestCase):
    def test_declarations_are_checked_and_nothing_is_sent(self):
        with agent_socket_variable(None), protocol.Trainer(**LIMITS) as trainer:
            self.assertTrue(trainer.declare_target(epochs=30, examples_per_epoch=1497))
            self.assertTrue(trainer.declare_target(examples=1e6))
            for arguments, reason in BAD_LENGTHS:
                with captured_stderr() as written:
                    self.assertFalse(trainer.declare_target(**arguments), arguments)
                self.assertIn(reason, written[0], arguments)
                self.assertIn("the job runs undeclared", written[0])


class AgentTestCase(unittest.TestCase):
    """A trainer connected to a fake agent that has read the hello."""

    def setUp(self):
        self.agent = FakeAgent()
        self.addCleanup(self.agent.close)
        with agent_socket_variable(self.agent.path):
            self.trainer = protocol.Trainer(**LIMITS)
        self.addCleanup(self.trainer.close)
        self.agent.accept()
        self.assertEqual(self.agent.receive(), HELLO)


class ConnectTest(AgentTestCase):
    def test_hello_was_sent_first(self):
        self.assertTrue(self.trainer.connected)

    def test_accumulation_is_zero_or_one(self):
        for accumulation, expected in ((False, "0"), (5, "1"), (0, "0")):
            with agent_socket_variable(self.agent.path):
                trainer = protocol.Trainer(**{**LIMITS, "accumulation": accumulation})
            self.agent.accept()
            self.assertEqual(fields_of(self.agent.receive())["accumulation"], expected)
            trainer.close()
            self.assertFalse(trainer.connected)


class StepTest(AgentTestCase):
    def test_line_without_optional_keys(self):
        self.assertTrue(self.trainer.report_step(**PLAIN_STEP))
        self.assertEqual(self.agent.receive(), PLAIN_STEP_LINE)

    def test_line_with_every_key(self):
        self.assertTrue(self.trainer.report_step(**PLAIN_STEP, compute_time=0.125, grad_sqr=0.75,
                                                 grad_var=12.5))
        self.assertEqual(self.agent.receive(),
                         b"step time=0.5 local_bsz=32 accum_steps=4 examples=1000 epochs=0.25 "
                         b"compute_time=0.125 grad_sqr=0.75 grad_var=12.5\n")

    def test_optional_keys_appear_only_when_measured(self):
        required = {"time", "local_bsz", "accum_steps", "examples", "epochs"}
        cases = [(None, None, set()), (-1.0, -1.0, set()), (0.01, None, {"compute_time"}),
                 (None, 3.5, {"grad_sqr", "grad_var"}),
                 (0.0, 0.0, {"compute_time", "grad_sqr", "grad_var"})]
        for compute_time, grad_var, extra in cases:
            grad_sqr = None if grad_var is None else 1.5
            self.trainer.report_step(**PLAIN_STEP, compute_time=compute_time, grad_sqr=grad_sqr,
                                     grad_var=grad_var)
            fields = fields_of(self.agent.receive())
            self.assertEqual(fields.pop(""), "step")
            self.assertEqual(set(fields), required | extra, (compute_time, grad_var))

    def test_numbers_parse_back_to_the_same_values(self):
        # examples is sent with 17 significant digits (exact); the others with 9.
        step = dict(step_time=0.0123456789, local_bsz=48, accum_steps=3,
                    examples=2.0 / 3.0 * 1e7, epochs=12.3456789, compute_time=0.00412345678,
                    grad_sqr=1.23456789e-4, grad_var=5.5e3)
        self.trainer.report_step(**step)
        fields = fields_of(self.agent.receive())
        self.assertEqual(float(fields["examples"]), step["examples"])
        self.assertEqual(int(fields["local_bsz"]), 48)
        self.assertEqual(int(fields["accum_steps"]), 3)
        for key, name in (("time", "step_time"), ("epochs", "epochs"),
                          ("compute_time", "compute_time"), ("grad_sqr", "grad_sqr"),
                          ("grad_var", "grad_var")):
            self.assertEqual(float(fields[key]), step[name], key)

    def test_numbers_are_formatted_as_c_printf_does(self):
        libc = ctypes.CDLL(None)
        buffer = ctypes.create_string_buffer(64)
        numbers = random.Random(7)
        for _ in range(2000):
            value = numbers.uniform(-1, 1) * 10 ** numbers.randint(-12, 18)
            for spec in (b"%.9g", b"%.17g"):
                libc.snprintf(buffer, 64, spec, ctypes.c_double(value))
                self.assertEqual(spec % value, buffer.value, value)

    def test_integers_given_as_floats_are_sent_as_integers(self):
        self.trainer.report_step(**{**PLAIN_STEP, "local_bsz": 32.0, "accum_steps": 4.0})
        self.assertEqual(self.agent.receive(), PLAIN_STEP_LINE)


class DeclaredLengthTest(AgentTestCase):
    def test_lines_are_those_of_the_c_header(self):
        self.assertTrue(self.trainer.declare_target(examples=1.5e6))
        self.assertEqual(self.agent.receive(), b"length examples=1500000\n")
        self.assertTrue(self.trainer.declare_target(epochs=30, examples_per_epoch=1497))
        self.assertEqual(self.agent.receive(), b"length epochs=30 examples_per_epoch=1497\n")
        self.assertTrue(self.trainer.declare_target(epochs=2.5))  # the agent derives the size
        self.assertEqual(self.agent.receive(), b"length epochs=2.5\n")
        self.assertTrue(self.trainer.declare_target(examples=2.0 / 3.0 * 1e7))
        self.assertEqual(float(fields_of(self.agent.receive())["examples"]), 2.0 / 3.0 * 1e7)
        self.assertTrue(self.trainer.report_step(**PLAIN_STEP))  # steps as before
        self.assertEqual(self.agent.receive(), PLAIN_STEP_LINE)

    def test_bad_declarations_are_refused_and_training_goes_on(self):
        for arguments, reason in BAD_LENGTHS:
            with captured_stderr() as written:
                self.assertFalse(self.trainer.declare_target(**arguments), arguments)
            self.assertIn("pollux: declared length refused: ", written[0])
            self.assertIn(reason, written[0], arguments)
        self.assertEqual(self.agent.receive(timeout=0.1), b"", "nothing sent when refused")
        self.assertTrue(self.trainer.report_step(**PLAIN_STEP))
        self.assertEqual(self.agent.receive(), PLAIN_STEP_LINE)

    def test_a_target_the_reported_totals_reached_is_refused(self):
        self.trainer.report_step(**PLAIN_STEP)  # 1000 examples, 0.25 epochs
        self.assertEqual(self.agent.receive(), PLAIN_STEP_LINE)
        with captured_stderr() as written:
            self.assertFalse(self.trainer.declare_target(examples=1000))
            self.assertFalse(self.trainer.declare_target(epochs=0.25, examples_per_epoch=4000))
        self.assertIn("is not beyond the 1000 examples already trained", written[0])
        self.assertIn("is not beyond the 0.25 epochs already trained", written[0])
        self.assertEqual(self.agent.receive(timeout=0.1), b"")
        self.assertTrue(self.trainer.declare_target(examples=1001))
        self.assertEqual(self.agent.receive(), b"length examples=1001\n")

    def test_a_declaration_the_agent_cannot_take_now_is_sent_before_the_next_step(self):
        sent = 0
        while self.trainer.report_step(**PLAIN_STEP):
            sent += 1
        self.assertTrue(self.trainer.declare_target(examples=1e9))
        for _ in range(sent):
            self.assertEqual(self.agent.receive(), PLAIN_STEP_LINE)
        self.assertTrue(self.trainer.report_step(**PLAIN_STEP))
        self.assertEqual(self.agent.receive(), b"length examples=1000000000\n")
        self.assertEqual(self.agent.receive(), PLAIN_STEP_LINE)

    def test_the_line_reaches_the_agents_parser(self):
        """The agent's own parser (channel_message.cpp) is tested with these lines; here the
        line is checked against its grammar: `length` then key=value words, known keys only."""
        self.trainer.declare_target(epochs=90, examples_per_epoch=1281167)
        fields = fields_of(self.agent.receive())
        self.assertEqual(fields.pop(""), "length")
        self.assertEqual(fields, {"epochs": "90", "examples_per_epoch": "1281167"})


class FromAgentTest(AgentTestCase):
    def test_sigterm_is_a_checkpoint_request_until_close(self):
        import signal
        self.assertFalse(self.trainer.checkpoint_requested())
        os.kill(os.getpid(), signal.SIGTERM)  # Slurm stopping the step signals every process
        self.assertTrue(self.trainer.checkpoint_requested())
        self.trainer.close()
        self.assertIs(signal.getsignal(signal.SIGTERM), signal.SIG_DFL)

    def test_decision_is_picked_up_and_the_latest_wins(self):
        self.assertIsNone(self.trainer.decision())
        self.agent.send("decision batch_size=512 local_bsz=64 accum_steps=2 lr_scale=1.75\n")
        self.assertEqual(self.trainer.decision(), protocol.Decision(512, 64, 2, 1.75))
        self.agent.send("decision batch_size=96 local_bsz=48 accum_steps=1 lr_scale=0.375")
        self.assertEqual(self.trainer.decision(), protocol.Decision(96, 48, 1, 0.375))

    def test_resize_request_is_taken_once_and_a_malformed_one_ignored(self):
        self.assertIsNone(self.trainer.resize_request())
        self.agent.send("resize leave=2,3\n")
        self.assertEqual(self.trainer.resize_request(), ([2, 3], 0))
        self.assertIsNone(self.trainer.resize_request())
        for bad in ("resize leave=-1", "resize leave=a", "resize", "resize join=-1",
                    "resize leave_nodes=n2", "resize leave_job=7 leave=1",
                    "resize leave_job=7;rm", "resize leave_job=7 leave_nodes=n2,n[3]"):
            self.agent.send(bad + "\n")
            self.assertIsNone(self.trainer.resize_request(), bad)
        self.agent.send("resize leave=1 join=2\n")
        self.assertEqual(self.trainer.resize_request(), ([1], 2))
        # rank 0 too: whether it may leave is the group's to say (its store hosted apart)
        self.agent.send("resize leave=0\n")
        self.assertEqual(self.trainer.resize_request(), ([0], 0))

    def test_resize_request_names_the_leavers_by_where_they_run(self):
        self.agent.send("resize leave_job=42\n")  # a part's workers
        self.assertEqual(self.trainer.resize_request(), (protocol.Leavers("42"), 0))
        self.agent.send("resize leave_job=7 leave_nodes=n2,n3\n")  # an in-place shrink
        self.assertEqual(self.trainer.resize_request(),
                         (protocol.Leavers("7", ("n2", "n3")), 0))

    def test_report_resize_sends_the_stall(self):
        self.assertTrue(self.trainer.report_resize(4, 3, 0.25))
        self.assertEqual(self.agent.receive(), b"resized from=4 to=3 stall=0.25\n")
        self.assertTrue(self.trainer.report_resize(4, 3, 0.25, rank=0))
        self.assertEqual(self.agent.receive(), b"resized from=4 to=3 stall=0.25 rank=0\n")

    def test_report_leaving(self):
        self.assertTrue(self.trainer.report_leaving())
        self.assertEqual(self.agent.receive(), b"leaving\n")

    def test_report_step_picks_up_decision_and_checkpoint(self):
        self.agent.send("decision batch_size=128 local_bsz=32 accum_steps=3 lr_scale=1\n")
        self.agent.send("checkpoint\n")
        self.trainer.report_step(**PLAIN_STEP)
        self.agent.hang_up()  # what follows can only come from what report_step read
        self.assertEqual(self.trainer.decision(), protocol.Decision(128, 32, 3, 1.0))
        self.assertTrue(self.trainer.checkpoint_requested())

    def test_checkpoint_request_then_checkpointed(self):
        self.assertFalse(self.trainer.checkpoint_requested())
        self.agent.send("checkpoint")
        self.assertTrue(self.trainer.checkpoint_requested())
        self.assertTrue(self.trainer.checkpoint_requested(), "a request stays requested")
        self.assertTrue(self.trainer.checkpointed())
        self.assertEqual(self.agent.receive(), b"checkpointed\n")

    def test_checkpoint_request_with_newline(self):
        self.agent.send("checkpoint\n")
        self.assertTrue(self.trainer.checkpoint_requested())

    def test_garbage_is_ignored(self):
        garbage = ["hello", "decision", "decision batch_size=512 local_bsz=64 accum_steps=2",
                   "decision batch_size=x local_bsz=64 accum_steps=2 lr_scale=1",
                   "decisions batch_size=512 local_bsz=64 accum_steps=2 lr_scale=1",
                   "checkpointed\n", "checkpoints", "checkpoint=1", "CHECKPOINT\n",
                   "x" * 3000, b"\0checkpoint\xff", b"decision batch_size=\xff"]
        for message in garbage:
            self.agent.send(message)
        self.assertTrue(self.trainer.report_step(**PLAIN_STEP))
        self.assertIsNone(self.trainer.decision())
        self.assertFalse(self.trainer.checkpoint_requested())
        self.agent.send("decision batch_size=256 local_bsz=16 accum_steps=0 lr_scale=1")
        self.assertEqual(self.trainer.decision(), protocol.Decision(256, 16, 0, 1.0),
                         "still in sync after garbage")


class SendTest(AgentTestCase):
    def test_full_socket_drops_steps_without_blocking(self):
        # Were the send blocking, this timeout would turn a hang into a 1 s call the test sees.
        self.trainer._socket.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO,
                                        struct.pack("ll", 1, 0))
        sent = dropped = 0
        slowest = 0.0
        for _ in range(5000):
            start = time.perf_counter()
            if self.trainer.report_step(**PLAIN_STEP):
                sent += 1
            else:
                dropped += 1
            slowest = max(slowest, time.perf_counter() - start)
            if slowest > 0.1:
                break
        self.assertLess(slowest, 0.1, "seconds of the slowest report_step")
        self.assertGreater(sent, 0)
        self.assertGreater(dropped, 0, "the agent never reads: the socket must fill up")
        delivered = 0
        while (line := self.agent.receive(0)) != b"":
            self.assertEqual(line, PLAIN_STEP_LINE, "a message is delivered whole or not at all")
            delivered += 1
        self.assertEqual(delivered, sent)
        self.assertTrue(self.trainer.report_step(**PLAIN_STEP), "sends again once read")

    def test_agent_gone_fails_the_send_quietly(self):
        self.agent.hang_up()
        self.assertFalse(self.trainer.report_step(**PLAIN_STEP))
        self.assertFalse(self.trainer.checkpointed())
        self.assertFalse(self.trainer.checkpoint_requested())


class ExampleRun:
    """examples/train_ddp.py in a subprocess, under a fake agent unless agent=False."""

    def __init__(self, checkpoint, *extra_args, agent=True):
        self.agent = FakeAgent() if agent else None
        environment = dict(os.environ, PYTHONPATH=PYTHON_DIR, OMP_NUM_THREADS="1")
        for name in ("POLLUX_AGENT_SOCKET", "RANK", "WORLD_SIZE"):
            environment.pop(name, None)
        if agent:
            environment["POLLUX_AGENT_SOCKET"] = self.agent.path
        self.process = subprocess.Popen(
            [sys.executable, EXAMPLE, "--checkpoint", checkpoint, *extra_args],
            env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.output = ""
        self.last_step = None  # the fields of the latest step message received
        self.lengths = []      # the `length` messages received
        self._reader = threading.Thread(target=self._read_output)
        self._reader.start()

    def _read_output(self):
        self.output = self.process.stdout.read()

    def steps(self, count):
        """The next `count` step messages, as field dicts."""
        steps = []
        while len(steps) < count:
            line = self.agent.receive(timeout=30)
            if not line:
                raise AssertionError("the trainer stopped reporting:\n" + self.finish()[1])
            if line.startswith(b"step "):
                steps.append(fields_of(line))
            elif line.startswith(b"length "):
                self.lengths.append(line)
        self.last_step = steps[-1]
        return steps

    def finish(self, timeout=60):
        """(exit status, output) once the script has exited."""
        try:
            status = self.process.wait(timeout)
        finally:
            self.process.kill()
            self._reader.join()
            self.process.stdout.close()
            if self.agent is not None:
                self.agent.close()
        return status, self.output


def step_config(step):
    return int(step["local_bsz"]), int(step["accum_steps"])


@unittest.skipUnless(HAVE_TORCH, "torch or sklearn not importable by " + sys.executable)
class ExampleScriptTest(unittest.TestCase):
    def setUp(self):
        directory = tempfile.TemporaryDirectory(prefix="pollux-example-test-")
        self.addCleanup(directory.cleanup)
        self.checkpoint = os.path.join(directory.name, "ckpt.pt")

    def checkpoint_after(self, run):
        """Asks for a checkpoint; the last step reported before the trainer says `checkpointed`."""
        run.agent.send("checkpoint\n")
        while (line := run.agent.receive(timeout=30)) != b"checkpointed\n":
            self.assertTrue(line.startswith(b"step "), line)
            run.last_step = fields_of(line)
        return run.last_step

    def test_applies_the_decision_checkpoints_and_resumes(self):
        first = ExampleRun(self.checkpoint, "--epochs", "100")
        first.agent.accept(timeout=30)
        self.assertEqual(first.agent.receive(timeout=30),
                         b"hello init_batch_size=32 max_batch_size=512 min_local_bsz=8 "
                         b"max_local_bsz=256 accumulation=0\n")
        before = first.steps(3)
        self.assertEqual({step_config(step) for step in before}, {(32, 0)})
        self.assertEqual([float(step["examples"]) for step in before], [32, 64, 96])
        self.assertEqual(first.lengths, [b"length epochs=100 examples_per_epoch=1497\n"])
        first.agent.send("decision batch_size=64 local_bsz=64 accum_steps=0 lr_scale=1.5\n")
        # Agreed at the next agreeing step (every 8th), applied from the next batch.
        after = [step for step in first.steps(20) if step_config(step) == (64, 0)]
        self.assertGreaterEqual(len(after), 5, "the decision applies within 8 steps")
        gaps = {float(b["examples"]) - float(a["examples"]) for a, b in zip(after, after[1:])}
        self.assertEqual(gaps, {64.0}, "each step takes local_bsz examples")
        last = self.checkpoint_after(first)
        status, output = first.finish()
        self.assertEqual(status, 143, output)
        saved = re.search(r"checkpointed at epoch 0, example (\d+)", output)
        self.assertIsNotNone(saved, output)
        examples = int(saved[1])
        self.assertEqual(float(last["examples"]), examples)

        second = ExampleRun(self.checkpoint, "--epochs", "100")
        second.agent.accept(timeout=30)
        second.agent.receive(timeout=30)
        resumed = second.steps(1)[0]
        self.assertEqual(step_config(resumed), (64, 0), "the same replicas keep the batch")
        self.assertEqual(float(resumed["examples"]), examples + 64)
        self.assertAlmostEqual(float(resumed["epochs"]), (examples + 64) / 1497, places=6)
        self.checkpoint_after(second)
        status, output = second.finish()
        self.assertEqual(status, 143, output)
        self.assertIn(f"resumed from {self.checkpoint} at epoch 0, example {examples} of 1497, "
                      f"with 1 worker(s)", output)

    def test_without_agent_trains_the_epochs_and_exits_0(self):
        run = ExampleRun(self.checkpoint, "--epochs", "2", "--workers", "2", agent=False)
        status, output = run.finish()
        self.assertEqual(status, 0, output)
        self.assertIn("epoch 1: batch 32,", output)
        self.assertRegex(output, r"final accuracy: 0\.\d+\n$")
        self.assertTrue(os.path.exists(self.checkpoint))


if __name__ == "__main__":
    unittest.main()
