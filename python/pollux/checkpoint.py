# SPDX-License-Identifier: GPL-2.0-or-later
"""pollux.checkpoint: atomic checkpoints written by rank 0 and read by every rank."""

from __future__ import annotations

import os
from typing import Any, Optional

import torch
import torch.distributed as dist

__all__ = ["CheckpointError", "save_checkpoint", "load_checkpoint"]


class CheckpointError(RuntimeError):
    """A checkpoint that exists but cannot be read back."""


def save_checkpoint(path: str, state: Any) -> None:
    """Rank 0 writes torch.save(state) to PATH.tmp, flushes it to disk and renames it over PATH,
    so PATH is always a whole checkpoint (the previous one until the new one is complete);
    every rank then waits for it (a barrier when a process group is up).
    """
    if not dist.is_initialized() or dist.get_rank() == 0:
        temporary = f"{path}.tmp"
        with open(temporary, "wb") as file:
            torch.save(state, file)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    if dist.is_initialized() and dist.get_world_size() > 1:
        dist.barrier()


def load_checkpoint(path: str, map_location: Any = "cpu") -> Optional[Any]:
    """The state saved at PATH, None if there is no checkpoint. Raises CheckpointError naming
    the file when it is unreadable (the file is left as it is)."""
    if not os.path.exists(path):
        return None
    try:
        return torch.load(path, map_location=map_location)
    except Exception as error:  # torch.load raises many kinds for a damaged file
        raise CheckpointError(f"checkpoint {path} is unreadable ({error.__class__.__name__}: "
                              f"{error}); remove it to start afresh") from error
