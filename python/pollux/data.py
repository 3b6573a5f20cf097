# SPDX-License-Identifier: GPL-2.0-or-later
"""pollux.data: every rank's share of each step's batch, inside a real DataLoader, resumable
at any example.

pollux-agent changes a job's batch size (its decision: local_bsz per replica, accumulation
steps) and Slurm changes its number of replicas between restarts. ElasticSampler walks one
shuffled order of the data set per epoch and counts the examples the whole job has consumed
(its position); each micro-batch takes the next replicas x local_bsz examples of that order,
split between the ranks, so that a job resumed from a checkpoint with another number of
replicas or another batch size goes on from the same example: none is repeated or skipped.

AdaptiveBatchSampler is that walk as a torch.utils.data batch sampler; AdaptiveDataLoader is
a torch.utils.data.DataLoader over it (num_workers, pin_memory, collate_fn and the rest as
DataLoader takes them):

    limits = pollux.BatchSizeLimits(init_batch_size=128, max_batch_size=4096,
                                     min_local_bsz=16, max_local_bsz=256)
    loader = pollux.AdaptiveDataLoader(dataset, limits, num_workers=2, pin_memory=True)
    for epoch in loader.epochs(10):                # AdaptDL's remaining_epochs_until(10)
        for inputs, targets in loader:             # this rank's micro-batches
            ...

When the batch size changes. DataLoader's workers fetch batches ahead of the loop (up to
num_workers x prefetch_factor), so a batch already fetched keeps its size. AdaptiveDataLoader
counts the examples the loop has taken (not those fetched ahead) and, when a decision changes
the local batch size, ends its current DataLoader iterator after the batch the loop holds,
drops what was fetched ahead and starts a new iterator at the first example not yet taken:
the new size applies from the next batch, and nothing is repeated or skipped (the cost: the
workers' prefetch is refilled, once per change). The position in the checkpoint
(state_dict) is what the loop has taken. An AdaptiveBatchSampler in a plain DataLoader
(batch_sampler=) applies a new size from the next iterator (the next epoch) and counts what
it handed out, which runs ahead of the loop by the prefetched batches: resume from an
AdaptiveDataLoader's state for exactness.

The last micro-batch of an epoch takes what is left, split as evenly as the ranks allow.
When fewer examples than ranks are left, a rank whose share is empty gets the micro-batch's
first example as a stand-in, of weight 0 (pollux.AdaptiveDataParallel weighs each rank's
gradient by its real share: every example counts once, the stand-in not at all), so that no
rank has an empty batch and every rank takes part in the step.
"""

from __future__ import annotations

import collections
from typing import Any, Deque, Dict, Iterator, List, Optional, Sized, Tuple

import torch
import torch.utils.data

from pollux.limits import BatchSizeLimits
from pollux.protocol import Decision

__all__ = ["ElasticSampler", "AdaptiveBatchSampler", "AdaptiveDataLoader"]


class ElasticSampler:
    """One order per epoch (seeded), the position the job has reached in it, and each rank's
    share of the next micro-batch."""

    def __init__(self, dataset_size: int, shuffle: bool = True, seed: int = 0) -> None:
        if dataset_size < 1:
            raise ValueError("the data set is empty")
        self.dataset_size = int(dataset_size)
        self.shuffle = shuffle
        self.seed = int(seed)
        self.epoch = 0
        self.position = 0  # examples of this epoch the whole job has consumed
        self._order: Optional[List[int]] = None

    def order(self) -> List[int]:
        """The epoch's order of the data set's indices."""
        if self._order is None:
            if self.shuffle:
                generator = torch.Generator().manual_seed(self.seed + self.epoch)
                self._order = torch.randperm(self.dataset_size, generator=generator).tolist()
            else:
                self._order = list(range(self.dataset_size))
        return self._order

    def epoch_done(self) -> bool:
        """True once the epoch's every example is consumed."""
        return self.position >= self.dataset_size

    def batch_at(self, position: int, rank: int, replicas: int,
                 local_bsz: int) -> Tuple[List[int], int]:
        """(this rank's indices, the micro-batch's size over all ranks) of the micro-batch
        that starts at `position` of the epoch. Ranks take every replicas-th example of the
        micro-batch, starting at their rank, so sizes differ by one at most."""
        if not 0 <= rank < replicas or local_bsz < 1:
            raise ValueError(f"rank {rank} of {replicas} replicas, local_bsz {local_bsz}")
        size = min(replicas * local_bsz, self.dataset_size - position)
        batch = self.order()[position:position + size]
        return batch[rank::replicas], size

    def next_batch(self, rank: int, replicas: int, local_bsz: int) -> Tuple[List[int], int]:
        """batch_at() the position, and the position moves past it (StopIteration at the
        epoch's end)."""
        if self.epoch_done():
            raise StopIteration
        indices, size = self.batch_at(self.position, rank, replicas, local_bsz)
        self.position += size
        return indices, size

    def next_epoch(self) -> None:
        """Starts the next epoch at its first example."""
        self.epoch += 1
        self.position = 0
        self._order = None

    def state_dict(self) -> Dict[str, Any]:
        """Epoch, position and order, for a checkpoint."""
        return {"dataset_size": self.dataset_size, "shuffle": self.shuffle, "seed": self.seed,
                "epoch": self.epoch, "position": self.position}

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        """Puts back a state_dict() of a sampler over a data set of the same size."""
        if state["dataset_size"] != self.dataset_size:
            raise ValueError(f"the checkpoint's sampler walked a data set of "
                             f"{state['dataset_size']} examples, this one has "
                             f"{self.dataset_size}")
        if not 0 <= state["position"] <= self.dataset_size or state["epoch"] < 0:
            raise ValueError(f"the checkpoint's sampler state is out of range: {state}")
        self.shuffle, self.seed = state["shuffle"], state["seed"]
        self.epoch, self.position = state["epoch"], state["position"]
        self._order = None


class _Handed:
    """A micro-batch the sampler handed out: where it ends in the epoch, its size over all
    ranks and this rank's real indices (without a stand-in)."""

    __slots__ = ("end", "global_count", "indices")

    def __init__(self, end: int, global_count: int, indices: List[int]) -> None:
        self.end, self.global_count, self.indices = end, global_count, indices


class AdaptiveBatchSampler(torch.utils.data.Sampler):
    """A batch sampler (DataLoader's batch_sampler=) of this rank's micro-batches: the current
    decision's local_bsz (init_batch_size split over the replicas until the agent decides),
    through an ElasticSampler whose state belongs in the checkpoint. Iterating it walks the
    rest of the current epoch from the position reached."""

    def __init__(self, dataset_size: int, limits: BatchSizeLimits, shuffle: bool = True,
                 seed: int = 0, rank: Optional[int] = None,
                 replicas: Optional[int] = None) -> None:
        if not isinstance(limits, BatchSizeLimits):
            raise TypeError("limits must be a pollux.BatchSizeLimits")
        self.limits = limits
        self.rank, self.replicas = _rank_and_replicas(rank, replicas)
        self.elastic = ElasticSampler(dataset_size, shuffle, seed)
        self.local_bsz = max(1, limits.init_batch_size // self.replicas)
        self.accum_steps = 0
        self.global_count = 0             # size over all ranks of the last micro-batch taken
        self.local_count = 0              # this rank's real examples in it
        self.last_indices: List[int] = []  # the data set's indices of this rank's share
        self._handed: Deque[_Handed] = collections.deque()
        self._handed_position = 0         # where the next micro-batch handed out starts
        self.counts_taken = False         # True under AdaptiveDataLoader: position = taken
        self.layout = 0                   # bumped by set_rank and rewind: iterators restart
        # Called by AdaptiveDataLoader between steps (after the loop is done with a batch,
        # before the next is fetched): pollux.AdaptiveDataParallel's live changes.
        self.between_steps: Optional[Any] = None

    @property
    def init_batch_size(self) -> int:
        """The job's initial batch size (from its limits)."""
        return self.limits.init_batch_size

    @property
    def dataset_size(self) -> int:
        """Examples in the data set."""
        return self.elastic.dataset_size

    @property
    def epoch(self) -> int:
        """The current epoch (0 first)."""
        return self.elastic.epoch

    @property
    def position(self) -> int:
        """Examples of the epoch consumed over all ranks."""
        return self.elastic.position

    @property
    def batch_size(self) -> int:
        """Examples per optimizer step over all replicas."""
        return self.replicas * self.local_bsz * (self.accum_steps + 1)

    def set_decision(self, decision: Optional[Decision]) -> bool:
        """Applies an agent's decision (pollux.Decision): the next micro-batches are of its
        local_bsz (see the module's doc for when). A decision made for another number of
        replicas (it arrived before the resize that goes with it) is refused with ValueError
        and changes nothing. Returns True if the local batch size changed."""
        if decision is None:
            return False
        if decision.local_bsz < 1 or decision.accum_steps < 0:
            raise ValueError(f"decision {decision} has no usable batch")
        expected = self.replicas * decision.local_bsz * (decision.accum_steps + 1)
        if decision.batch_size != expected:
            raise ValueError(f"decision {decision} is not for {self.replicas} replicas "
                             f"(that batch would be {expected})")
        changed = decision.local_bsz != self.local_bsz
        self.local_bsz, self.accum_steps = decision.local_bsz, decision.accum_steps
        return changed

    def set_rank(self, rank: int, replicas: int) -> None:
        """A live change of the world size (pollux.elastic): this rank's share from the next
        micro-batch, at the same position. The batch goes back to init_batch_size over the
        new replicas until a decision for them (as after a restart with another number)."""
        if not 0 <= rank < replicas:
            raise ValueError(f"rank {rank} of {replicas} replicas")
        if replicas != self.replicas:
            self.local_bsz = max(1, self.limits.init_batch_size // replicas)
            self.accum_steps = 0
        self.rank, self.replicas = rank, replicas
        self.layout += 1

    def rewind(self, epoch: int, position: int) -> None:
        """Back to `position` of the current epoch (a step that a failure undid); nothing if
        the epoch has moved on. The undone micro-batch is no longer this rank's last one."""
        if epoch == self.elastic.epoch and 0 <= position <= self.elastic.position:
            self.elastic.position = position
            self.last_indices = []
        self.layout += 1

    def __iter__(self) -> Iterator[List[int]]:
        local_bsz = self.local_bsz
        self._handed.clear()
        self._handed_position = self.elastic.position
        while self._handed_position < self.elastic.dataset_size:
            indices, size = self.elastic.batch_at(self._handed_position, self.rank,
                                                  self.replicas, local_bsz)
            self._handed_position += size
            self._handed.append(_Handed(self._handed_position, size, indices))
            if not self.counts_taken:
                self.take()
            # A rank without a share trains on a stand-in of weight 0 (see the module's doc).
            yield indices if indices else self.elastic.order()[self._handed_position - size:
                                                               self._handed_position - size + 1]

    def take(self) -> None:
        """The loop has taken the oldest micro-batch handed out: the position moves past it."""
        handed = self._handed.popleft()
        self.elastic.position = handed.end
        self.global_count, self.last_indices = handed.global_count, handed.indices
        self.local_count = len(handed.indices)

    def __len__(self) -> int:
        """Micro-batches left in the epoch at the current local_bsz."""
        left = self.elastic.dataset_size - self.elastic.position
        per_batch = self.replicas * self.local_bsz
        return -(-left // per_batch)

    def epoch_done(self) -> bool:
        """True once the epoch's every example is consumed."""
        return self.elastic.epoch_done()

    def next_epoch(self) -> None:
        """Starts the next epoch."""
        self.elastic.next_epoch()

    def state_dict(self) -> Dict[str, Any]:
        """Position (what the loop has taken, under AdaptiveDataLoader) and batch
        configuration, for a checkpoint."""
        return {"sampler": self.elastic.state_dict(), "local_bsz": self.local_bsz,
                "accum_steps": self.accum_steps, "replicas": self.replicas}

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        """Resumes where the checkpoint was; the batch configuration carries over only to the
        same number of replicas (another goes back to init_batch_size until a decision)."""
        self.elastic.load_state_dict(state["sampler"])
        self._handed.clear()
        if state["replicas"] == self.replicas:
            self.local_bsz, self.accum_steps = state["local_bsz"], state["accum_steps"]


class AdaptiveDataLoader(torch.utils.data.DataLoader):
    """A torch.utils.data.DataLoader of this rank's micro-batches of `dataset` through an
    AdaptiveBatchSampler (its batch_sampler): sizes follow the agent's decisions, the position
    is part of the checkpoint. Other keyword arguments go to DataLoader (num_workers,
    pin_memory, collate_fn, persistent_workers, ...; not batch_size, shuffle, sampler,
    batch_sampler or drop_last)."""

    def __init__(self, dataset: Any, limits: BatchSizeLimits, shuffle: bool = True,
                 seed: int = 0, rank: Optional[int] = None, replicas: Optional[int] = None,
                 **dataloader_kwargs: Any) -> None:
        sampler = AdaptiveBatchSampler(len(dataset), limits, shuffle, seed, rank, replicas)
        sampler.counts_taken = True
        super().__init__(dataset, batch_sampler=sampler, **dataloader_kwargs)

    @property
    def sampler_state(self) -> AdaptiveBatchSampler:
        """The AdaptiveBatchSampler (the same as batch_sampler)."""
        return self.batch_sampler

    @property
    def limits(self) -> BatchSizeLimits:
        """The job's batch-size limits."""
        return self.batch_sampler.limits

    @property
    def rank(self) -> int:
        return self.batch_sampler.rank

    @property
    def replicas(self) -> int:
        return self.batch_sampler.replicas

    @property
    def local_bsz(self) -> int:
        return self.batch_sampler.local_bsz

    @property
    def accum_steps(self) -> int:
        return self.batch_sampler.accum_steps

    @property
    def global_batch_size(self) -> int:
        """Examples per optimizer step over all replicas."""
        return self.batch_sampler.batch_size

    @property
    def last_indices(self) -> List[int]:
        """The data set's indices of this rank's last micro-batch (a stand-in excluded)."""
        return self.batch_sampler.last_indices

    def set_decision(self, decision: Optional[Decision]) -> bool:
        """AdaptiveBatchSampler.set_decision: the new size from the next batch the loop takes."""
        return self.batch_sampler.set_decision(decision)

    def epochs(self, total: int) -> Iterator[int]:
        """The epochs still to train until `total` (AdaptDL's remaining_epochs_until)."""
        sampler = self.batch_sampler
        while sampler.epoch < total:
            yield sampler.epoch
            if sampler.epoch_done():
                sampler.next_epoch()

    def __iter__(self) -> Iterator[Any]:
        sampler = self.batch_sampler
        while not sampler.epoch_done():
            layout = (sampler.local_bsz, sampler.layout)
            iterator = super().__iter__()
            changed = False
            for batch in iterator:
                sampler.take()
                yield batch
                if sampler.between_steps is not None:
                    sampler.between_steps()
                # a decision or a live resize: restart after this batch
                if (sampler.local_bsz, sampler.layout) != layout:
                    changed = True
                    break
            if not changed:
                break
            if not self.persistent_workers:
                del iterator  # its workers stop here, their prefetched batches dropped

    def state_dict(self) -> Dict[str, Any]:
        """The sampler's state_dict(): what the loop has taken."""
        return self.batch_sampler.state_dict()

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        """The sampler's load_state_dict()."""
        self.batch_sampler.load_state_dict(state)


def _rank_and_replicas(rank: Optional[int], replicas: Optional[int]) -> Tuple[int, int]:
    if rank is None or replicas is None:
        import torch.distributed as dist
        joined = dist.is_available() and dist.is_initialized()
        rank = dist.get_rank() if joined else 0
        replicas = dist.get_world_size() if joined else 1
    if not 0 <= rank < replicas:
        raise ValueError(f"rank {rank} of {replicas} replicas")
    return rank, replicas
