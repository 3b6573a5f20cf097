# SPDX-License-Identifier: GPL-2.0-or-later
"""pollux.elastic with real torch.distributed (gloo processes on CPU): live changes of the
world size without restarting the ranks that stay.

- 2 -> 4 (two joiners started ahead, their weights different) and 4 -> 3 (rank 1 leaves,
  exit 0): parameters, optimizer state, LR scheduler, scaler, sampler position and progress
  bit-identical on every rank after the change, and the staying processes are the same.
- A rank SIGKILLed: the survivors re-form and go on (the minimum holds), a live one late to
  its collective among them, also when its answer to the leader's roll call comes late.
- The job's store hosted apart (pollux.store, POLLUX_STORE_HOSTED=1): rank 0 leaves, or is
  SIGKILLed, and the others go on with the first of them as rank 0; a new rank 0 does not
  admit a joiner that an earlier one answered; where rank 0 hosts the store, it may not leave.
- The agent names the leavers by where they run (a part's Slurm job; the job's workers on
  some nodes, rank 0's among them): those ranks leave, whatever their numbers.
- Every fallback (a joiner not ready, a joiner with the wrong token, a rendezvous error, a
  rank dying during the change, a broadcast error, below the minimum): the ranks left stop
  for a checkpoint (exit 143), rank 0 writes it, and it holds the state of the last step.
- No process hangs at exit: each test waits with a timeout and fails on a hung process; ranks
  that end at once exit 0 (none aborts in its roll call's thread)."""

import hashlib
import os
import signal
import sys
import tempfile
import time
import unittest
from unittest import mock

try:
    import torch
except ImportError:
    torch = None

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import pollux  # noqa: E402
import ports  # noqa: E402
from helpers import FakeTrainer, dataset, model, process_context  # noqa: E402

AGREE_EVERY = 2
TOKEN = "a-secret-only-the-job-sees"


class FakeScaler:
    """GradScaler's state interface (a real one is disabled on CPU), with a state that
    changes every step."""

    def __init__(self):
        self.scale = 1024.0

    def is_enabled(self):
        return False

    def update(self):
        self.scale *= 1.5

    def state_dict(self):
        return {"scale": self.scale}

    def load_state_dict(self, state):
        self.scale = state["scale"]


def digest(net, optimizer, scheduler, scaler, loader, wrapped):
    """SHA-256 digests of each part of the state, as a tuple of (part, digest)."""
    def hashed(*chunks):
        value = hashlib.sha256()
        for chunk in chunks:
            value.update(chunk if isinstance(chunk, bytes) else repr(chunk).encode())
        return value.hexdigest()[:16]
    momentum = [value.numpy().tobytes() for state in optimizer.state_dict()["state"].values()
                for value in state.values() if isinstance(value, torch.Tensor)]
    state = loader.state_dict()
    return (("parameters", hashed(*(p.detach().numpy().tobytes() for p in net.parameters()))),
            ("optimizer", hashed(*momentum, optimizer.state_dict()["param_groups"])),
            ("scheduler", hashed(sorted(scheduler.state_dict().items()))),
            ("scaler", hashed(scaler.state_dict())),
            ("sampler", hashed(state["sampler"], state["local_bsz"], state["accum_steps"])),
            ("progress", hashed(wrapped.examples, wrapped.steps)))


def worker(role, rank, world, port, scenario, directory, results):
    """One process of a scenario: `role` "rank" (started with the job) or "joiner"."""
    os.environ.update({"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port),
                       "POLLUX_ELASTIC": "1", "POLLUX_JOIN_TOKEN": TOKEN,
                       "POLLUX_JOIN_TIMEOUT": str(scenario.get("join_timeout", 20)),
                       "POLLUX_RESIZE_TIMEOUT": str(scenario.get("resize_timeout", 20)),
                       "RANK": str(rank), "WORLD_SIZE": str(world), "OMP_NUM_THREADS": "1"})
    if scenario.get("hosted_store"):
        os.environ["POLLUX_STORE_HOSTED"] = "1"
    if role == "rank" and "places" in scenario:  # where Slurm runs it: job and node
        os.environ["SLURM_JOB_ID"], os.environ["SLURMD_NODENAME"] = scenario["places"][rank]
    torch.set_num_threads(1)
    key = f"{role}{rank}"
    if role == "joiner":
        os.environ["POLLUX_JOIN"] = "1"
        if scenario.get("bad_token") == rank:
            os.environ["POLLUX_JOIN_TOKEN"] = "a guess"
    from pollux import elastic
    elastic._FAULT = scenario.get("fault", {}).get(key)
    try:
        rank, world = pollux.init_process_group("gloo")
    except elastic.ResizeError as error:
        results.put((key, ("refused", str(error))))
        return
    torch.manual_seed(100 + rank if role == "joiner" else 7)  # joiners start different
    net = model(torch)
    for parameter in net.parameters():
        parameter.data.normal_(generator=torch.Generator().manual_seed(
            100 + rank if role == "joiner" else 7))
    optimizer = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.5)
    scaler = FakeScaler()
    loader = pollux.AdaptiveDataLoader(dataset(torch, 512), pollux.BatchSizeLimits(16, 64),
                                       seed=3, num_workers=scenario.get("num_workers", 0))
    wrapped = pollux.AdaptiveDataParallel(net, optimizer, scheduler, loader=loader,
                                          scaler=scaler,
                                          trainer=FakeTrainer(
                                              resize_at=scenario["request_at"],
                                              resize=scenario.get("agent_request")),
                                          agree_every=AGREE_EVERY,
                                          min_replicas=scenario.get("min_replicas"))
    wrapped.restore(os.path.join(directory, "never-read.pt"))
    pid = os.getpid()
    requested = False
    changed_at = wrapped.steps  # a joiner: the step of the change it joined
    changes = 0
    for _ in loader.epochs(100):
        for inputs, targets in loader:
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(wrapped(inputs), targets).backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), max_norm=5.0)
            optimizer.step()
            scheduler.step()
            scaler.update()
            if wrapped.stop_requested:
                path = os.path.join(directory, "ckpt.pt")
                wrapped.checkpoint(path)
                results.put((key, ("stopped", wrapped.rank, wrapped.steps,
                                   wrapped.resize_failed,
                                   digest(net, optimizer, scheduler, scaler, loader, wrapped))))
                sys.exit(143)
            if wrapped.steps == scenario.get("kill_at") and key == scenario.get("killed"):
                os.kill(os.getpid(), signal.SIGKILL)
            if wrapped.steps == scenario.get("kill_at") and key == scenario.get("slow"):
                time.sleep(scenario["slow_s"])  # alive, but late to the next collective
            if wrapped.steps >= scenario["request_at"] and not requested:
                requested = True
                if wrapped.rank == 0 and "request" in scenario:
                    wrapped.request_resize(**scenario["request"])
            if len(wrapped.resizes) != changes:
                # made between the steps: after the last step's check
                changes, changed_at = len(wrapped.resizes), wrapped.steps - 1
            if wrapped.steps >= max(scenario["check_at"], changed_at + 3) and \
                    wrapped.world_size == scenario.get("world_after", wrapped.world_size):
                results.put((key, ("checked", wrapped.rank, wrapped.world_size, pid,
                                   os.getpid(), len(wrapped.resizes),
                                   digest(net, optimizer, scheduler, scaler, loader,
                                          wrapped))))
                return


SCRATCH = None  # the scenarios' directories, removed with the module's tests


def setUpModule():
    global SCRATCH
    SCRATCH = tempfile.TemporaryDirectory(prefix="pollux-elastic-")


def tearDownModule():
    SCRATCH.cleanup()


def run_scenario(scenario, world, joiners=0, timeout=90):
    """The scenario's processes; returns ({key: result}, {key: exit code}, directory)."""
    context = process_context()
    results = context.Queue()
    port = ports.rendezvous_port()
    directory = tempfile.mkdtemp(dir=SCRATCH.name)
    store = start_store(port) if scenario.get("hosted_store") else None
    processes = {}
    for role, count in (("rank", world), ("joiner", joiners)):
        for rank in range(count):
            processes[f"{role}{rank}"] = context.Process(
                target=worker, args=(role, rank, world, port, scenario, directory, results))
    for process in processes.values():
        process.start()
    got, codes = {}, {}
    try:
        import queue
        import time
        deadline = time.monotonic() + timeout
        while any(p.is_alive() for p in processes.values()) and time.monotonic() < deadline:
            try:
                key, value = results.get(timeout=0.5)
                got[key] = value
            except queue.Empty:
                pass
        while not results.empty():
            key, value = results.get()
            got[key] = value
    finally:  # never hang the test: a process still running is a failure
        for key, process in processes.items():
            process.join(5)
            if process.is_alive():
                process.kill()
                process.join()
                codes[key] = "hung"
            else:
                codes[key] = process.exitcode
        if store is not None:
            store.terminate()
            store.wait(10)
            store.stdout.close()
    return got, codes, directory


def start_store(port):
    """`python3 -m pollux.store PORT`, as the job's launcher starts it, once it listens."""
    import subprocess
    environment = dict(os.environ, PYTHONPATH=os.path.dirname(HERE))
    store = subprocess.Popen([sys.executable, "-m", "pollux.store", str(port)],
                             stdout=subprocess.PIPE, text=True, env=environment)
    line = store.stdout.readline()
    if line.strip() != f"pollux.store: listening on port {port}":
        store.kill()
        raise RuntimeError(f"pollux.store did not start: {line!r}")
    return store


@unittest.skipIf(torch is None, "PyTorch is not installed")
class LiveChange(unittest.TestCase):
    def assert_same_state(self, got, keys, world):
        checked = [got[key] for key in keys]
        self.assertTrue(all(result[0] == "checked" for result in checked), got)
        self.assertEqual(sorted(result[1] for result in checked), list(range(world)), got)
        self.assertTrue(all(result[2] == world for result in checked), got)
        self.assertEqual(len({result[6] for result in checked}), 1,
                         f"states differ after the change: {got}")

    def test_grow_2_to_4_with_joiners_started_ahead(self):
        scenario = {"request_at": 3, "request": {"join": 2}, "check_at": 12, "world_after": 4}
        got, codes, _ = run_scenario(scenario, world=2, joiners=2)
        self.assertEqual(codes, {"rank0": None, "rank1": None, "joiner0": None,
                                 "joiner1": None} | {k: 0 for k in codes}, codes)
        self.assert_same_state(got, ["rank0", "rank1", "joiner0", "joiner1"], 4)
        self.assertEqual(got["rank0"][5], 1, "rank 0 saw one live change")

    def test_shrink_4_to_3_a_middle_rank_leaves(self):
        scenario = {"request_at": 3, "request": {"leave": [1]}, "check_at": 12, "world_after": 3,
                    "num_workers": 2}
        got, codes, _ = run_scenario(scenario, world=4)
        self.assertEqual(codes, {"rank0": 0, "rank1": 0, "rank2": 0, "rank3": 0}, codes)
        self.assertNotIn("rank1", got, "the leaver exits at the change")
        self.assert_same_state(got, ["rank0", "rank2", "rank3"], 3)
        self.assertEqual(sorted((got[k][1], k) for k in ("rank0", "rank2", "rank3")),
                         [(0, "rank0"), (1, "rank2"), (2, "rank3")])
        for key in ("rank0", "rank2", "rank3"):  # the same processes went on
            self.assertEqual(got[key][3], got[key][4])

    def test_survivors_reform_after_a_rank_is_killed(self):
        scenario = {"request_at": 10 ** 9, "check_at": 14, "kill_at": 5, "killed": "rank2",
                    "world_after": 2}
        got, codes, _ = run_scenario(scenario, world=3)
        self.assertEqual(codes["rank2"], -signal.SIGKILL, codes)
        self.assertEqual((codes["rank0"], codes["rank1"]), (0, 0), (codes, got))
        self.assert_same_state(got, ["rank0", "rank1"], 2)

    def test_survivors_wait_for_a_live_rank_late_to_its_collective(self):
        # Rank 1 comes to the next step 3 s after rank 3 died and rank 0 waits for it in the
        # all-reduce, while rank 2 sees the death at once and leads the recovery (the store
        # hosted apart): ranks 0 and 1 answered its roll call, so it waits for them.
        scenario = {"request_at": 10 ** 9, "check_at": 14, "kill_at": 5, "killed": "rank3",
                    "slow": "rank1", "slow_s": 3.0, "world_after": 3, "hosted_store": True}
        got, codes, _ = run_scenario(scenario, world=4)
        self.assertEqual(codes["rank3"], -signal.SIGKILL, codes)
        self.assertEqual((codes["rank0"], codes["rank1"], codes["rank2"]), (0, 0, 0),
                         (codes, got))
        self.assert_same_state(got, ["rank0", "rank1", "rank2"], 3)

    def test_survivors_wait_for_a_live_rank_whose_report_and_answer_are_late(self):
        # Rank 1 reports the failed collective and answers rank 0's roll call 1 s late (its
        # main thread holding the interpreter, as on a loaded host): rank 0, leading the
        # recovery, waits for it rather than leaving it out.
        scenario = {"request_at": 10 ** 9, "check_at": 14, "kill_at": 5, "killed": "rank3",
                    "fault": {"rank1": "stalled"}, "world_after": 3}
        got, codes, _ = run_scenario(scenario, world=4)
        self.assertEqual(codes["rank3"], -signal.SIGKILL, codes)
        self.assertEqual((codes["rank0"], codes["rank1"], codes["rank2"]), (0, 0, 0),
                         (codes, got))
        self.assert_same_state(got, ["rank0", "rank1", "rank2"], 3)

    def assert_fell_back(self, got, codes, directory, keys, why):
        for key in keys:
            self.assertEqual(codes[key], 143, (codes, got))
            self.assertEqual(got[key][0], "stopped", got)
        self.assertIn(why, got["rank0"][3] or "", got["rank0"])  # rank 0 knows why
        path = os.path.join(directory, "ckpt.pt")
        self.assertTrue(os.path.exists(path), "rank 0 wrote the checkpoint")
        state = pollux.load_checkpoint(path)
        self.assertEqual(state["steps"], got["rank0"][2])

    def test_fallback_joiner_not_ready(self):
        scenario = {"request_at": 3, "request": {"join": 1}, "check_at": 10 ** 9,
                    "join_timeout": 1}
        got, codes, directory = run_scenario(scenario, world=2)
        self.assert_fell_back(got, codes, directory, ["rank0", "rank1"], "not ready")

    def test_fallback_joiner_with_a_wrong_token_is_refused(self):
        scenario = {"request_at": 3, "request": {"join": 1}, "check_at": 10 ** 9,
                    "join_timeout": 3, "bad_token": 0}
        got, codes, directory = run_scenario(scenario, world=2, joiners=1)
        self.assertEqual(got["joiner0"][0], "refused", got)
        self.assert_fell_back(got, codes, directory, ["rank0", "rank1"], "not ready")

    def test_fallback_rendezvous_error(self):
        scenario = {"request_at": 3, "request": {"leave": [2]}, "check_at": 10 ** 9,
                    "resize_timeout": 2, "fault": {"rank1": "rendezvous"}}
        got, codes, directory = run_scenario(scenario, world=3)
        self.assertEqual(codes["rank2"], 0, codes)
        self.assert_fell_back(got, codes, directory, ["rank0", "rank1"], "generation")

    def test_fallback_rank_dies_during_the_change(self):
        scenario = {"request_at": 3, "request": {"leave": [2]}, "check_at": 10 ** 9,
                    "resize_timeout": 2, "fault": {"rank1": "die"}}
        got, codes, directory = run_scenario(scenario, world=3)
        self.assertEqual(codes["rank1"], 9, codes)
        self.assert_fell_back(got, codes, directory, ["rank0"], "arrived")

    def test_fallback_broadcast_error(self):
        scenario = {"request_at": 3, "request": {"join": 1}, "check_at": 10 ** 9,
                    "fault": {"joiner0": "die-in-broadcast"}}
        got, codes, directory = run_scenario(scenario, world=2, joiners=1)
        self.assertEqual(codes["joiner0"], 9, codes)
        self.assert_fell_back(got, codes, directory, ["rank0", "rank1"], "generation")

    def test_rank_0_leaves_where_the_store_is_hosted_apart(self):
        scenario = {"request_at": 3, "request": {"leave": [0]}, "check_at": 12,
                    "world_after": 3, "hosted_store": True}
        got, codes, _ = run_scenario(scenario, world=4)
        self.assertEqual(codes, {"rank0": 0, "rank1": 0, "rank2": 0, "rank3": 0}, codes)
        self.assertNotIn("rank0", got, "the leaver exits at the change")
        self.assert_same_state(got, ["rank1", "rank2", "rank3"], 3)
        self.assertEqual(sorted((got[k][1], k) for k in ("rank1", "rank2", "rank3")),
                         [(0, "rank1"), (1, "rank2"), (2, "rank3")])
        for key in ("rank1", "rank2", "rank3"):  # the same processes went on
            self.assertEqual(got[key][3], got[key][4])

    def test_the_agent_names_the_leavers_by_their_job_and_nodes(self):
        from pollux.protocol import Leavers
        places = [("7", "n1"), ("7", "n1"), ("8", "n2"), ("7", "n2")]  # job 8: a part
        scenario = {"request_at": 3, "agent_request": (Leavers("8"), 0), "check_at": 12,
                    "world_after": 3, "places": places}
        got, codes, _ = run_scenario(scenario, world=4)
        self.assertEqual(codes, {"rank0": 0, "rank1": 0, "rank2": 0, "rank3": 0}, codes)
        self.assertNotIn("rank2", got, "the part's worker exits at the change")
        self.assert_same_state(got, ["rank0", "rank1", "rank3"], 3)
        # job 7's workers on n1, rank 0 among them: the first that stays becomes rank 0
        scenario = {"request_at": 3, "agent_request": (Leavers("7", ("n1",)), 0),
                    "check_at": 12, "world_after": 2, "places": places, "hosted_store": True}
        got, codes, _ = run_scenario(scenario, world=4)
        self.assertEqual(codes, {"rank0": 0, "rank1": 0, "rank2": 0, "rank3": 0}, codes)
        self.assert_same_state(got, ["rank2", "rank3"], 2)
        self.assertEqual(sorted((got[k][1], k) for k in ("rank2", "rank3")),
                         [(0, "rank2"), (1, "rank3")])

    def test_survivors_reform_after_rank_0_is_killed_where_the_store_is_hosted_apart(self):
        scenario = {"request_at": 10 ** 9, "check_at": 14, "kill_at": 5, "killed": "rank0",
                    "world_after": 2, "hosted_store": True}
        got, codes, _ = run_scenario(scenario, world=3)
        self.assertEqual(codes["rank0"], -signal.SIGKILL, codes)
        self.assertEqual((codes["rank1"], codes["rank2"]), (0, 0), (codes, got))
        self.assert_same_state(got, ["rank1", "rank2"], 2)
        self.assertEqual((got["rank1"][1], got["rank2"][1]), (0, 1), got)

    def test_fallback_below_the_minimum(self):
        scenario = {"request_at": 10 ** 9, "check_at": 10 ** 9, "kill_at": 5,
                    "killed": "rank1", "min_replicas": 2}
        got, codes, directory = run_scenario(scenario, world=2)
        self.assert_fell_back(got, codes, directory, ["rank0"], "minimum")


EXITING_RANK = """
import torch, pollux
rank, world = pollux.init_process_group("gloo")
net = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
data = torch.utils.data.TensorDataset(torch.randn(64, 4), torch.randn(64, 1))
loader = pollux.AdaptiveDataLoader(data, pollux.BatchSizeLimits(16, 64))
model = pollux.AdaptiveDataParallel(net, optimizer, loader=loader)
for inputs, targets in loader:
    optimizer.zero_grad()
    torch.nn.functional.mse_loss(model(inputs), targets).backward()
    optimizer.step()
print(world, flush=True)
"""


@unittest.skipIf(torch is None, "PyTorch is not installed")
class InterpreterExit(unittest.TestCase):
    def test_ranks_exit_0_as_their_roll_call_threads_wait_in_the_store(self):
        # Two ranks that train an epoch and end at once, rank 0 hosting the store: each ends
        # its roll call's thread before the interpreter finalizes (a thread left waiting in
        # the store aborts the process: "terminate called without an active exception").
        import subprocess
        for attempt in range(3):
            port = ports.rendezvous_port()
            ranks = [subprocess.Popen(
                [sys.executable, "-c", EXITING_RANK], stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True,
                env=dict(os.environ, PYTHONPATH=os.path.dirname(HERE), POLLUX_ELASTIC="1",
                         MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                         WORLD_SIZE="2", OMP_NUM_THREADS="1")) for rank in range(2)]
            for rank, process in enumerate(ranks):
                out, err = process.communicate(timeout=60)
                self.assertEqual((process.returncode, out), (0, "2\n"),
                                 f"attempt {attempt}, rank {rank}: {err}")


class Rank0Handover(unittest.TestCase):
    def test_rank_0_may_leave_only_where_the_store_is_hosted_apart(self):
        from types import SimpleNamespace
        request = pollux.AdaptiveDataParallel.request_resize
        job = SimpleNamespace(_group=SimpleNamespace(hosted=False), _world=4, _rank=0,
                              _request=None)
        with self.assertRaisesRegex(ValueError, r"must be in 1\.\.3"):
            request(job, leave=[0])
        job._group.hosted = True
        request(job, leave=[0, 2])
        self.assertEqual(job._request[:2], ([0, 2], 0))
        with self.assertRaises(ValueError):
            request(job, leave=[0, 1, 2, 3])  # nobody left

    def test_a_new_rank_0_does_not_admit_a_joiner_an_earlier_one_answered(self):
        from pollux import elastic
        store = DictStore()
        for index, member in enumerate(("early", "late")):
            store.add(f"{elastic.PREFIX}joiners", 1)
            store.set(f"{elastic.PREFIX}join/{index}", elastic.json.dumps(
                {"member": member, "proof": elastic.proof(TOKEN.encode(), member)}))
        earlier = elastic.ElasticGroup(store, "gloo", 0, 2, TOKEN.encode(), hosted=True)
        self.assertEqual(earlier.ready_joiners(), ["early", "late"])
        earlier.admit({"generation": 1, "stay": [0, 1], "joiners": ["early"], "world": 3})
        successor = elastic.ElasticGroup(store, "gloo", 0, 2, TOKEN.encode(), generation=2,
                                         hosted=True)
        self.assertEqual(successor.ready_joiners(), ["late"])


class DictStore:
    """The few TCPStore calls ready_joiners and admit make, in a dict."""

    def __init__(self):
        self.values = {}

    def add(self, key, amount):
        self.values[key] = str(int(self.values.get(key, "0")) + amount)
        return int(self.values[key])

    def set(self, key, value):
        self.values[key] = value

    def get(self, key):
        return self.values[key].encode()


JOINER_ENVIRONMENT = {"POLLUX_JOIN": "1", "POLLUX_ELASTIC": "1", "RANK": "0", "WORLD_SIZE": "1"}


@unittest.skipIf(torch is None, "PyTorch is not installed")
class JoinerStartUp(unittest.TestCase):
    def test_a_joiner_imports_torch_dynamo_before_it_asks_to_join(self):
        """torch 2.x's first optimizer and DDP import torch._dynamo (about 5 s): a joiner does
        it before its join request, so that the running job does not wait for it."""
        from pollux import distributed, elastic
        events = []
        with mock.patch.dict(os.environ, JOINER_ENVIRONMENT), \
                mock.patch.object(distributed.importlib.util, "find_spec",
                                  side_effect=lambda name: name if name == "torch._dynamo"
                                  else None), \
                mock.patch.object(distributed.importlib, "import_module",
                                  side_effect=lambda name: events.append(("import", name))), \
                mock.patch.object(elastic, "start",
                                  side_effect=lambda *args: events.append(("join",)) or (3, 4)):
            self.assertEqual(distributed.init_process_group("gloo"), (3, 4))
        self.assertEqual(events, [("import", "torch._dynamo"), ("join",)])

    def test_a_joiner_whose_warm_up_fails_still_joins(self):
        from pollux import distributed, elastic
        with mock.patch.dict(os.environ, JOINER_ENVIRONMENT), \
                mock.patch.object(distributed.importlib.util, "find_spec",
                                  side_effect=lambda name: name), \
                mock.patch.object(distributed.importlib, "import_module",
                                  side_effect=ImportError("No module named 'sympy'")), \
                mock.patch.object(elastic, "start", return_value=(3, 4)):
            self.assertEqual(distributed.init_process_group("gloo"), (3, 4))


if __name__ == "__main__":
    unittest.main()
