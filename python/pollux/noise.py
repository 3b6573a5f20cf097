# SPDX-License-Identifier: GPL-2.0-or-later
"""pollux.noise: gradient noise statistics for pollux-agent's `step` message.

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

One estimate is noisy and grad_sqr is often negative when the noise dominates, but pollux-agent
only takes values >= 0: report NoiseAverage.value(), not a raw estimate. In a data-parallel
job pollux.AdaptiveDataParallel measures the noise from the replicas' gradients inside its
gradient all-reduce (noise_from_norms) and rank 0 reports the average.
"""

from __future__ import annotations


import dataclasses
import numbers
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import torch

__all__ = ["NoiseStats", "noise_stats", "flat_gradient", "half_batch_backward", "NoiseAverage",
           "noise_from_norms"]


@dataclasses.dataclass(frozen=True)
class NoiseStats:
    """Per-example gradient statistics: grad_sqr = |g|^2, grad_var = tr(Sigma)."""

    grad_sqr: float
    grad_var: float


def noise_stats(grads: Sequence[torch.Tensor],
                batch_sizes: Union[int, Sequence[int]]) -> NoiseStats:
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


def noise_from_norms(mean_sqr: float, whole_sqr: float, local_size: int,
                     replicas: int) -> NoiseStats:
    """NoiseStats from replicas >= 2 gradients of local_size examples each, given only
    mean_sqr = mean_i |G_i|^2 and whole_sqr = |G|^2 (G their mean), as a data-parallel step
    can sum them in its own all-reduce (pollux.AdaptiveDataParallel)."""
    if replicas < 2 or local_size < 1:
        raise ValueError("noise_from_norms needs >= 2 replicas of >= 1 example each")
    return _noise_from_moments(mean_sqr, whole_sqr, 1.0 / local_size, local_size * replicas)


def _noise_from_moments(mean_sqr, whole_sqr, mean_inverse, total):
    grad_var = (mean_sqr - whole_sqr) / (mean_inverse - 1.0 / total)
    return NoiseStats(grad_sqr=whole_sqr - grad_var / total, grad_var=grad_var)


def flat_gradient(grads: Sequence[Optional[torch.Tensor]],
                  params: Sequence[torch.Tensor]) -> torch.Tensor:
    """One flat tensor of per-parameter gradients (None, for an unused parameter, as zeros)."""
    return torch.cat([(torch.zeros_like(param) if grad is None else grad).reshape(-1)
                      for grad, param in zip(grads, params)])


def half_batch_backward(model: torch.nn.Module,
                        loss_fn: Callable[[Any, Any], torch.Tensor], inputs: Any, targets: Any,
                        grad_scale: float = 1.0) -> Tuple[float, NoiseStats]:
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

    def __init__(self, smoothing: float = 0.95) -> None:
        if not 0 <= smoothing < 1:
            raise ValueError("smoothing must be in [0, 1)")
        self.smoothing = smoothing
        self._sums = [0.0, 0.0]  # decayed sums of grad_sqr and grad_var
        self._weight = 0.0  # decayed count of updates: the sums' bias correction

    def update(self, stats: NoiseStats) -> None:
        """Adds one estimate."""
        s = self.smoothing
        self._sums = [s * self._sums[0] + (1 - s) * stats.grad_sqr,
                      s * self._sums[1] + (1 - s) * stats.grad_var]
        self._weight = s * self._weight + (1 - s)

    def value(self) -> Optional[NoiseStats]:
        """The averaged NoiseStats, each >= 0; None before the first update."""
        if self._weight == 0:
            return None
        grad_sqr, grad_var = (max(total / self._weight, 0.0) for total in self._sums)
        return NoiseStats(grad_sqr=grad_sqr, grad_var=grad_var)

    def state_dict(self) -> Dict[str, Any]:
        """The average's state, for a checkpoint."""
        return {"smoothing": self.smoothing, "sums": list(self._sums), "weight": self._weight}

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        """Puts back a state_dict()."""
        self.smoothing = state["smoothing"]
        self._sums = list(state["sums"])
        self._weight = state["weight"]
