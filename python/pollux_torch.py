# SPDX-License-Identifier: GPL-2.0-or-later
"""PyTorch's side of Pollux: gradient noise statistics for pollux-agent's `step` message, the
job's process group, the learning-rate rule and checkpoints.

The agent wants grad_sqr = |g|^2 (g: the true mean gradient) and grad_var = tr(Sigma) (Sigma:
the covariance of ONE example's gradient). Both come from K >= 2 gradient estimates G_1..G_K
of the same step, G_i the mean gradient over b_i examples: the per-replica gradients of a
data-parallel step, the micro-batches of gradient accumulation, or the two halves of one
batch. With B = sum b_i, G = sum b_i G_i / B (the whole batch's gradient) and independently
drawn examples,

    E|G_i|^2 = |g|^2 + tr(Sigma) / b_i        E|G|^2 = |g|^2 + tr(Sigma) / B

so with S = mean_i |G_i|^2 and h = mean_i 1/b_i (1/b for equal sizes), both unbiased:

    grad_var = (S - |G|^2) / (h - 1/B)        grad_sqr = |G|^2 - grad_var / B

This is the small-batch / large-batch estimator of McCandlish et al. 2018 ("An Empirical Model
of Large-Batch Training", appendix A.1), which AdaptDL's GradientNoiseScale also uses.

API
  noise_stats(grads, batch_sizes)       the estimator above, from K >= 2 flattened gradients
  noise_from_norms(mean_sqr, whole_sqr, local_size, replicas)
                                        the same from the mean of the |G_i|^2 and |G|^2 alone
  flat_gradient(grads, params)          one flat tensor of per-parameter gradients
  half_batch_backward(model, loss_fn, inputs, targets, grad_scale=1.0)
                                        a single replica's backward pass in two halves: leaves
                                        the whole batch's gradient in .grad, returns the loss
                                        and the two halves' noise_stats
  NoiseAverage                          exponential moving average of NoiseStats, clamped to
                                        what the agent accepts (both >= 0)
  init_process_group(backend=None)      joins the job's process group from torchrun's
                                        environment (pollux-agent sets it): gloo on CPU, nccl
                                        with CUDA; (rank, world_size), (0, 1) when alone
  lr_scale(batch_size, init_batch_size, rule, decision=None)
                                        the learning-rate factor of a batch size: "adascale"
                                        (the agent's decision.lr_scale), "sqrt" or "linear"
  save_checkpoint(path, state)          rank 0 writes torch.save(state) atomically; the
                                        previous checkpoint stays whole until the new one is
  load_checkpoint(path)                 the saved state, None if there is none; raises
                                        CheckpointError naming the file if it is unreadable

One estimate is noisy and grad_sqr is often negative when the noise dominates, but pollux-agent
only takes values >= 0: report NoiseAverage.value(), not a raw estimate. In a data-parallel
job each replica can call half_batch_backward on its own micro-batch (no extra communication)
and rank 0 reports its own average.
"""

import dataclasses
import math
import numbers
import os

import torch
import torch.distributed as dist

__all__ = ["NoiseStats", "noise_stats", "flat_gradient", "half_batch_backward", "NoiseAverage",
           "noise_from_norms", "init_process_group", "lr_scale", "LR_RULES", "save_checkpoint", "load_checkpoint",
           "CheckpointError"]

LR_RULES = ("adascale", "sqrt", "linear")


@dataclasses.dataclass(frozen=True)
class NoiseStats:
    """Per-example gradient statistics: grad_sqr = |g|^2, grad_var = tr(Sigma)."""

    grad_sqr: float
    grad_var: float


def noise_stats(grads, batch_sizes):
    """Unbiased NoiseStats from K >= 2 gradients of one step (see the module's doc).

    grads: flattened gradient tensors, grads[i] the mean gradient over batch_sizes[i] examples
    (an int: every gradient is over that many examples, e.g. local_bsz for per-replica
    gradients). Single estimates can be negative.
    """
    if isinstance(batch_sizes, numbers.Integral):
        batch_sizes = [batch_sizes] * len(grads)
    sizes = [int(size) for size in batch_sizes]
    if len(grads) < 2 or len(sizes) != len(grads) or min(sizes) < 1:
        raise ValueError("noise_stats needs >= 2 gradients, each over >= 1 example")
    total = sum(sizes)
    whole = sum(size * grad.double() for size, grad in zip(sizes, grads)) / total
    mean_sqr = sum(grad.double().square().sum() for grad in grads).item() / len(grads)
    whole_sqr = whole.square().sum().item()
    mean_inverse = sum(1.0 / size for size in sizes) / len(sizes)
    return _noise_from_moments(mean_sqr, whole_sqr, mean_inverse, total)


def noise_from_norms(mean_sqr, whole_sqr, local_size, replicas):
    """NoiseStats from replicas >= 2 gradients of local_size examples each, given only
    mean_sqr = mean_i |G_i|^2 and whole_sqr = |G|^2 (G their mean), as a data-parallel step
    can sum them in its own all-reduce (pollux_ddp)."""
    if replicas < 2 or local_size < 1:
        raise ValueError("noise_from_norms needs >= 2 replicas of >= 1 example each")
    return _noise_from_moments(mean_sqr, whole_sqr, 1.0 / local_size, local_size * replicas)


def _noise_from_moments(mean_sqr, whole_sqr, mean_inverse, total):
    grad_var = (mean_sqr - whole_sqr) / (mean_inverse - 1.0 / total)
    return NoiseStats(grad_sqr=whole_sqr - grad_var / total, grad_var=grad_var)


def flat_gradient(grads, params):
    """One flat tensor of per-parameter gradients (None, for an unused parameter, as zeros)."""
    return torch.cat([(torch.zeros_like(param) if grad is None else grad).reshape(-1)
                      for grad, param in zip(grads, params)])


def half_batch_backward(model, loss_fn, inputs, targets, grad_scale=1.0):
    """Backward pass over a batch in two halves, measuring the gradient noise on the way.

    loss_fn(model(x), y) must be a mean over the examples (reduction="mean"). Adds
    grad_scale times the whole batch's mean gradient to each parameter's .grad (as
    (loss * grad_scale).backward() would; use grad_scale = 1 / accum_steps when accumulating)
    and returns (the batch's mean loss as a float, noise_stats of the two halves). Halves of
    an odd batch differ by one example. Needs a batch of >= 2 examples.
    """
    size = len(inputs)
    if size < 2:
        raise ValueError("half_batch_backward needs a batch of >= 2 examples")
    params = [param for param in model.parameters() if param.requires_grad]
    halves = (slice(0, size // 2), slice(size // 2, size))
    sizes = [size // 2, size - size // 2]
    grads, loss = [], 0.0
    for half, half_size in zip(halves, sizes):
        half_loss = loss_fn(model(inputs[half]), targets[half])
        half_grads = torch.autograd.grad(half_loss, params, allow_unused=True)
        _accumulate(params, half_grads, grad_scale * half_size / size)
        grads.append(flat_gradient(half_grads, params))
        loss += half_loss.item() * half_size / size
    return loss, noise_stats(grads, sizes)


def _accumulate(params, grads, weight):
    """param.grad += weight * grad, as backward() accumulates."""
    with torch.no_grad():
        for param, grad in zip(params, grads):
            if grad is None:
                continue
            if param.grad is None:
                param.grad = grad.detach() * weight
            else:
                param.grad.add_(grad, alpha=weight)


class NoiseAverage:
    """Exponential moving average of NoiseStats (bias-corrected, as Adam's moments).

    smoothing: weight of the past at each update (0.95: about the last 20 steps count).
    value() clamps at 0 (after averaging, which keeps the average unbiased until then).
    """

    def __init__(self, smoothing=0.95):
        if not 0 <= smoothing < 1:
            raise ValueError("smoothing must be in [0, 1)")
        self.smoothing = smoothing
        self._sums = [0.0, 0.0]  # decayed sums of grad_sqr and grad_var
        self._weight = 0.0  # decayed count of updates: the sums' bias correction

    def update(self, stats):
        s = self.smoothing
        self._sums = [s * self._sums[0] + (1 - s) * stats.grad_sqr,
                      s * self._sums[1] + (1 - s) * stats.grad_var]
        self._weight = s * self._weight + (1 - s)

    def value(self):
        """The averaged NoiseStats, each >= 0; None before the first update."""
        if self._weight == 0:
            return None
        grad_sqr, grad_var = (max(total / self._weight, 0.0) for total in self._sums)
        return NoiseStats(grad_sqr=grad_sqr, grad_var=grad_var)

    def state_dict(self):
        return {"smoothing": self.smoothing, "sums": list(self._sums), "weight": self._weight}

    def load_state_dict(self, state):
        self.smoothing = state["smoothing"]
        self._sums = list(state["sums"])
        self._weight = state["weight"]


def init_process_group(backend=None):
    """Joins the job's process group through env:// (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT,
    as pollux-agent and torchrun set them). backend: "nccl" when CUDA is available, else
    "gloo". Returns (rank, world_size); without WORLD_SIZE, or with WORLD_SIZE=1, the process
    trains alone: (0, 1) and no group. Raises ValueError for a malformed environment.
    """
    world_size = _environment_int("WORLD_SIZE", 1, minimum=1)
    rank = _environment_int("RANK", 0, minimum=0)
    if rank >= world_size:
        raise ValueError(f"RANK={rank} is not below WORLD_SIZE={world_size}")
    if world_size == 1:
        return 0, 1
    if backend is None:
        backend = "nccl" if torch.cuda.is_available() else "gloo"
    if backend == "nccl":
        torch.cuda.set_device(_environment_int("LOCAL_RANK", 0, minimum=0) %
                              torch.cuda.device_count())
    if not dist.is_initialized():
        dist.init_process_group(backend, init_method="env://", rank=rank, world_size=world_size)
    return rank, world_size


def _environment_int(name, default, minimum):
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


def lr_scale(batch_size, init_batch_size, rule="adascale", decision=None):
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


class CheckpointError(RuntimeError):
    """A checkpoint that exists but cannot be read back."""


def save_checkpoint(path, state):
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
    if dist.is_initialized():
        dist.barrier()


def load_checkpoint(path, map_location="cpu"):
    """The state saved at PATH, None if there is no checkpoint. Raises CheckpointError naming
    the file when it is unreadable (the file is left as it is)."""
    if not os.path.exists(path):
        return None
    try:
        return torch.load(path, map_location=map_location)
    except Exception as error:  # torch.load raises many kinds for a damaged file
        raise CheckpointError(f"checkpoint {path} is unreadable ({error.__class__.__name__}: "
                              f"{error}); remove it to start afresh") from error
