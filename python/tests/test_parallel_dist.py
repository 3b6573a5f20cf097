# SPDX-License-Identifier: GPL-2.0-or-later
"""pollux.AdaptiveDataParallel with real torch.distributed (two gloo processes on CPU): the
same gradients and parameters as plain DistributedDataParallel, bit for bit, with ONE
all-reduce per step on agreeing steps too (DDP's is off there, and the noise, the stop flag
and the decision ride in Pollux's all-reduce of the gradients); one rank's checkpoint request
and rank 0's decision reach both ranks at the same step (the next agreeing one), and a
checkpoint taken there resumes on both.

The all-reduce count: torch.distributed's collectives are wrapped in each process to count
those Pollux makes during each backward (DDP's own, made in C++, are not visible there: on
an agreeing step DDP's require_backward_grad_sync is False, so it makes none; on the others
it makes its one, the model being one bucket, and Pollux none)."""

import os
import sys
import tempfile
import unittest

try:
    import torch
except ImportError:
    torch = None

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import pollux  # noqa: E402
from helpers import FakeTrainer, dataset, model, run_ranks  # noqa: E402

AGREE_EVERY = 2  # steps 0, 2, 4 ... carry the noise, the stop flag and the decision
INIT_BATCH = 8


def mse(output, target):
    return torch.nn.functional.mse_loss(output, target)


def counting_collectives():
    """Wraps torch.distributed's collectives; returns the list each call appends its name to."""
    import torch.distributed as dist
    calls = []
    for name in ("all_reduce", "broadcast", "all_gather", "barrier", "reduce"):
        original = getattr(dist, name)

        def counted(*args, _original=original, _name=name, **kwargs):
            calls.append(_name)
            return _original(*args, **kwargs)
        setattr(dist, name, counted)
    return calls


def same_as_plain_ddp(rank, world):
    calls = counting_collectives()
    loader = pollux.AdaptiveDataLoader(dataset(torch), pollux.BatchSizeLimits(INIT_BATCH, 64),
                                       seed=4, num_workers=2)
    plain = torch.nn.parallel.DistributedDataParallel(model(torch))
    plain_optimizer = torch.optim.SGD(plain.parameters(), lr=0.05, momentum=0.9)
    net = model(torch)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    trainer = FakeTrainer()
    wrapped = pollux.AdaptiveDataParallel(net, optimizer, loader=loader, trainer=trainer,
                                          agree_every=AGREE_EVERY)
    identical, per_step, sync_off = [], [], []
    for inputs, targets in loader:
        for target_model, target_optimizer in ((plain, plain_optimizer), (wrapped, optimizer)):
            target_optimizer.zero_grad()
            before = len(calls)
            mse(target_model(inputs), targets).backward()
            if target_model is wrapped:
                per_step.append(calls[before:])
                sync_off.append(not wrapped.require_backward_grad_sync)
        identical.append(all(torch.equal(a.grad, b.grad)
                             for a, b in zip(plain.parameters(), net.parameters())))
        plain_optimizer.step()
        optimizer.step()
    same_params = all(torch.equal(a, b) for a, b in zip(plain.parameters(), net.parameters()))
    return identical, same_params, per_step, sync_off, trainer.steps, wrapped.examples


def decide_and_stop(rank, world, directory):
    decision = pollux.Decision(batch_size=16, local_bsz=8, accum_steps=0, lr_scale=1.0)
    # rank 0's agent decides after its 3rd step; rank 1's wants a checkpoint after its 6th
    trainer = FakeTrainer(decide_at=3, decision=decision) if rank == 0 else \
        FakeTrainer(stop_at=6)
    loader = pollux.AdaptiveDataLoader(dataset(torch, 128), pollux.BatchSizeLimits(INIT_BATCH, 64),
                                       seed=4)
    net = model(torch)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.05)
    wrapped = pollux.AdaptiveDataParallel(net, optimizer, loader=loader, trainer=trainer,
                                          agree_every=AGREE_EVERY, lr_rule="sqrt")
    history = []
    path = os.path.join(directory, "ckpt.pt")
    for inputs, targets in loader:
        optimizer.zero_grad()
        mse(wrapped(inputs), targets).backward()
        optimizer.step()
        history.append((len(targets), wrapped.stop_requested))
        if wrapped.stop_requested:
            wrapped.checkpoint(path)
            break
    params = [p.detach().clone() for p in net.parameters()]
    # Both ranks resume from the checkpoint rank 0 wrote.
    resumed_net = model(torch)
    resumed = pollux.AdaptiveDataParallel(
        resumed_net, torch.optim.SGD(resumed_net.parameters(), lr=0.05),
        loader=pollux.AdaptiveDataLoader(dataset(torch, 128),
                                         pollux.BatchSizeLimits(INIT_BATCH, 64), seed=4),
        trainer=FakeTrainer())
    resumed.restore(path)
    restored = all(torch.equal(a, b) for a, b in zip(params, resumed_net.parameters()))
    return (history, [p.tolist() for p in params], trainer.checkpoints, restored,
            resumed.sampler.position, resumed.sampler.local_bsz)


class AdaptiveDataParallelTest(unittest.TestCase):
    def test_gradients_and_parameters_are_plain_ddps_with_one_all_reduce_a_step(self):
        for identical, same_params, per_step, sync_off, steps, examples in \
                run_ranks(same_as_plain_ddp):
            self.assertEqual(len(identical), 8)  # 64 examples, 2 x 4 a step
            self.assertTrue(all(identical), identical)
            self.assertTrue(same_params)
            # Agreeing steps (0, 2, 4, 6): Pollux's one all-reduce, DDP's off (no_sync); the
            # others: DDP's own (in C++, not seen here), none of Pollux's.
            self.assertEqual(per_step, [["all_reduce"], []] * (len(per_step) // 2))
            self.assertEqual(sync_off, [True, False] * (len(per_step) // 2))
            self.assertEqual(examples, 64)
            grad_sqr, grad_var = steps[-1][3], steps[-1][4]  # measured from the replicas
            self.assertIsNotNone(grad_var)
            self.assertGreater(grad_sqr + grad_var, 0)

    def test_rank_0s_decision_and_any_ranks_stop_reach_both_at_the_same_step(self):
        with tempfile.TemporaryDirectory() as directory:
            results = run_ranks(decide_and_stop, (directory,))
        (history0, params0, checkpoints0, restored0, position, local_bsz), \
            (history1, params1, checkpoints1, restored1, _, _) = results
        self.assertEqual(params0, params1)
        sizes = [size for size, _ in history0]
        self.assertEqual(sizes, [s for s, _ in history1])
        # Known to rank 0 after step 2 (its 3rd report), agreed in step 4 (3 agrees on
        # nothing), applied from step 5 on.
        self.assertEqual(sizes[:5], [4, 4, 4, 4, 4])
        self.assertEqual(sizes[5:], [8] * (len(sizes) - 5))
        stops = [stop for _, stop in history0]
        self.assertEqual(stops, [stop for _, stop in history1])
        self.assertEqual(stops.index(True), 6)  # wanted by rank 1 after step 5, agreed in 6
        self.assertEqual((checkpoints0, checkpoints1), (1, 1))  # each told its agent
        self.assertTrue(restored0 and restored1)
        self.assertEqual(len(sizes), 7)
        self.assertEqual((position, local_bsz), (5 * 8 + 2 * 16, 8))


if __name__ == "__main__":
    if torch is None:
        print("torch is not importable by", sys.executable, "- skipped")
        sys.exit(77)  # automake's SKIP
    unittest.main()
