# SPDX-License-Identifier: GPL-2.0-or-later
"""pollux.limits: the job's batch-size limits, given once (standard library only).

The same limits go to the agent (the `hello` message: what sched/pollux may choose from) and
to the data loader (the batch size it starts with):

    limits = pollux.BatchSizeLimits(init_batch_size=32, max_batch_size=512,
                                     min_local_bsz=8, max_local_bsz=256)
    loader = pollux.AdaptiveDataLoader(train_set, limits, num_workers=2)
    model = pollux.AdaptiveDataParallel(net, optimizer, scheduler, loader=loader)
"""

from __future__ import annotations

import dataclasses
from typing import Optional

__all__ = ["BatchSizeLimits"]


@dataclasses.dataclass(frozen=True)
class BatchSizeLimits:
    """The batch sizes a job may train with.

    init_batch_size: the batch (over all replicas) its hyper-parameters were tuned for, used
    until the agent decides; max_batch_size: the largest batch it converges with (default
    init_batch_size: no growth); min_local_bsz and max_local_bsz: one replica's micro-batch
    bounds (max_local_bsz: what a GPU's memory holds; default max_batch_size); accumulation:
    whether Pollux may add gradient-accumulation steps.
    """

    init_batch_size: int
    max_batch_size: Optional[int] = None
    min_local_bsz: int = 1
    max_local_bsz: Optional[int] = None
    accumulation: bool = False

    def __post_init__(self) -> None:
        if self.max_batch_size is None:
            object.__setattr__(self, "max_batch_size", self.init_batch_size)
        if self.max_local_bsz is None:
            object.__setattr__(self, "max_local_bsz", self.max_batch_size)
        for name in ("init_batch_size", "max_batch_size", "min_local_bsz", "max_local_bsz"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}={value!r} is not an integer >= 1")
        if self.max_batch_size < self.init_batch_size:
            raise ValueError(f"max_batch_size={self.max_batch_size} is below "
                             f"init_batch_size={self.init_batch_size}")
        if self.max_local_bsz < self.min_local_bsz:
            raise ValueError(f"max_local_bsz={self.max_local_bsz} is below "
                             f"min_local_bsz={self.min_local_bsz}")
