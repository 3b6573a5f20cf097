# SPDX-License-Identifier: GPL-2.0-or-later
"""pollux.AdaptiveDataParallel in one process (a gloo group of one): user code as written for
DDP, with its LR scheduler (StepLR's decay and Pollux's factor both apply), gradient
clipping, GradScaler's calls, gradient accumulation, a step GradScaler skips, the declared
length, and a checkpoint mid-epoch resumed with DataLoader workers at the next example.

GradScaler: torch 1.13 on CPU disables GradScaler(enabled=True) (it warns and scales by 1),
and its unscale_ needs CUDA; so its calls are tested on the disabled path, and the order
they impose (backward of a scaled loss, unscale, clip, step) with a real scale done by hand:
the loss times 1024, the gradients divided by 1024 before clipping, as unscale_ does. Both
must give the parameters of plain PyTorch doing the same without Pollux.
"""

import os
import sys
import tempfile
import unittest
import warnings

try:
    import torch
except ImportError:
    torch = None

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import pollux  # noqa: E402
from helpers import FakeTrainer, dataset, model  # noqa: E402

INIT_BATCH = 8


def setUpModule():
    os.environ.pop("WORLD_SIZE", None)
    os.environ.pop("RANK", None)
    pollux.init_process_group("gloo")


def tearDownModule():
    torch.distributed.destroy_process_group()


def mse(output, target):
    return torch.nn.functional.mse_loss(output, target)


def make(trainer=None, lr_rule="adascale", agree_every=8, scheduler=None, limits=None,
         num_workers=0, **kwargs):
    net = model(torch)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    lr_scheduler = scheduler(optimizer) if scheduler else None
    loader = pollux.AdaptiveDataLoader(
        dataset(torch), limits or pollux.BatchSizeLimits(INIT_BATCH, 64, accumulation=True),
        seed=3, num_workers=num_workers)
    wrapped = pollux.AdaptiveDataParallel(net, optimizer, lr_scheduler, loader=loader,
                                          trainer=trainer or FakeTrainer(), lr_rule=lr_rule,
                                          agree_every=agree_every, **kwargs)
    return net, optimizer, lr_scheduler, loader, wrapped


class ComposesWithUserCodeTest(unittest.TestCase):
    def test_steplr_decay_and_the_pollux_factor_both_apply(self):
        net, optimizer, scheduler, loader, wrapped = make(
            lr_rule="linear", scheduler=lambda o: torch.optim.lr_scheduler.StepLR(o, 2, 0.5))
        loader.set_decision(pollux.Decision(batch_size=16, local_bsz=16, accum_steps=0,
                                            lr_scale=1.0))
        self.assertEqual(wrapped.lr_factor, 2.0)  # linear rule: 16 / 8
        used, seen_by_scheduler = [], []
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            for inputs, targets in loader:
                optimizer.zero_grad()
                mse(wrapped(inputs), targets).backward()
                grads = [p.grad.clone() for p in net.parameters()]
                before = [p.detach().clone() for p in net.parameters()]
                optimizer.step()
                # SGD without momentum: the parameter moved by lr x grad, lr the one applied.
                moved = (before[0] - net[0].weight.detach()).sum() / grads[0].sum()
                used.append(round(moved.item(), 5))
                seen_by_scheduler.append(optimizer.param_groups[0]["lr"])
                scheduler.step()
        # The scheduler still sees its own wrapper of optimizer.step inside Pollux's.
        self.assertEqual([str(w.message) for w in warned if "lr_scheduler" in str(w.message)],
                         [])
        self.assertEqual(used, [0.2, 0.2, 0.1, 0.1])  # 0.1 x 0.5^(step // 2) x 2
        self.assertEqual(seen_by_scheduler, [0.1, 0.1, 0.05, 0.05])  # never the scaled rate
        self.assertEqual(scheduler.get_last_lr(), [0.025])

    def test_clipping_and_gradscaler_calls_give_what_plain_pytorch_gives(self):
        for real_scale in (None, 1024.0):
            net, optimizer, _, loader, wrapped = make()
            reference = model(torch)
            reference_optimizer = torch.optim.SGD(reference.parameters(), lr=0.1)
            scaler = torch.cuda.amp.GradScaler(enabled=False)
            for inputs, targets in loader:
                for target_model, target_optimizer in ((wrapped, optimizer),
                                                       (reference, reference_optimizer)):
                    target_optimizer.zero_grad()
                    loss = mse(target_model(inputs), targets)
                    if real_scale is None:
                        scaler.scale(loss).backward()
                        scaler.unscale_(target_optimizer)
                    else:  # what GradScaler does, with a real scale
                        (loss * real_scale).backward()
                        for parameter in target_model.parameters():
                            parameter.grad.div_(real_scale)
                    torch.nn.utils.clip_grad_norm_(target_model.parameters(), 0.05)
                    scaler.step(target_optimizer)
                    scaler.update()
            for got, expected in zip(net.parameters(), reference.parameters()):
                self.assertTrue(torch.allclose(got, expected, atol=1e-6), real_scale)
            self.assertEqual(wrapped.steps, 8)

    def test_a_step_gradscaler_skips_is_finished_at_the_next_forward(self):
        trainer = FakeTrainer()
        net, optimizer, _, loader, wrapped = make(trainer=trainer)
        batches = iter(loader)
        inputs, targets = next(batches)
        (mse(wrapped(inputs), targets) * float("inf")).backward()  # inf gradients: no step
        self.assertEqual(len(trainer.steps), 0)
        optimizer.zero_grad()
        inputs, targets = next(batches)
        mse(wrapped(inputs), targets).backward()
        self.assertEqual(len(trainer.steps), 1)  # the skipped step, counted and reported
        optimizer.step()
        self.assertEqual(len(trainer.steps), 2)
        self.assertEqual([step[2] for step in trainer.steps], [8, 16])
        self.assertTrue(all(torch.isfinite(p).all() for p in net.parameters()))

    def test_accumulation_with_the_loop_unchanged_averages_the_micro_batches(self):
        net, optimizer, _, loader, wrapped = make()
        loader.set_decision(pollux.Decision(batch_size=8, local_bsz=4, accum_steps=1,
                                            lr_scale=1.0))
        reference = model(torch)
        micro = []
        for index, (inputs, targets) in enumerate(loader):
            self.assertEqual(wrapped.accumulating, index % 2 == 1)  # mid-step
            optimizer.zero_grad()
            mse(wrapped(inputs), targets).backward()
            self.assertEqual(wrapped.accumulating, index % 2 == 0)
            optimizer.step()
            micro.append((inputs, targets))
            if index == 3:
                break
        self.assertEqual(wrapped.steps, 2)
        reference_optimizer = torch.optim.SGD(reference.parameters(), lr=0.1)
        for first, second in (micro[0:2], micro[2:4]):
            reference_optimizer.zero_grad()
            (mse(reference(first[0]), first[1]) / 2 + mse(reference(second[0]), second[1]) / 2
             ).backward()
            reference_optimizer.step()
        for got, expected in zip(net.parameters(), reference.parameters()):
            self.assertTrue(torch.allclose(got, expected, atol=1e-6))

    def test_alone_the_noise_comes_from_consecutive_steps(self):
        trainer = FakeTrainer()
        _, optimizer, _, loader, wrapped = make(trainer=trainer, agree_every=2)
        for inputs, targets in loader:
            optimizer.zero_grad()
            mse(wrapped(inputs), targets).backward()
            optimizer.step()
        # steps 1 and 2 give the first estimate, reported from the third step's report on
        self.assertIsNone(trainer.steps[1][4])
        self.assertIsNotNone(trainer.steps[2][4])
        # |G1 - G2|^2 > 0: the variance is positive (a biased |G|^2 made it 0, clamped)
        self.assertGreater(trainer.steps[-1][4], 0)
        self.assertGreater(trainer.steps[-1][3], 0)

    def test_alone_the_noise_is_that_of_the_two_steps_gradients(self):
        _, optimizer, _, loader, wrapped = make(agree_every=2)
        for group in optimizer.param_groups:
            group["lr"] = 0.0  # both steps' gradients at the same parameters
        updates = []
        wrapped.noise.update = updates.append
        batches = []
        for inputs, targets in loader:
            optimizer.zero_grad()
            mse(wrapped(inputs), targets).backward()
            optimizer.step()
            batches.append((inputs, targets))
            if len(batches) == 3:  # the first agreeing step has no step before it
                break
        reference = model(torch)
        grads = []
        for inputs, targets in batches[1:]:
            reference.zero_grad()
            mse(reference(inputs), targets).backward()
            grads.append(torch.cat([p.grad.reshape(-1) for p in reference.parameters()]))
        mean_sqr = sum(float(g.double().square().sum()) for g in grads) / 2
        whole_sqr = float(((grads[0] + grads[1]).double() / 2).square().sum())
        expected = pollux.noise.noise_from_norms(mean_sqr, whole_sqr, INIT_BATCH, 2)
        self.assertEqual(len(updates), 1)
        for got, wanted in ((updates[0].grad_sqr, expected.grad_sqr),
                            (updates[0].grad_var, expected.grad_var)):
            self.assertAlmostEqual(got, wanted, delta=1e-6 * abs(wanted))


class LengthAndArgumentsTest(unittest.TestCase):
    def test_epochs_declare_the_jobs_length_with_the_data_set_size(self):
        trainer = FakeTrainer()
        wrapped = make(trainer=trainer, epochs=30)[-1]
        self.assertEqual(trainer.declared, [(30, None, 64)])  # 64 examples in dataset()
        self.assertTrue(wrapped.declared)
        trainer = FakeTrainer()
        make(trainer=trainer, examples=5000)
        self.assertEqual(trainer.declared, [(None, 5000, None)])
        trainer = FakeTrainer()
        self.assertFalse(make(trainer=trainer)[-1].declared)
        self.assertEqual(trainer.declared, [])  # nothing declared unless asked

    def test_a_bad_length_is_refused_and_training_goes_on_undeclared(self):
        import contextlib
        import io
        saved = os.environ.pop("POLLUX_AGENT_SOCKET", None)
        try:
            with contextlib.redirect_stderr(io.StringIO()) as written:
                net = model(torch)
                optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
                loader = pollux.AdaptiveDataLoader(dataset(torch), pollux.BatchSizeLimits(8))
                wrapped = pollux.AdaptiveDataParallel(net, optimizer, loader=loader, epochs=-1)
                self.assertFalse(wrapped.declared)
                inputs, targets = next(iter(loader))
                mse(wrapped(inputs), targets).backward()
                optimizer.step()
        finally:
            if saved is not None:
                os.environ["POLLUX_AGENT_SOCKET"] = saved
        self.assertIn("epochs=-1 is not a finite number > 0", written.getvalue())
        self.assertEqual(wrapped.examples, 8)
        self.assertIsInstance(wrapped, torch.nn.parallel.DistributedDataParallel)

    def test_bad_arguments_are_refused(self):
        with self.assertRaises(ValueError):
            make(lr_rule="cubic")
        with self.assertRaises(ValueError):
            make(agree_every=0)
        with self.assertRaises(TypeError):
            net = model(torch)
            pollux.AdaptiveDataParallel(net, torch.optim.SGD(net.parameters(), lr=0.1),
                                        loader=[1, 2])
        with self.assertRaises(ValueError):
            pollux.BatchSizeLimits(init_batch_size=8, max_batch_size=4)


class CheckpointTest(unittest.TestCase):
    def run_job(self, directory, stop_after=None, resume=False):
        """Two epochs through DataLoader workers; stops after `stop_after` steps if given."""
        scheduler = lambda o: torch.optim.lr_scheduler.StepLR(o, 3, 0.5)  # noqa: E731
        net, optimizer, _, loader, wrapped = make(
            scheduler=scheduler, num_workers=2, lr_rule="sqrt",
            limits=pollux.BatchSizeLimits(INIT_BATCH, 64))
        path = os.path.join(directory, "ckpt.pt")
        if resume:
            self.assertTrue(wrapped.restore(path))
        seen = []
        for epoch in loader.epochs(2):
            for index, (inputs, targets) in enumerate(loader):
                seen.append((epoch, loader.last_indices))
                optimizer.zero_grad()
                mse(wrapped(inputs), targets).backward()
                optimizer.step()
                wrapped.lr_scheduler.step()
                if wrapped.steps == 3:
                    loader.set_decision(pollux.Decision(16, 16, 0, 1.0))
                if stop_after is not None and wrapped.steps == stop_after:
                    wrapped.checkpoint(path)
                    return net, seen
        return net, seen

    def test_resumed_mid_epoch_with_workers_it_ends_as_an_uninterrupted_run(self):
        with tempfile.TemporaryDirectory() as directory:
            whole, _ = self.run_job(directory)
            _, before = self.run_job(directory, stop_after=5)
            resumed, after = self.run_job(directory, resume=True)
        for got, expected in zip(resumed.parameters(), whole.parameters()):
            self.assertTrue(torch.equal(got, expected))
        for epoch in (0, 1):
            indices = [i for e, batch in before + after if e == epoch for i in batch]
            self.assertEqual(sorted(indices), list(range(64)), epoch)


if __name__ == "__main__":
    if torch is None:
        print("torch is not importable by", sys.executable, "- skipped")
        sys.exit(77)  # automake's SKIP
    unittest.main()
