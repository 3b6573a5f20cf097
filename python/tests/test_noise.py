# SPDX-License-Identifier: GPL-2.0-or-later
"""pollux.noise: gradient noise estimates against known truths, with real torch on CPU.

Tolerances: averaged over many draws (fixed seeds), the unbiased estimates must land within 5 %
of the true |g|^2 and tr(Sigma). The biased alternatives (|G|^2 for |g|^2, or the variance of
one estimate without the batch-size factor) are off by 30 % or more in every case here.
"""

import math
import os
import sys
import unittest

try:
    import torch
except ImportError:
    torch = None

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pollux
import ports
from helpers import process_context

if torch is not None:

    from pollux import NoiseStats

TOLERANCE = 0.05


def gaussian_gradients(generator, mean, covariance_root, groups, group_size, draws):
    """(draws, groups, dimension): means over group_size examples of N(mean, root root^T)."""
    noise = torch.randn(draws, groups, group_size, len(mean), generator=generator,
                        dtype=torch.float64)
    return (mean + noise @ covariance_root.T).mean(dim=2)


def average_stats(estimates):
    return (sum(stats.grad_sqr for stats in estimates) / len(estimates),
            sum(stats.grad_var for stats in estimates) / len(estimates))


class SyntheticGradientTest(unittest.TestCase):
    """Per-example gradients drawn from N(mu, Sigma) with known |mu|^2 and tr(Sigma)."""

    def setUp(self):
        self.generator = torch.Generator().manual_seed(1234)
        dimension = 20
        self.mean = torch.randn(dimension, generator=self.generator, dtype=torch.float64)
        self.mean *= 1.0 / self.mean.norm()  # |mu|^2 = 1
        self.root = torch.randn(dimension, dimension, generator=self.generator,
                                dtype=torch.float64) / math.sqrt(dimension)
        self.trace = (self.root @ self.root.T).trace().item()  # tr(Sigma), about 20

    def assertClose(self, estimate, truth, what):
        self.assertLess(abs(estimate - truth), TOLERANCE * truth,
                        f"{what}: estimate {estimate:.4f}, truth {truth:.4f}")

    def test_replicas_of_equal_size_converge_to_the_truth(self):
        local_bsz, replicas = 8, 4
        draws = gaussian_gradients(self.generator, self.mean, self.root, replicas, local_bsz, 4000)
        grad_sqr, grad_var = average_stats(
            [pollux.noise_stats(list(grads), local_bsz) for grads in draws])
        self.assertClose(grad_sqr, 1.0, "|g|^2")
        self.assertClose(grad_var, self.trace, "tr(Sigma)")
        biased = draws.mean(dim=1).square().sum(dim=1).mean().item()  # |G|^2: 1 + 20 / 32
        self.assertGreater(abs(biased - 1.0), 6 * TOLERANCE, "the check would catch a bias")

    def test_unequal_micro_batches_converge_to_the_truth(self):
        sizes = [3, 5, 8]
        parts = [gaussian_gradients(self.generator, self.mean, self.root, 1, size, 6000)
                 for size in sizes]
        draws = torch.cat(parts, dim=1)
        grad_sqr, grad_var = average_stats(
            [pollux.noise_stats(list(grads), sizes) for grads in draws])
        self.assertClose(grad_sqr, 1.0, "|g|^2")
        self.assertClose(grad_var, self.trace, "tr(Sigma)")

    def test_two_halves_of_one_batch_converge_to_the_truth(self):
        draws = gaussian_gradients(self.generator, self.mean, self.root, 2, 16, 8000)
        grad_sqr, grad_var = average_stats(
            [pollux.noise_stats(list(grads), 16) for grads in draws])
        self.assertClose(grad_sqr, 1.0, "|g|^2")
        self.assertClose(grad_var, self.trace, "tr(Sigma)")


class EstimatorTest(unittest.TestCase):
    def test_hand_computed_case(self):
        # G_1 = (1, 0), G_2 = (0, 1), 2 examples each: G = (.5, .5), mean |G_i|^2 = 1,
        # tr(Sigma) = (1 - .5) / (1/2 - 1/4) = 2, |g|^2 = .5 - 2 / 4 = 0.
        stats = pollux.noise_stats([torch.tensor([1.0, 0.0]), torch.tensor([0.0, 1.0])], 2)
        self.assertAlmostEqual(stats.grad_sqr, 0.0, places=12)
        self.assertAlmostEqual(stats.grad_var, 2.0, places=12)

    def test_equal_sizes_given_as_a_list_or_an_int_agree(self):
        grads = [torch.randn(7, generator=torch.Generator().manual_seed(seed)) for seed in range(3)]
        self.assertEqual(pollux.noise_stats(grads, 4),
                         pollux.noise_stats(grads, [4] * 3))

    def test_bad_arguments(self):
        grad = torch.ones(3)
        for grads, sizes in (([grad], 4), ([grad, grad], [4]), ([grad, grad], [4, 0])):
            with self.assertRaises(ValueError):
                pollux.noise_stats(grads, sizes)


def linear_regression(seed, size=256, features=5):
    generator = torch.Generator().manual_seed(seed)
    inputs = torch.randn(size, features, generator=generator)
    targets = inputs @ torch.randn(features, 1, generator=generator) \
        + torch.randn(size, 1, generator=generator)
    torch.manual_seed(seed)
    return torch.nn.Linear(features, 1), inputs, targets


def plain_gradient(model, loss_fn, inputs, targets):
    model.zero_grad(set_to_none=True)
    loss_fn(model(inputs), targets).backward()
    return pollux.flat_gradient([p.grad for p in model.parameters()],
                                      list(model.parameters()))


class HalfBatchBackwardTest(unittest.TestCase):
    def setUp(self):
        self.model, self.inputs, self.targets = linear_regression(seed=5)
        self.loss_fn = torch.nn.MSELoss()

    def current_gradient(self):
        return pollux.flat_gradient([p.grad for p in self.model.parameters()],
                                          list(self.model.parameters()))

    def test_leaves_the_whole_batch_gradient_and_loss(self):
        for size in (16, 17):  # halves of an odd batch differ by one example
            inputs, targets = self.inputs[:size], self.targets[:size]
            expected = plain_gradient(self.model, self.loss_fn, inputs, targets)
            self.model.zero_grad(set_to_none=True)
            loss, stats = pollux.half_batch_backward(self.model, self.loss_fn, inputs,
                                                           targets)
            torch.testing.assert_close(self.current_gradient(), expected)
            self.assertAlmostEqual(loss, self.loss_fn(self.model(inputs), targets).item(),
                                   places=5)
            self.assertTrue(math.isfinite(stats.grad_sqr) and stats.grad_var > 0)

    def test_accumulates_scaled_like_backward(self):
        first, second = slice(0, 8), slice(8, 20)
        expected = 0.5 * (plain_gradient(self.model, self.loss_fn, self.inputs[first],
                                         self.targets[first])
                          + plain_gradient(self.model, self.loss_fn, self.inputs[second],
                                           self.targets[second]))
        self.model.zero_grad(set_to_none=True)
        for part in (first, second):
            pollux.half_batch_backward(self.model, self.loss_fn, self.inputs[part],
                                             self.targets[part], grad_scale=0.5)
        torch.testing.assert_close(self.current_gradient(), expected)

    def test_needs_two_examples(self):
        with self.assertRaises(ValueError):
            pollux.half_batch_backward(self.model, self.loss_fn, self.inputs[:1],
                                             self.targets[:1])

    def test_converges_to_the_dataset_statistics(self):
        # Batches drawn with replacement from a finite dataset: g and Sigma are the mean and
        # the (population) covariance of its exact per-example gradients.
        per_example = torch.stack([
            plain_gradient(self.model, self.loss_fn, x.unsqueeze(0), y.unsqueeze(0))
            for x, y in zip(self.inputs, self.targets)]).double()
        true_sqr = per_example.mean(dim=0).square().sum().item()
        true_var = per_example.var(dim=0, unbiased=False).sum().item()
        generator = torch.Generator().manual_seed(11)
        estimates = []
        for _ in range(3000):
            batch = torch.randint(len(self.inputs), (16,), generator=generator)
            self.model.zero_grad(set_to_none=True)
            estimates.append(pollux.half_batch_backward(
                self.model, self.loss_fn, self.inputs[batch], self.targets[batch])[1])
        grad_sqr, grad_var = average_stats(estimates)
        self.assertLess(abs(grad_sqr - true_sqr), TOLERANCE * true_sqr, (grad_sqr, true_sqr))
        self.assertLess(abs(grad_var - true_var), TOLERANCE * true_var, (grad_var, true_var))

    def test_training_a_real_model_gives_finite_positive_statistics(self):
        optimizer = torch.optim.SGD(self.model.parameters(), lr=0.05)
        average = pollux.NoiseAverage(smoothing=0.9)
        generator = torch.Generator().manual_seed(3)
        values = []
        for _ in range(300):
            batch = torch.randint(len(self.inputs), (32,), generator=generator)
            optimizer.zero_grad(set_to_none=True)
            _, stats = pollux.half_batch_backward(self.model, self.loss_fn,
                                                        self.inputs[batch], self.targets[batch])
            optimizer.step()
            average.update(stats)
            values.append(average.value())
            # |g|^2 reaches 0 at the optimum, where the clamped average may sit.
            self.assertTrue(math.isfinite(values[-1].grad_sqr) and values[-1].grad_sqr >= 0)
            self.assertTrue(math.isfinite(values[-1].grad_var) and values[-1].grad_var > 0)
        self.assertGreater(values[10].grad_sqr, 0.0)
        # Near the optimum the mean gradient vanishes while the per-example noise stays.
        self.assertLess(values[-1].grad_sqr, 0.05 * values[10].grad_sqr)
        self.assertGreater(values[-1].grad_var, 0.2 * values[10].grad_var)


class NoiseAverageTest(unittest.TestCase):
    def test_none_before_the_first_update(self):
        self.assertIsNone(pollux.NoiseAverage().value())

    def test_bias_corrected_from_the_first_update(self):
        average = pollux.NoiseAverage(smoothing=0.99)
        average.update(NoiseStats(2.0, 30.0))
        self.assertEqual(average.value(), NoiseStats(2.0, 30.0))
        average.update(NoiseStats(4.0, 10.0))
        # weights 0.99 and 1 for the older and newer value, normalised
        self.assertAlmostEqual(average.value().grad_sqr, (0.99 * 2 + 4) / 1.99)
        self.assertAlmostEqual(average.value().grad_var, (0.99 * 30 + 10) / 1.99)

    def test_clamps_a_negative_average_at_zero(self):
        average = pollux.NoiseAverage(smoothing=0.5)
        average.update(NoiseStats(-1.0, 5.0))
        average.update(NoiseStats(0.5, -1.0))
        self.assertEqual(average.value().grad_sqr, 0.0)
        self.assertGreater(average.value().grad_var, 0.0)
        average.update(NoiseStats(-3.0, -9.0))
        self.assertEqual(average.value(), NoiseStats(0.0, 0.0))

    def test_state_dict_round_trip(self):
        average = pollux.NoiseAverage(smoothing=0.8)
        for stats in (NoiseStats(1.0, 2.0), NoiseStats(3.0, 1.0)):
            average.update(stats)
        restored = pollux.NoiseAverage()
        restored.load_state_dict(average.state_dict())
        self.assertEqual(restored.value(), average.value())
        restored.update(NoiseStats(5.0, 5.0))
        average.update(NoiseStats(5.0, 5.0))
        self.assertEqual(restored.value(), average.value())

    def test_smoothing_out_of_range(self):
        for smoothing in (-0.1, 1.0):
            with self.assertRaises(ValueError):
                pollux.NoiseAverage(smoothing)


def _group_worker(rank, world_size, port, directory, results):
    os.environ.update({"RANK": str(rank), "WORLD_SIZE": str(world_size),
                       "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)})
    joined = pollux.init_process_group("gloo")  # CPU tensors, on a GPU machine too
    total = torch.tensor([float(rank + 1)])
    torch.distributed.all_reduce(total)
    path = os.path.join(directory, "group.pt")
    pollux.save_checkpoint(path, {"written_by": rank, "step": 7})
    loaded = pollux.load_checkpoint(path)  # after the barrier: every rank reads rank 0's
    results.put((rank, joined, total.item(), loaded["written_by"], loaded["step"]))
    torch.distributed.destroy_process_group()


class ProcessGroupTest(unittest.TestCase):
    def setUp(self):
        self.saved = {name: os.environ.pop(name, None) for name in ("RANK", "WORLD_SIZE")}

    def tearDown(self):
        for name, value in self.saved.items():
            os.environ.pop(name, None)
            if value is not None:
                os.environ[name] = value

    def test_alone_without_the_environment(self):
        self.assertEqual(pollux.init_process_group(), (0, 1))  # a group of one, no network
        self.assertEqual(torch.distributed.get_world_size(), 1)
        torch.distributed.destroy_process_group()
        os.environ.update({"RANK": "0", "WORLD_SIZE": "1"})
        self.assertEqual(pollux.init_process_group(), (0, 1))
        torch.distributed.destroy_process_group()

    def test_malformed_environment(self):
        for rank, world in (("x", "2"), ("2", "2"), ("0", "0"), ("-1", "2")):
            os.environ.update({"RANK": rank, "WORLD_SIZE": world})
            with self.assertRaises(ValueError):
                pollux.init_process_group()

    def test_two_gloo_processes_join_reduce_and_share_a_checkpoint(self):
        import tempfile
        context = process_context()
        results = context.Queue()
        port = ports.rendezvous_port()
        with tempfile.TemporaryDirectory() as directory:
            processes = [context.Process(target=_group_worker,
                                         args=(rank, 2, port, directory, results))
                         for rank in range(2)]
            for process in processes:
                process.start()
            try:
                got = sorted(results.get(timeout=120) for _ in range(2))
            finally:  # a failed worker leaves the other waiting in gloo: never hang
                for process in processes:
                    process.join(10)
                    if process.is_alive():
                        process.kill()
            self.assertEqual([process.exitcode for process in processes], [0, 0])
        self.assertEqual(got, [(0, (0, 2), 3.0, 0, 7), (1, (1, 2), 3.0, 0, 7)])


class LrScaleTest(unittest.TestCase):
    def test_rules(self):
        decision = pollux.Decision(batch_size=512, local_bsz=128, accum_steps=0,
                                         lr_scale=1.7)
        self.assertEqual(pollux.lr_scale(512, 128, "adascale", decision), 1.7)
        self.assertEqual(pollux.lr_scale(512, 128, "adascale"), 1.0)  # no decision yet
        self.assertEqual(pollux.lr_scale(512, 128, "sqrt"), 2.0)
        self.assertEqual(pollux.lr_scale(512, 128, "linear"), 4.0)

    def test_bad_arguments(self):
        with self.assertRaises(ValueError):
            pollux.lr_scale(512, 128, "cubic")
        with self.assertRaises(ValueError):
            pollux.lr_scale(0, 128, "sqrt")


class CheckpointTest(unittest.TestCase):
    def setUp(self):
        import tempfile
        self.directory = tempfile.mkdtemp()
        self.path = os.path.join(self.directory, "ckpt.pt")

    def tearDown(self):
        import shutil
        shutil.rmtree(self.directory)

    def test_round_trip_and_no_checkpoint(self):
        self.assertIsNone(pollux.load_checkpoint(self.path))
        model = torch.nn.Linear(3, 2)
        pollux.save_checkpoint(self.path, {"model": model.state_dict(), "position": 42})
        state = pollux.load_checkpoint(self.path)
        self.assertEqual(state["position"], 42)
        self.assertTrue(torch.equal(state["model"]["weight"], model.weight))
        self.assertEqual(os.listdir(self.directory), ["ckpt.pt"])  # no temporary left

    def test_a_corrupt_checkpoint_is_a_clear_error_and_is_kept(self):
        with open(self.path, "wb") as file:
            file.write(b"not a checkpoint")
        with self.assertRaises(pollux.CheckpointError) as raised:
            pollux.load_checkpoint(self.path)
        self.assertIn(self.path, str(raised.exception))
        self.assertTrue(os.path.exists(self.path))

    def test_a_failed_save_leaves_the_previous_checkpoint_whole(self):
        pollux.save_checkpoint(self.path, {"position": 1})
        with self.assertRaises(Exception):
            pollux.save_checkpoint(self.path, {"position": 2, "bad": lambda: None})
        self.assertEqual(pollux.load_checkpoint(self.path)["position"], 1)


if __name__ == "__main__":
    if torch is None:
        print("torch is not importable by", sys.executable, "- skipped")
        sys.exit(77)  # automake's SKIP
    unittest.main()
