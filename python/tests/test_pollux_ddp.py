# SPDX-License-Identifier: GPL-2.0-or-later
"""pollux_ddp with real torch.distributed (two gloo processes on CPU): the same parameters as
one process training on the whole batch, the gradient noise measured in DDP's own all-reduce,
one rank's checkpoint request and rank 0's decision seen by both ranks at the same step (the
next agreeing one: every AGREE_EVERY-th)."""

import os
import sys
import tempfile
import unittest

try:
    import torch
except ImportError:
    torch = None

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pollux_train
import ports

if torch is not None:
    import pollux_data
    import pollux_ddp
    import pollux_torch

STEPS = 6
INIT_BATCH = 8
AGREE_EVERY = 2  # steps 0, 2, 4 carry the noise, the stop flag and the decision


class FakeTrainer:
    """pollux_train.Trainer's interface, with a decision and a checkpoint request at set steps."""

    def __init__(self, decide_at=None, decision=None, stop_at=None):
        self.steps = []
        self.declared = []
        self.decide_at, self._decision, self.stop_at = decide_at, decision, stop_at

    def declare_target(self, epochs=None, examples=None, examples_per_epoch=None):
        self.declared.append((epochs, examples, examples_per_epoch))
        return True

    def report_step(self, step_time, local_bsz, accum_steps, examples, epochs, grad_sqr=None,
                    grad_var=None):
        self.steps.append((local_bsz, accum_steps, examples, grad_sqr, grad_var))

    def decision(self):
        ready = self.decide_at is not None and len(self.steps) >= self.decide_at
        return self._decision if ready else None

    def checkpoint_requested(self):
        return self.stop_at is not None and len(self.steps) >= self.stop_at


def data():
    generator = torch.Generator().manual_seed(0)
    inputs = torch.randn(64, 5, generator=generator)
    targets = inputs @ torch.tensor([1.0, -2.0, 0.5, 3.0, 0.0]) + \
        0.3 * torch.randn(64, generator=generator)
    return torch.utils.data.TensorDataset(inputs, targets.unsqueeze(1))


def model():
    torch.manual_seed(1)
    return torch.nn.Linear(5, 1)


def mse(output, target):
    return torch.nn.functional.mse_loss(output, target)


def train(rank, replicas, trainer, directory=None):
    net = model()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.05)
    loader = pollux_data.AdaptiveDataLoader(data(), init_batch_size=INIT_BATCH, seed=4,
                                            rank=rank, replicas=replicas)
    wrapped = pollux_ddp.AdaptiveDataParallel(net, optimizer, loader, trainer, lr_rule="sqrt",
                                              agree_every=AGREE_EVERY)
    history = []
    batches = iter(loader)
    while len(trainer.steps) < STEPS:
        inputs, targets = next(batches)
        wrapped.train_step(mse, inputs, targets)
        history.append((loader.local_bsz, wrapped.stop_requested))
    if directory:
        wrapped.checkpoint(os.path.join(directory, "ckpt.pt"))
    return [p.detach().clone() for p in net.parameters()], history, wrapped


def worker(rank, port, scenario, directory, results):
    os.environ.update({"RANK": str(rank), "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1",
                       "MASTER_PORT": str(port)})
    pollux_torch.init_process_group()
    if scenario == "same":
        trainer = FakeTrainer()
    else:  # rank 0 decides 2 x 8 after its 3rd step; rank 1 wants a checkpoint after its 4th
        decision = pollux_train.Decision(batch_size=16, local_bsz=8, accum_steps=0,
                                         lr_scale=1.0)
        trainer = FakeTrainer(decide_at=3, decision=decision) if rank == 0 else \
            FakeTrainer(stop_at=4)
    params, history, wrapped = train(rank, 2, trainer, directory)
    results.put((rank, [p.tolist() for p in params], history, trainer.steps,
                 wrapped.examples))
    torch.distributed.destroy_process_group()


def run_pair(scenario, directory=None):
    import torch.multiprocessing as mp
    port = ports.rendezvous_port()
    context = mp.get_context("spawn")
    results = context.Queue()
    processes = [context.Process(target=worker, args=(rank, port, scenario, directory, results))
                 for rank in range(2)]
    for process in processes:
        process.start()
    try:
        got = sorted(results.get(timeout=120) for _ in range(2))
    finally:  # a worker that failed leaves the other waiting in gloo: never hang the test
        for process in processes:
            process.join(10)
            if process.is_alive():
                process.kill()
    return got


class AdaptiveDataParallelTest(unittest.TestCase):
    def test_two_replicas_train_as_one_process_on_the_whole_batch(self):
        (_, params0, _, steps0, examples), (_, params1, _, _, _) = run_pair("same")
        self.assertEqual(params0, params1)
        alone, _, _ = train(0, 1, FakeTrainer())  # same order, same global batches
        for got, expected in zip(params0, alone):
            self.assertTrue(torch.allclose(torch.tensor(got), expected, atol=1e-5))
        self.assertEqual(examples, STEPS * INIT_BATCH)
        self.assertEqual([step[0] for step in steps0], [4] * STEPS)
        grad_sqr, grad_var = steps0[-1][3], steps0[-1][4]
        self.assertIsNotNone(grad_var)  # measured from the two replicas' gradients
        self.assertGreater(grad_sqr + grad_var, 0)

    def test_rank_0s_decision_and_any_ranks_stop_reach_both_at_the_same_step(self):
        with tempfile.TemporaryDirectory() as directory:
            (_, params0, history0, _, _), (_, params1, history1, _, _) = \
                run_pair("decide", directory)
            saved = pollux_torch.load_checkpoint(os.path.join(directory, "ckpt.pt"))
        self.assertEqual(params0, params1)  # same batches on both ranks throughout
        self.assertEqual(history0, history1)
        sizes = [local_bsz for local_bsz, _ in history0]
        # Known to rank 0 after step 2, agreed in step 4 (3 agrees on nothing), set after it.
        self.assertEqual(sizes[:4], [4, 4, 4, 4])
        self.assertEqual(sizes[4:], [8] * (len(sizes) - 4))
        stops = [stop for _, stop in history0]
        self.assertEqual(stops.index(True), 4)  # wanted by rank 1 in step 4, agreed in it
        self.assertEqual(saved["loader"]["local_bsz"], 8)
        self.assertGreater(saved["loader"]["sampler"]["position"], 0)

    def test_epochs_declare_the_jobs_length_with_the_data_set_size(self):
        loader = pollux_data.AdaptiveDataLoader(data(), init_batch_size=8, rank=0, replicas=1)
        net = model()
        optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
        trainer = FakeTrainer()
        wrapped = pollux_ddp.AdaptiveDataParallel(net, optimizer, loader, trainer, epochs=30)
        self.assertEqual(trainer.declared, [(30, None, 64)])  # 64 examples in data()
        self.assertTrue(wrapped.declared)
        trainer = FakeTrainer()
        wrapped = pollux_ddp.AdaptiveDataParallel(net, optimizer, loader, trainer, examples=5000)
        self.assertEqual(trainer.declared, [(None, 5000, None)])
        trainer = FakeTrainer()
        self.assertFalse(pollux_ddp.AdaptiveDataParallel(net, optimizer, loader, trainer).declared)
        self.assertEqual(trainer.declared, [])  # nothing declared unless asked

    def test_a_bad_length_is_refused_and_training_goes_on_undeclared(self):
        import contextlib
        import io
        loader = pollux_data.AdaptiveDataLoader(data(), init_batch_size=8, rank=0, replicas=1)
        net = model()
        saved = os.environ.pop("POLLUX_AGENT_SOCKET", None)
        try:
            with pollux_train.Trainer(8, 64, 1, 64, accumulation=False) as trainer, \
                    contextlib.redirect_stderr(io.StringIO()) as written:
                wrapped = pollux_ddp.AdaptiveDataParallel(
                    net, torch.optim.SGD(net.parameters(), lr=0.1), loader, trainer, epochs=-1)
                self.assertFalse(wrapped.declared)
                inputs, targets = next(iter(loader))
                wrapped.train_step(mse, inputs, targets)
        finally:
            if saved is not None:
                os.environ["POLLUX_AGENT_SOCKET"] = saved
        self.assertIn("epochs=-1 is not a finite number > 0", written.getvalue())
        self.assertEqual(wrapped.examples, 8)

    def test_a_bad_rule_or_agreement_interval_is_refused(self):
        loader = pollux_data.AdaptiveDataLoader(data(), init_batch_size=8, rank=0, replicas=1)
        net = model()
        with self.assertRaises(ValueError):
            pollux_ddp.AdaptiveDataParallel(net, torch.optim.SGD(net.parameters(), lr=0.1),
                                            loader, lr_rule="cubic")
        with self.assertRaises(ValueError):
            pollux_ddp.AdaptiveDataParallel(net, torch.optim.SGD(net.parameters(), lr=0.1),
                                            loader, agree_every=0)


if __name__ == "__main__":
    if torch is None:
        print("torch is not importable by", sys.executable, "- skipped")
        sys.exit(77)  # automake's SKIP
    unittest.main()
