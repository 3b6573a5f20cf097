# SPDX-License-Identifier: GPL-2.0-or-later
"""pollux.data: every example once per epoch whatever the replicas and batch sizes, resumable
at any position with other ones; bad decisions and checkpoints refused."""

import os
import sys
import unittest

try:
    import torch
except ImportError:
    torch = None

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pollux

if torch is not None:
    from pollux.data import AdaptiveBatchSampler, AdaptiveDataLoader, ElasticSampler


def consume(sampler, replicas, local_bsz, micro_batches=None):
    """The indices the job consumes, in global order, for `micro_batches` (all: None)."""
    seen = []
    while not sampler.epoch_done() and micro_batches != 0:
        shares = []
        for rank in range(replicas):
            saved = sampler.position
            share, size = sampler.next_batch(rank, replicas, local_bsz)
            if rank < replicas - 1:
                sampler.position = saved  # every rank takes its share of the same micro-batch
            shares.append(share)
        batch = [None] * size
        for rank, share in enumerate(shares):
            batch[rank::replicas] = share
        seen.extend(batch)
        micro_batches = None if micro_batches is None else micro_batches - 1
    return seen


class ElasticSamplerTest(unittest.TestCase):
    def test_every_example_once_per_epoch_for_any_shape(self):
        for replicas, local_bsz in ((1, 7), (3, 5), (4, 1), (8, 16)):
            sampler = ElasticSampler(101, seed=3)
            seen = consume(sampler, replicas, local_bsz)
            self.assertEqual(seen, sampler.order())
            self.assertEqual(sorted(seen), list(range(101)))

    def test_ranks_shares_differ_by_one_at_most(self):
        sampler = ElasticSampler(10)
        sampler.position = 7  # 3 left for 4 ranks: one rank gets none
        sizes = []
        for rank in range(4):
            sampler.position = 7
            sizes.append(len(sampler.next_batch(rank, 4, 8)[0]))
        self.assertEqual(sizes, [1, 1, 1, 0])

    def test_resumed_with_other_replicas_and_batch_nothing_repeats_or_is_skipped(self):
        first = ElasticSampler(257, seed=11)
        before = consume(first, 2, 8, micro_batches=5)
        state = first.state_dict()
        resumed = ElasticSampler(257)
        resumed.load_state_dict(state)
        after = consume(resumed, 4, 3)
        self.assertEqual(before + after, first.order())

    def test_epochs_shuffle_differently_and_reproducibly(self):
        sampler = ElasticSampler(50, seed=5)
        first = list(sampler.order())
        sampler.next_epoch()
        self.assertNotEqual(sampler.order(), first)
        again = ElasticSampler(50, seed=5)
        self.assertEqual(again.order(), first)
        self.assertEqual(ElasticSampler(5, shuffle=False).order(), [0, 1, 2, 3, 4])

    def test_bad_states_and_arguments(self):
        sampler = ElasticSampler(10)
        with self.assertRaises(ValueError):
            sampler.load_state_dict(dict(ElasticSampler(11).state_dict()))
        state = sampler.state_dict()
        state["position"] = 12
        with self.assertRaises(ValueError):
            sampler.load_state_dict(state)
        with self.assertRaises(ValueError):
            sampler.next_batch(2, 2, 4)
        with self.assertRaises(ValueError):
            ElasticSampler(0)


def limits(init_batch_size):
    return pollux.BatchSizeLimits(init_batch_size=init_batch_size, max_batch_size=64)


def decision(batch_size, local_bsz, accum_steps=0):
    return pollux.Decision(batch_size=batch_size, local_bsz=local_bsz, accum_steps=accum_steps,
                           lr_scale=1.0)


def targets_of(batch):
    return batch[1].tolist()


def collate_pairs(items):
    """A collate_fn of its own (DataLoader's is not what the loader relies on)."""
    return torch.stack([item[0] for item in items]), torch.tensor([int(item[1]) for item in items])


class AdaptiveDataLoaderTest(unittest.TestCase):
    def setUp(self):
        inputs = torch.arange(30, dtype=torch.float32).reshape(10, 3)
        self.dataset = torch.utils.data.TensorDataset(inputs, torch.arange(10))

    def test_is_a_dataloader_whose_batches_follow_the_decision_from_the_next_batch(self):
        loader = AdaptiveDataLoader(self.dataset, limits(4), shuffle=False, rank=1, replicas=2)
        self.assertIsInstance(loader, torch.utils.data.DataLoader)
        self.assertIsInstance(loader.batch_sampler, AdaptiveBatchSampler)
        batches = iter(loader)
        inputs, targets = next(batches)  # 2 per rank until a decision
        self.assertEqual(targets.tolist(), [1, 3])
        self.assertEqual(inputs.shape, (2, 3))
        self.assertEqual(loader.batch_sampler.global_count, 4)
        self.assertTrue(loader.set_decision(decision(12, 3, accum_steps=1)))
        self.assertEqual(loader.global_batch_size, 12)
        self.assertEqual(next(batches)[1].tolist(), [5, 7, 9])
        self.assertEqual(list(batches), [])  # the epoch is done

    def test_an_empty_share_is_a_stand_in_of_weight_0(self):
        loader = AdaptiveDataLoader(self.dataset, limits(9), shuffle=False, rank=2, replicas=3)
        shares = []
        for batch in loader:
            shares.append((targets_of(batch), list(loader.last_indices),
                           loader.batch_sampler.local_count))
        # 9 examples, then 1 left for 3 ranks: rank 2 trains on a stand-in that counts 0.
        self.assertEqual(shares, [([2, 5, 8], [2, 5, 8], 3), ([9], [], 0)])
        self.assertEqual(loader.batch_sampler.global_count, 1)

    def test_a_step_undone_gives_its_examples_back_and_is_no_last_micro_batch(self):
        loader = AdaptiveDataLoader(self.dataset, limits(4), shuffle=False, rank=0, replicas=1)
        batches = iter(loader)
        self.assertEqual(targets_of(next(batches)), [0, 1, 2, 3])
        sampler = loader.batch_sampler
        self.assertEqual(targets_of(next(batches)), [4, 5, 6, 7])
        sampler.rewind(sampler.epoch, 4)  # a failure undid the second step
        self.assertEqual(loader.last_indices, [])
        self.assertEqual([targets_of(batch) for batch in loader], [[4, 5, 6, 7], [8, 9]])

    def test_epochs_resume_mid_epoch_from_the_state(self):
        loader = AdaptiveDataLoader(self.dataset, limits(4), seed=2, rank=0, replicas=1)
        seen = []
        for epoch in loader.epochs(3):
            for _, targets in loader:
                seen.append((epoch, targets.tolist()))
                if len(seen) == 4:
                    break
            if len(seen) == 4:
                break
        state = loader.state_dict()
        resumed = AdaptiveDataLoader(self.dataset, limits(4), rank=0, replicas=1)
        resumed.load_state_dict(state)
        for epoch in resumed.epochs(3):
            for _, targets in resumed:
                seen.append((epoch, targets.tolist()))
        per_epoch = {}
        for epoch, targets in seen:
            per_epoch.setdefault(epoch, []).extend(targets)
        self.assertEqual(sorted(per_epoch), [0, 1, 2])
        for epoch, targets in per_epoch.items():
            self.assertEqual(sorted(targets), list(range(10)), epoch)

    def test_a_decision_for_other_replicas_is_refused(self):
        loader = AdaptiveDataLoader(self.dataset, limits(4), rank=0, replicas=2)
        with self.assertRaises(ValueError):
            loader.set_decision(decision(32, 8))
        with self.assertRaises(ValueError):
            loader.set_decision(decision(0, 0))
        self.assertEqual(loader.local_bsz, 2)  # unchanged


class WorkersTest(unittest.TestCase):
    """A real DataLoader with num_workers=2 (they prefetch 2 batches each) and a collate_fn."""

    def setUp(self):
        inputs = torch.arange(400, dtype=torch.float32).reshape(100, 4)
        self.dataset = torch.utils.data.TensorDataset(inputs, torch.arange(100))

    def loader(self, **kwargs):
        return AdaptiveDataLoader(self.dataset, limits(8), seed=5, rank=0, replicas=1,
                                  num_workers=2, collate_fn=collate_pairs, pin_memory=False,
                                  **kwargs)

    def test_a_decision_mid_epoch_applies_from_the_next_batch_nothing_repeated_or_skipped(self):
        for persistent in (False, True):
            loader = self.loader(persistent_workers=persistent)
            sizes, seen = [], []
            for epoch in loader.epochs(2):
                for index, (inputs, targets) in enumerate(loader):
                    sizes.append((epoch, len(targets)))
                    seen.extend((epoch, target) for target in targets.tolist())
                    self.assertEqual(inputs[:, 0].tolist(), [4.0 * t for t in targets.tolist()])
                    if epoch == 0 and index == 2:
                        loader.set_decision(decision(16, 16))
            self.assertEqual(sizes[:4], [(0, 8), (0, 8), (0, 8), (0, 16)], persistent)
            for epoch in (0, 1):
                self.assertEqual(sorted(t for e, t in seen if e == epoch), list(range(100)))

    def test_the_state_counts_what_the_loop_took_not_what_workers_prefetched(self):
        loader = self.loader()
        taken = []
        for _, targets in loader:
            taken.extend(targets.tolist())
            if len(taken) == 24:
                break
        state = loader.state_dict()
        self.assertEqual(state["sampler"]["position"], 24)  # 3 batches, not the prefetched 7
        resumed = self.loader()
        resumed.load_state_dict(state)
        for _, targets in resumed:
            taken.extend(targets.tolist())
        self.assertEqual(sorted(taken), list(range(100)))

    def test_in_a_plain_dataloader_the_sampler_walks_the_epoch(self):
        sampler = AdaptiveBatchSampler(len(self.dataset), limits(8), seed=5, rank=0,
                                       replicas=1)
        loader = torch.utils.data.DataLoader(self.dataset, batch_sampler=sampler,
                                             num_workers=2, collate_fn=collate_pairs)
        self.assertEqual(len(loader), 13)
        seen = [target for _, targets in loader for target in targets.tolist()]
        self.assertEqual(sorted(seen), list(range(100)))
        self.assertTrue(sampler.epoch_done())


if __name__ == "__main__":
    if torch is None:
        print("torch is not importable by", sys.executable, "- skipped")
        sys.exit(77)  # automake's SKIP
    unittest.main()
