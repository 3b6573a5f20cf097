# SPDX-License-Identifier: GPL-2.0-or-later
"""pollux.lr: the learning-rate factor of a batch size (standard library only).

pollux.AdaptiveDataParallel multiplies each parameter group's current learning rate (the
user's scheduler's value) by this factor for the optimizer step and puts the scheduler's
value back after it, so that both apply and the scheduler never sees the scaled rate.
"""

from __future__ import annotations

import math
from typing import Optional

from pollux.protocol import Decision

__all__ = ["LR_RULES", "lr_scale"]

LR_RULES = ("adascale", "sqrt", "linear")


def lr_scale(batch_size: int, init_batch_size: int, rule: str = "adascale",
             decision: Optional[Decision] = None) -> float:
    """The learning-rate factor for `batch_size` examples per step (the job's init_batch_size
    is 1): "adascale" takes the agent's decision.lr_scale (AdaScale's gain, 1 without a
    decision), "sqrt" sqrt(batch_size / init_batch_size), "linear" the ratio itself.
    """
    if rule not in LR_RULES:
        raise ValueError(f"unknown learning-rate rule {rule!r}: one of {', '.join(LR_RULES)}")
    if batch_size < 1 or init_batch_size < 1:
        raise ValueError("batch sizes must be >= 1")
    if rule == "adascale":
        return 1.0 if decision is None else float(decision.lr_scale)
    ratio = batch_size / init_batch_size
    return math.sqrt(ratio) if rule == "sqrt" else ratio
