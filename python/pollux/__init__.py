# SPDX-License-Identifier: GPL-2.0-or-later
"""pollux: the training side of Pollux for Slurm.

A data-parallel PyTorch script becomes adaptive in a few lines (pollux-python(7)):

    import pollux
    rank, replicas = pollux.init_process_group()          # torchrun's environment, or alone
    limits = pollux.BatchSizeLimits(init_batch_size=32, max_batch_size=512,
                                     min_local_bsz=8, max_local_bsz=256)
    loader = pollux.AdaptiveDataLoader(train_set, limits, num_workers=2)
    model = pollux.AdaptiveDataParallel(net, optimizer, scheduler, loader=loader, epochs=30)

Submodules, one purpose each:
  pollux.protocol     Trainer, Decision: the pollux-agent channel (standard library only)
  pollux.limits       BatchSizeLimits: the job's batch sizes, given once (standard library)
  pollux.lr           lr_scale, LR_RULES: the learning-rate factor (standard library)
  pollux.noise        gradient noise statistics (NoiseStats, NoiseAverage, ...)
  pollux.distributed  init_process_group
  pollux.data         ElasticSampler, AdaptiveBatchSampler, AdaptiveDataLoader
  pollux.parallel     AdaptiveDataParallel (a DistributedDataParallel)
  pollux.checkpoint   save_checkpoint, load_checkpoint, CheckpointError

`import pollux` needs only the standard library: the PyTorch parts load on first use
(pollux.AdaptiveDataParallel, ...), so the protocol works where torch is not installed.
"""

from __future__ import annotations

import importlib
from typing import Any, List

from pollux.limits import BatchSizeLimits
from pollux.lr import LR_RULES, lr_scale
from pollux.protocol import MAX_DECLARED, MAX_LINE, Decision, Trainer

_TORCH_NAMES = {
    "NoiseStats": "pollux.noise", "NoiseAverage": "pollux.noise",
    "noise_stats": "pollux.noise", "noise_from_norms": "pollux.noise",
    "flat_gradient": "pollux.noise", "half_batch_backward": "pollux.noise",
    "init_process_group": "pollux.distributed",
    "ElasticSampler": "pollux.data", "AdaptiveBatchSampler": "pollux.data",
    "AdaptiveDataLoader": "pollux.data",
    "AdaptiveDataParallel": "pollux.parallel",
    "save_checkpoint": "pollux.checkpoint", "load_checkpoint": "pollux.checkpoint",
    "CheckpointError": "pollux.checkpoint",
}

__all__ = ["BatchSizeLimits", "Decision", "Trainer", "MAX_LINE", "MAX_DECLARED", "LR_RULES",
           "lr_scale", "__version__"] + sorted(_TORCH_NAMES)


def _version() -> str:
    try:
        from importlib.metadata import PackageNotFoundError, version
        return version("pollux")
    except (ImportError, PackageNotFoundError):  # run from the source tree
        return "0+unknown"


__version__: str = _version()


def __getattr__(name: str) -> Any:
    """The PyTorch parts, imported on first use."""
    module = _TORCH_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'pollux' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> List[str]:
    return sorted(set(globals()) | set(_TORCH_NAMES))
