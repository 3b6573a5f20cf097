# SPDX-License-Identifier: GPL-2.0-or-later
"""Data for an adaptive job: every rank's share of each step's batch, resumable anywhere.

pollux-agent changes a job's batch size (its decision: local_bsz per replica, accumulation
steps) and Slurm changes its number of replicas between restarts. ElasticSampler walks one
shuffled order of the data set per epoch and counts the examples the whole job has consumed
(its position); each micro-batch takes the next replicas x local_bsz examples of that order,
split between the ranks, so that a job resumed from a checkpoint with another number of
replicas or another batch size goes on from the same example: none is repeated or skipped.

    loader = AdaptiveDataLoader(dataset, init_batch_size=128, shuffle=True, seed=0)
    loader.load_state_dict(checkpoint["loader"])           # after a restart
    for epoch in loader.epochs(10):                       # remaining_epochs_until(10)
        for inputs, targets in loader:                     # this rank's micro-batches
            ...                                            # loss over loader.global_count
        loader.set_decision(trainer.decision())            # from the next micro-batch on
    checkpoint["loader"] = loader.state_dict()

The last micro-batch of an epoch takes what is left, split as evenly as the ranks allow (a
rank may get none when fewer examples than ranks are left): weigh the loss by
len(batch) / loader.global_count so that every example counts once.
"""

import torch

__all__ = ["ElasticSampler", "AdaptiveDataLoader"]


class ElasticSampler:
    """One order per epoch (seeded), the position the job has reached in it, and each rank's
    share of the next micro-batch."""

    def __init__(self, dataset_size, shuffle=True, seed=0):
        if dataset_size < 1:
            raise ValueError("the data set is empty")
        self.dataset_size = int(dataset_size)
        self.shuffle = shuffle
        self.seed = int(seed)
        self.epoch = 0
        self.position = 0  # examples of this epoch the whole job has consumed
        self._order = None

    def order(self):
        """The epoch's order of the data set's indices."""
        if self._order is None:
            if self.shuffle:
                generator = torch.Generator().manual_seed(self.seed + self.epoch)
                self._order = torch.randperm(self.dataset_size, generator=generator).tolist()
            else:
                self._order = list(range(self.dataset_size))
        return self._order

    def epoch_done(self):
        return self.position >= self.dataset_size

    def next_batch(self, rank, replicas, local_bsz):
        """(this rank's indices, the micro-batch's size over all ranks) of the next micro-batch,
        and the position moves past it. Ranks take every replicas-th example of the
        micro-batch, starting at their rank, so sizes differ by one at most."""
        if not 0 <= rank < replicas or local_bsz < 1:
            raise ValueError(f"rank {rank} of {replicas} replicas, local_bsz {local_bsz}")
        if self.epoch_done():
            raise StopIteration
        size = min(replicas * local_bsz, self.dataset_size - self.position)
        batch = self.order()[self.position:self.position + size]
        self.position += size
        return batch[rank::replicas], size

    def next_epoch(self):
        self.epoch += 1
        self.position = 0
        self._order = None

    def state_dict(self):
        return {"dataset_size": self.dataset_size, "shuffle": self.shuffle, "seed": self.seed,
                "epoch": self.epoch, "position": self.position}

    def load_state_dict(self, state):
        if state["dataset_size"] != self.dataset_size:
            raise ValueError(f"the checkpoint's sampler walked a data set of "
                             f"{state['dataset_size']} examples, this one has "
                             f"{self.dataset_size}")
        if not 0 <= state["position"] <= self.dataset_size or state["epoch"] < 0:
            raise ValueError(f"the checkpoint's sampler state is out of range: {state}")
        self.shuffle, self.seed = state["shuffle"], state["seed"]
        self.epoch, self.position = state["epoch"], state["position"]
        self._order = None


class AdaptiveDataLoader:
    """This rank's micro-batches of `dataset` (indexable, items (input, target) tensors), of
    the current decision's local_bsz (init_batch_size split over the replicas until the agent
    decides), through an ElasticSampler whose state belongs in the checkpoint."""

    def __init__(self, dataset, init_batch_size, shuffle=True, seed=0, rank=None,
                 replicas=None):
        if init_batch_size < 1:
            raise ValueError("init_batch_size must be >= 1")
        self.dataset = dataset
        self.init_batch_size = int(init_batch_size)
        self.rank, self.replicas = _rank_and_replicas(rank, replicas)
        self.sampler = ElasticSampler(len(dataset), shuffle, seed)
        self.local_bsz = max(1, self.init_batch_size // self.replicas)
        self.accum_steps = 0
        self.global_count = 0  # size over all ranks of the last micro-batch
        self.last_indices = []  # the data set's indices of this rank's last micro-batch

    @property
    def batch_size(self):
        """Examples per optimizer step over all replicas."""
        return self.replicas * self.local_bsz * (self.accum_steps + 1)

    def set_decision(self, decision):
        """Applies an agent's decision (pollux_train.Decision) from the next micro-batch on; a
        decision made for another number of replicas (it arrived before the resize that goes
        with it) is refused with ValueError and changes nothing."""
        if decision is None:
            return
        if decision.local_bsz < 1 or decision.accum_steps < 0:
            raise ValueError(f"decision {decision} has no usable batch")
        expected = self.replicas * decision.local_bsz * (decision.accum_steps + 1)
        if decision.batch_size != expected:
            raise ValueError(f"decision {decision} is not for {self.replicas} replicas "
                             f"(that batch would be {expected})")
        self.local_bsz, self.accum_steps = decision.local_bsz, decision.accum_steps

    def epochs(self, total):
        """The epochs still to train until `total` (AdaptDL's remaining_epochs_until)."""
        while self.sampler.epoch < total:
            yield self.sampler.epoch
            if self.sampler.epoch_done():
                self.sampler.next_epoch()

    def __iter__(self):
        while not self.sampler.epoch_done():
            indices, self.global_count = self.sampler.next_batch(self.rank, self.replicas,
                                                                 self.local_bsz)
            self.last_indices = indices
            yield self._collate(indices)

    def _collate(self, indices):
        items = [self.dataset[index] for index in indices]
        if not items:  # fewer examples left than ranks: an empty batch of the right shape
            first = self.dataset[0]
            return tuple(torch.empty((0,) + tuple(part.shape), dtype=part.dtype)
                         for part in first)
        return tuple(torch.stack(parts) for parts in zip(*items))

    def state_dict(self):
        return {"sampler": self.sampler.state_dict(), "local_bsz": self.local_bsz,
                "accum_steps": self.accum_steps, "replicas": self.replicas}

    def load_state_dict(self, state):
        """Resumes where the checkpoint was; the batch configuration carries over only to the
        same number of replicas (another goes back to init_batch_size until a decision)."""
        self.sampler.load_state_dict(state["sampler"])
        if state["replicas"] == self.replicas:
            self.local_bsz, self.accum_steps = state["local_bsz"], state["accum_steps"]


def _rank_and_replicas(rank, replicas):
    if rank is None or replicas is None:
        import torch.distributed as dist
        joined = dist.is_available() and dist.is_initialized()
        rank = dist.get_rank() if joined else 0
        replicas = dist.get_world_size() if joined else 1
    if not 0 <= rank < replicas:
        raise ValueError(f"rank {rank} of {replicas} replicas")
    return rank, replicas
