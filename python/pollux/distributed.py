# SPDX-License-Identifier: GPL-2.0-or-later
"""pollux.distributed: the job's process group, from torchrun's environment."""

from __future__ import annotations

import importlib
import importlib.util
import os
from typing import Optional, Tuple

import torch
import torch.distributed as dist

from pollux.log import log

__all__ = ["init_process_group"]


def init_process_group(backend: Optional[str] = None,
                       elastic: Optional[bool] = None) -> Tuple[int, int]:
    """Joins the job's process group through env:// (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT,
    as pollux-agent and torchrun set them) and returns (rank, world_size). backend: "nccl"
    when CUDA is available, else "gloo". Without WORLD_SIZE, or with WORLD_SIZE=1, the process
    trains alone: (0, 1), in a group of one over an in-process store (no port, no network),
    so that pollux.AdaptiveDataParallel, a DistributedDataParallel, works alone too. Raises
    ValueError for a malformed environment. A group already initialised is kept.

    elastic (default: POLLUX_ELASTIC=1 in the environment, as pollux-agent sets it): the job
    can change its world size live (pollux.elastic): rank 0 hosts the job's store on
    MASTER_ADDR:MASTER_PORT for the job's life, alone too, and a process started with
    POLLUX_JOIN=1 joins the running job (it waits to be admitted; its rank and world size are
    the ones returned).
    """
    from pollux import elastic as live
    world_size = _environment_int("WORLD_SIZE", 1, minimum=1)
    rank = _environment_int("RANK", 0, minimum=0)
    if rank >= world_size:
        raise ValueError(f"RANK={rank} is not below WORLD_SIZE={world_size}")
    if dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    if backend is None:
        backend = "nccl" if torch.cuda.is_available() else "gloo"
    if backend == "nccl":
        torch.cuda.set_device(_environment_int("LOCAL_RANK", 0, minimum=0) %
                              torch.cuda.device_count())
    if live.joining():
        _warm_up()
    if live.wanted(elastic):
        return live.start(backend, rank, world_size)
    if world_size == 1:
        dist.init_process_group(backend, store=dist.HashStore(), rank=0, world_size=1)
        return 0, 1
    dist.init_process_group(backend, init_method="env://", rank=rank, world_size=world_size)
    return rank, world_size


def _warm_up() -> None:
    """A joiner's one-time start-up costs, paid before it asks to be admitted rather than in
    the running job's stall: its CUDA context where there is a GPU, and torch._dynamo (torch
    2.x), which the script's first optimizer and DDP import on first use (about 5 s)."""
    if torch.cuda.is_available():
        torch.empty(1, device="cuda")
    if importlib.util.find_spec("torch._dynamo") is None:
        return
    try:
        importlib.import_module("torch._dynamo")
    except Exception as error:  # a head start only: the script meets it where it imports it
        log(f"joiner warm-up: torch._dynamo not imported ({error.__class__.__name__}: {error})")


def _environment_int(name: str, default: int, minimum: int) -> int:
    text = os.environ.get(name, "")
    if text == "":
        return default
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{name}={text!r} is not an integer") from None
    if value < minimum:
        raise ValueError(f"{name}={value} is below {minimum}")
    return value
