# SPDX-License-Identifier: GPL-2.0-or-later
"""pollux.parallel: AdaptiveDataParallel, a DistributedDataParallel for Pollux.

The user's DDP loop stays as it is (loss.backward(), optimizer.step(), the LR scheduler,
GradScaler, gradient clipping); the model is wrapped with the optimizer and the loader:

    rank, replicas = pollux.init_process_group()
    limits = pollux.BatchSizeLimits(init_batch_size=128, max_batch_size=4096,
                                     min_local_bsz=16, max_local_bsz=256)
    loader = pollux.AdaptiveDataLoader(dataset, limits, num_workers=2)
    model = pollux.AdaptiveDataParallel(net, optimizer, scheduler, loader=loader, epochs=10)
    model.restore("ckpt.pt")                 # model, optimizer, scheduler, loader, progress
    for epoch in loader.epochs(10):
        for inputs, targets in loader:
            optimizer.zero_grad()
            loss_fn(model(inputs), targets).backward()
            optimizer.step()
            scheduler.step()
            if model.stop_requested:         # the agent asked for a checkpoint
                model.checkpoint("ckpt.pt"); sys.exit(143)

What it adds to DDP, and where:
- DDP's own all-reduce (its C++ reducer, untouched) averages the gradients of most steps.
  Every `agree_every`-th step (default 8: the first, the 9th...) DDP's all-reduce is off
  (no_sync) and Pollux averages the gradients itself at the end of the backward pass (a
  callback queued on autograd's engine, as DDP queues its own), in ONE all-reduce that
  also carries this replica's |G_i|^2 (the squared norm of its local gradient), its wish
  to stop (the agent's checkpoint request) and rank 0's current decision: every rank gets
  mean_i |G_i|^2 (the gradient noise of pollux.noise_from_norms, with |G|^2 of the
  averaged gradient), the same stop flag and rank 0's decision, so that all ranks stop or
  change batch size at the same step (the agreeing step), with no collective beyond the
  step's one. The gradients are averaged when loss.backward() returns, before clipping or
  GradScaler's unscale_, on every step. (The callback is queued from a hook on the model's
  output: a tensor, or tensors in lists, tuples or dicts, that the loss uses.) A checkpoint
  request waits at most agree_every - 1 steps. Alone (a group of one), the noise comes from
  two consecutive steps' gradients, as AdaptDL measures it.
- Each rank's gradient weighs by its share of the micro-batch (1/replicas when the shares
  are equal, exactly as DDP's average; otherwise its examples over the micro-batch's, a
  stand-in of an empty share 0): every example counts once at an epoch's short end.
- optimizer.step is wrapped: for the step, each parameter group's learning rate is its
  current one (the scheduler's) times Pollux's factor (pollux.lr_scale of the batch size by
  `lr_rule`), put back after it, so the scheduler's decay and the factor both apply and the
  scheduler never sees the scaled value. After the step, the step's time and noise go to
  the agent (pollux.Trainer) and, at an agreeing step, the agreement is applied: the stop
  flag (stop_requested) and the decision (the loader's batch size from its next batch).
  A step that GradScaler skips (inf or NaN gradients) is finished at the next forward.
- With gradient accumulation (limits.accumulation and a decision with accum_steps > 0),
  the micro-batches before a step's last skip DDP's all-reduce (no_sync), and
  optimizer.step and optimizer.zero_grad are no-ops on them, so an unchanged loop
  accumulates; the gradient is averaged over the micro-batches in the hook. Guard
  scheduler.step and GradScaler's unscale_/step/update with `if not model.accumulating:`.

epochs=N (or examples=X) declares the job's length to the agent, as AdaptDL's
remaining_epochs_until(N) states it: N epochs of the loader's data set. A bad value is
refused there (a message on stderr, `declared` False) and training goes on undeclared.
"""

import math
import os
import sys
import time
import types
import weakref
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch
import torch.distributed as dist

from pollux import elastic
from pollux.checkpoint import load_checkpoint, save_checkpoint
from pollux.data import AdaptiveBatchSampler, AdaptiveDataLoader
from pollux.log import log
from pollux.lr import LR_RULES, lr_scale
from pollux.noise import NoiseAverage, noise_from_norms
from pollux.protocol import Decision, Leavers, Trainer

__all__ = ["AdaptiveDataParallel", "AGREE_EVERY"]

AGREE_EVERY = 8
# Values appended to an agreeing step's gradients: |G_i|^2, stop, and rank 0's batch_size,
# local_bsz, accum_steps, lr_scale and the generation of a live change (pollux.elastic; 0:
# none) (a decision's integers are exact in float32 up to 2^24).
_EXTRA = 7


_PLAIN_ATTRIBUTES = frozenset((
    "examples", "require_backward_grad_sync", "_stop", "_steps", "_micro", "_step_examples",
    "_step_full", "_step_started", "_manual", "_sync_off", "_queued", "_agreeing", "_scale",
    "_whole_parts", "_extras", "_previous", "_decision", "_applied", "_lr_for", "_lr_factor",
    "_step_position", "_failure", "_pending_change", "_pending_decision", "_last_step_s"))


class Agreement:
    """What one agreeing all-reduce gave every rank (the same on each)."""

    def __init__(self, mean_sqr: float, whole_sqr: float, stop: bool,
                 decision: Optional[Decision], generation: int = 0) -> None:
        self.mean_sqr = mean_sqr    # mean_i |G_i|^2
        self.whole_sqr = whole_sqr  # |G|^2 of the averaged gradient
        self.stop = stop            # any rank wants a checkpoint
        self.decision = decision    # rank 0's, or None
        self.generation = generation  # rank 0's live change to that generation, or 0


class AdaptiveDataParallel(torch.nn.parallel.DistributedDataParallel):
    """A DistributedDataParallel over the job's process group (pollux.init_process_group)
    whose user code keeps loss.backward(), optimizer.step() and its LR scheduler (see the
    module's doc).

    module, optimizer, lr_scheduler: the user's; loader: the pollux.AdaptiveDataLoader (or
    its AdaptiveBatchSampler) that feeds the model, whose limits go to the agent; scaler: a
    torch.cuda.amp.GradScaler, if used (its scale is taken out of the noise statistics, its
    state goes into the checkpoint); trainer: the agent connection (default: a pollux.Trainer
    opened from the loader's limits, a no-op outside pollux-agent); lr_rule: one of
    pollux.LR_RULES; smoothing: of the noise average; agree_every: steps between agreeing
    steps; epochs or examples: the job's declared length. Other keyword arguments go to
    DistributedDataParallel (device_ids, find_unused_parameters, ...).
    """

    def __init__(self, module: torch.nn.Module, optimizer: torch.optim.Optimizer,
                 lr_scheduler: Optional[Any] = None, *, loader: Any,
                 scaler: Optional[Any] = None, trainer: Optional[Any] = None,
                 lr_rule: str = "adascale", smoothing: float = 0.95,
                 agree_every: int = AGREE_EVERY, epochs: Optional[float] = None,
                 examples: Optional[float] = None, min_replicas: Optional[int] = None,
                 **ddp_kwargs: Any) -> None:
        if lr_rule not in LR_RULES:
            raise ValueError(f"unknown learning-rate rule {lr_rule!r}: one of "
                             f"{', '.join(LR_RULES)}")
        if agree_every < 1:
            raise ValueError(f"agree_every must be >= 1, not {agree_every}")
        sampler = loader.batch_sampler if isinstance(loader, AdaptiveDataLoader) else loader
        if not isinstance(sampler, AdaptiveBatchSampler):
            raise TypeError("loader must be a pollux.AdaptiveDataLoader or AdaptiveBatchSampler")
        if not dist.is_initialized():
            raise RuntimeError("no process group: call pollux.init_process_group() first")
        super().__init__(module, **ddp_kwargs)
        world = dist.get_world_size(self.process_group)
        if sampler.replicas != world:
            raise ValueError(f"the loader splits batches over {sampler.replicas} replicas, "
                             f"the process group has {world}")
        self.optimizer = optimizer
        self.lr_scheduler = lr_scheduler
        self.scaler = scaler
        self.sampler = sampler
        self.lr_rule = lr_rule
        self.agree_every = agree_every
        self.noise = NoiseAverage(smoothing)
        self.examples = 0.0  # consumed since the job started, over all replicas
        self.trainer = trainer if trainer is not None else Trainer.from_limits(
            sampler.limits, elastic=elastic.current() is not None)
        self._world = world
        # Trainer outside pollux-agent is a no-op: skip the step's report altogether.
        self._reporting = getattr(self.trainer, "connected", True)
        self._rank = dist.get_rank(self.process_group)
        self._stop = False
        self._steps = 0               # steps of this process (optimizer steps, skipped ones too)
        self._micro = 0               # micro-batches forwarded in the current step
        self._step_examples = 0       # their examples over all ranks
        self._step_full = True        # every micro-batch of the step full and equal
        self._step_started: Optional[float] = None
        self._last_step_s = 0.0  # the last step's time, for the wait after a failure
        self._manual = False          # this step's gradients are averaged by Pollux
        self._sync_off = False        # Pollux turned DDP's all-reduce off (no_sync)
        self._queued = False          # the all-reduce is queued for the end of backward
        self._trained = [p for p in module.parameters() if p.requires_grad]
        self._agreeing = False        # this step's all-reduce carries the extras
        self._scale: Optional[float] = None  # the gradients' multiplier in the hook
        self._whole_parts: List[torch.Tensor] = []  # |G|^2 of an agreeing step
        self._extras: Optional[torch.Tensor] = None
        self._previous: Optional[torch.Tensor] = None  # alone: the last step's gradients
        self._decision: Optional[Decision] = None     # the latest from this rank's agent
        self._applied: Optional[Decision] = None      # the one the loader runs with
        self._lr_for: Any = None
        self._lr_factor = 1.0
        self._wrap_optimizer()
        # Live changes of the world size (pollux.elastic).
        self._ddp_kwargs = ddp_kwargs
        self._group = elastic.current()
        self.min_replicas = (min_replicas if min_replicas is not None else
                             int(os.environ.get("POLLUX_MIN_REPLICAS", "") or 1))
        self._request: Optional[Tuple[List[int], int, float]] = None  # rank 0's resize
        self._force_stop = False
        self._failure: Optional[str] = None    # a failed collective, as text (no traceback)
        self._fallen_back = False
        self._step_position = (0, 0)           # (epoch, position) where this step began
        # Why the last live change fell back to a checkpoint, None if none did.
        self.resize_failed: Optional[str] = None
        # (generation, old world, new world, stall seconds) of each live change.
        self.resizes: List[Tuple[int, int, int, float]] = []
        self._pending_change = 0      # an agreed live change, made before the next step
        self._pending_decision: Optional[Decision] = None
        sampler.between_steps = self._between_steps
        if self._group is not None:
            elastic._wrappers.add(self)
            self.register_comm_hook(None, self._elastic_hook)
        if self._group is not None and self._group.joined and self._group.generation > 0:
            self._sync_state()  # a joiner: rank 0's state, in memory
        # True once the job's length (epochs= or examples=) is declared to the agent.
        self.declared = False
        if epochs is not None or examples is not None:
            self.declared = self.trainer.declare_target(
                epochs=epochs, examples=examples,
                examples_per_epoch=sampler.dataset_size if epochs is not None else None)

    def __setattr__(self, name: str, value: Any) -> None:
        # The step's bookkeeping is plain data: nn.Module's __setattr__ (which looks for
        # parameters, buffers and submodules) costs microseconds a call, several a step.
        if name in _PLAIN_ATTRIBUTES:
            object.__setattr__(self, name, value)
        else:
            super().__setattr__(name, value)

    # -- what the user reads --------------------------------------------------------------

    @property
    def stop_requested(self) -> bool:
        """True from the agreeing step at which any rank's agent asked for a checkpoint (the
        same step on every rank): checkpoint() and exit."""
        return self._stop

    @property
    def accumulating(self) -> bool:
        """True while the current micro-batch is not its step's last (gradient accumulation):
        optimizer.step and zero_grad are no-ops then."""
        return 0 < self._micro <= self.sampler.accum_steps

    @property
    def lr_factor(self) -> float:
        """Pollux's learning-rate factor for the current batch size (1 at init_batch_size)."""
        return self._factor()

    @property
    def rank(self) -> int:
        """This process's rank now (a live change may change it; rank 0 stays 0 unless the
        store is hosted apart, see pollux.elastic)."""
        return self._rank

    @property
    def world_size(self) -> int:
        """The number of replicas now."""
        return self._world

    def request_resize(self, leave: Sequence[int] = (), join: int = 0) -> None:
        """Rank 0: change the world size live at the next agreeing step at which `join`
        joiners (processes started with POLLUX_JOIN=1) are ready: the ranks in `leave` exit
        0, the others keep running (rank 0 may leave only where the job's store is hosted
        apart, POLLUX_STORE_HOSTED=1: the first rank that stays becomes rank 0). A joiner not
        ready within POLLUX_JOIN_TIMEOUT seconds makes the job stop for a checkpoint instead
        (resize_failed says so). Other ranks' requests are ignored; without pollux.elastic, a
        RuntimeError."""
        if self._group is None:
            raise RuntimeError("live changes need pollux.init_process_group(elastic=True) "
                               "(POLLUX_ELASTIC=1)")
        leave = sorted(set(int(rank) for rank in leave))
        first = 0 if self._group.hosted else 1
        if any(not first <= rank < self._world for rank in leave):
            raise ValueError(f"ranks to leave must be in {first}..{self._world - 1}, not {leave}")
        if join < 0 or self._world - len(leave) + join < 1:
            raise ValueError("a live change must leave at least one rank")
        if self._rank == 0:
            self._request = (leave, int(join), time.monotonic())

    @property
    def steps(self) -> int:
        """Optimizer steps since the job started (restored from a checkpoint)."""
        return self._steps

    # -- forward, the gradient all-reduce, the optimizer step -----------------------------

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        """DDP's forward; a forward with gradients enabled is a micro-batch of the step."""
        if torch.is_grad_enabled():
            self._micro_batch()
        if self._fallen_back:  # a live change failed, no group is left: see _fall_back
            return self.module(*inputs, **kwargs)
        if not torch.is_grad_enabled():
            return super().forward(*inputs, **kwargs)
        output = super().forward(*inputs, **kwargs)
        if self._manual:
            self._queued = False
            _hook_outputs(output, self._on_output_grad)
        return output

    def _micro_batch(self) -> None:
        if self._pending_change:  # no AdaptiveDataLoader ran it between the steps
            self._between_steps()
        sampler = self.sampler
        accum_steps = sampler.accum_steps
        if self._micro > accum_steps:  # the last step's optimizer.step never came (GradScaler)
            self._finish_step()
        if self._micro == 0:
            self._step_started = time.perf_counter()
            self._step_position = (sampler.epoch, sampler.position - sampler.global_count)
        last = self._micro >= accum_steps
        self._micro += 1
        self._step_examples += sampler.global_count
        equal = sampler.global_count == self._world * sampler.local_bsz
        self._step_full = self._step_full and equal
        manual = False
        if last:
            self._agreeing = self._steps % self.agree_every == 0
            alone_before = self._world == 1 and (self._steps + 1) % self.agree_every == 0
            # DDP averages over the replicas only: accumulated steps are averaged here too.
            manual = self._agreeing or alone_before or not self._step_full or accum_steps > 0
            if self._step_full:
                self._scale = 1.0 / (self._world * (accum_steps + 1))
            else:  # by this rank's share of the (last) micro-batch; a stand-in weighs nothing
                self._scale = sampler.local_count / max(sampler.global_count, 1) \
                    / (accum_steps + 1)
        self._manual = manual
        if manual or not last:  # DDP's all-reduce skipped (no_sync): Pollux's, or none yet
            self.require_backward_grad_sync = False
            self._sync_off = True
        elif self._sync_off:
            self.require_backward_grad_sync = True
            self._sync_off = False

    def _on_output_grad(self, grad: torch.Tensor) -> None:
        """The backward pass reached the model's output: the all-reduce is queued to run once
        every gradient of the pass is accumulated (as DDP queues its own final callback)."""
        if not self._queued:
            self._queued = True
            torch.autograd.Variable._execution_engine.queue_callback(self._all_reduce)

    def _all_reduce(self) -> None:
        """DDP's gradient average done by Pollux, in one all-reduce that on an agreeing step
        also carries this rank's |G_i|^2, its wish to stop and rank 0's decision; at an
        epoch's short end each rank's gradient weighs by its share."""
        parameters = self._trained
        grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in parameters]
        if self._world == 1:
            self._average_alone(parameters, grads)
            return
        flat = torch.cat([g.reshape(-1) for g in grads])
        agreeing = self._agreeing
        local_sqr = _squared_norm(flat) if agreeing else None
        if self._scale == 0.0:
            flat.zero_()  # a stand-in's gradient, NaN perhaps: it counts for nothing
        else:
            flat.mul_(self._scale)
        if agreeing:
            flat = torch.cat([flat, self._extras_tensor(flat, local_sqr)])
        if self._failure is not None:  # the group is broken: the step will be undone
            return
        failure = None
        try:
            dist.all_reduce(flat, group=self.process_group)
        except RuntimeError as error:  # a peer died: noted as text, no traceback kept
            failure = f"{error.__class__.__name__}: {error}"
        if failure is not None:
            self._failure = failure
            return
        if agreeing:
            self._extras = flat[-_EXTRA:]
            flat = flat[:-_EXTRA]
            if self._world > 1:
                self._whole_parts = [_squared_norm(flat)]
        offset = 0
        for parameter, grad in zip(parameters, grads):
            averaged = flat[offset:offset + grad.numel()].view_as(grad)
            if parameter.grad is None:
                parameter.grad = averaged.clone()
            else:
                parameter.grad.copy_(averaged)
            offset += grad.numel()

    def _elastic_hook(self, state, bucket):  # no annotations: DDP checks them against its own
        """Under pollux.elastic, DDP's own all-reduce (the steps that are not Pollux's) as a
        communication hook whose failure (a peer died) is noted as text, the backward
        finished with the local gradient, for the optimizer step to recover from."""
        buffer = bucket.buffer()
        if self._failure is not None:
            return _done(buffer)
        buffer.div_(self._world)
        failure = None
        try:
            future = dist.all_reduce(buffer, group=self.process_group,
                                     async_op=True).get_future()
        except RuntimeError as error:
            failure = f"{error.__class__.__name__}: {error}"
        if failure is not None:
            self._failure = failure
            return _done(buffer)
        owner = weakref.ref(self)

        def reduced(done: Any) -> torch.Tensor:
            wrapped, failed = owner(), None
            try:
                return done.value()[0]
            except RuntimeError as error:
                failed = f"{error.__class__.__name__}: {error}"
            if wrapped is not None and wrapped._failure is None:
                wrapped._failure = failed
            return buffer
        return future.then(reduced)

    def _extras_tensor(self, like: torch.Tensor, local_sqr: torch.Tensor) -> torch.Tensor:
        values = [0.0, 1.0 if self._checkpoint_wanted() else 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
        decision = self._decision if self._rank == 0 else None
        if decision is not None:
            values[2:6] = [decision.batch_size, decision.local_bsz, decision.accum_steps,
                           decision.lr_scale]
        if self._rank == 0:
            values[6] = float(self._prepare_change())
            if self._force_stop:
                values[1] = 1.0
        extras = torch.tensor(values, dtype=like.dtype, device=like.device)
        extras[0] = local_sqr.to(like.dtype)
        return extras

    def _average_alone(self, parameters: List[torch.Tensor],
                       grads: List[torch.Tensor]) -> None:
        """Alone, the average is this rank's own gradient, scaled: no collective and no copy
        back; an agreeing step's extras are this rank's own. The gradient of the step before
        an agreeing step is kept; at the agreeing step it and this one are the two estimates
        (their mean |G_i|^2, and |G|^2 of their mean), as AdaptDL measures a single
        replica's noise."""
        agreeing = self._agreeing
        keep = (self._steps + 1) % self.agree_every == 0
        flat = torch.cat([g.reshape(-1) for g in grads]) if agreeing or keep else None
        if agreeing:
            local_sqr = _squared_norm(flat)
            previous, self._previous = self._previous, None
            if previous is not None:
                local_sqr = (local_sqr + _squared_norm(previous)) / 2
                self._whole_parts = [_squared_norm(previous + flat) / 4]
            else:
                self._whole_parts = [torch.tensor(math.nan, dtype=torch.float64)]
            self._extras = self._extras_tensor(flat, local_sqr)
        if keep:
            self._previous = flat  # cat's own copy, unscaled
        for parameter, grad in zip(parameters, grads):
            if self._scale == 0.0:
                grad.zero_()  # a stand-in's gradient, NaN perhaps: it counts for nothing
            elif self._scale != 1.0:
                grad.mul_(self._scale)
            if parameter.grad is None:
                parameter.grad = grad

    def _wrap_optimizer(self) -> None:
        optimizer = self.optimizer
        inner = optimizer.step
        inner_zero = optimizer.zero_grad
        owner = weakref.ref(self)

        def step(optimizer: torch.optim.Optimizer, *args: Any, **kwargs: Any) -> Any:
            wrapped = owner()
            if wrapped is None:
                return inner(*args, **kwargs)
            micro = wrapped._micro
            if 0 < micro <= wrapped.sampler.accum_steps:  # accumulating
                return None
            if wrapped._failure is not None:  # a peer died in this step's all-reduce
                wrapped._recover()
                return None
            if wrapped._fallen_back:  # not applied: the checkpoint has the last good step
                wrapped.sampler.rewind(*wrapped._step_position)
                wrapped._micro = wrapped._step_examples = 0
                return None
            factor = wrapped._factor()
            if factor == 1.0:
                result = inner(*args, **kwargs)
            else:
                rates = [group["lr"] for group in optimizer.param_groups]
                for group, rate in zip(optimizer.param_groups, rates):
                    group["lr"] = rate * factor
                try:
                    result = inner(*args, **kwargs)
                finally:
                    for group, rate in zip(optimizer.param_groups, rates):
                        group["lr"] = rate
            if micro > wrapped.sampler.accum_steps:
                wrapped._finish_step()
            return result

        def zero_grad(optimizer: torch.optim.Optimizer, *args: Any, **kwargs: Any) -> Any:
            wrapped = owner()
            if wrapped is not None and wrapped.sampler.accum_steps > 0 and wrapped.accumulating:
                return None
            return inner_zero(*args, **kwargs)

        # An LR scheduler made before this wrapper has its own inside: its markers (torch
        # 1.x's and 2.x's) tell it so, or it warns that step() was overridden.
        for marker in ("_with_counter", "_wrapped_by_lr_sched"):
            if getattr(inner, marker, False):
                setattr(step, marker, True)
        optimizer.step = types.MethodType(step, optimizer)  # type: ignore[assignment]
        optimizer.zero_grad = types.MethodType(zero_grad, optimizer)  # type: ignore

    def _factor(self) -> float:
        setting = (self.sampler.batch_size, self._applied)
        if setting != self._lr_for:
            self._lr_factor = lr_scale(self.sampler.batch_size, self.sampler.init_batch_size,
                                       self.lr_rule, self._applied)
            self._lr_for = setting
        return self._lr_factor

    # -- the step's end -------------------------------------------------------------------

    def _finish_step(self) -> None:
        agreement = self._agreement() if self._agreeing else None
        if agreement is not None:
            self._update_noise(agreement)
        step_time = time.perf_counter() - (self._step_started or time.perf_counter())
        self._last_step_s = step_time
        self.examples += self._step_examples
        accum_steps = self._micro - 1
        self._agreeing = False
        self._micro = 0
        self._step_examples = 0
        self._step_full = True
        self._steps += 1
        self._report(step_time, accum_steps)
        if agreement is not None:
            self._at_agreeing_step(agreement)

    def _agreement(self) -> Optional[Agreement]:
        extras, self._extras = self._extras, None
        whole, self._whole_parts = self._whole_parts, []
        if extras is None:
            return None
        values = extras.tolist()
        whole_sqr = float(sum(part.item() for part in whole))
        decision = None
        if values[3] >= 1:
            decision = Decision(int(round(values[2])), int(round(values[3])),
                                int(round(values[4])), float(values[5]))
        return Agreement(values[0] / self._world, whole_sqr, values[1] > 0, decision,
                         int(round(values[6])))

    def _update_noise(self, agreement: Agreement) -> None:
        """The step's noise estimate, when its gradients are comparable: every micro-batch
        full (equal shares), finite (GradScaler's overflow steps are not)."""
        if not self._step_full:
            return
        mean_sqr, whole_sqr = agreement.mean_sqr, agreement.whole_sqr
        if self.scaler is not None and self.scaler.is_enabled():
            scale = float(self.scaler.get_scale())
            mean_sqr, whole_sqr = mean_sqr / scale ** 2, whole_sqr / scale ** 2
        if not (math.isfinite(mean_sqr) and math.isfinite(whole_sqr)):
            return
        size = self.sampler.local_bsz * (self.sampler.accum_steps + 1)
        self.noise.update(noise_from_norms(mean_sqr, whole_sqr, size, max(self._world, 2)))

    def _at_agreeing_step(self, agreement: Agreement) -> None:
        """Every rank is here after the same step with the same agreement: the place where a
        job changes what all its ranks must change together. Today: the stop flag and rank
        0's decision (the loader's batch size from its next batch; one made for another
        number of replicas waits for its resize). A live change of the world size would be
        made here too, before the next step."""
        self._stop = agreement.stop or self._fallen_back
        decision = agreement.decision
        if agreement.generation > 0 and self._group is not None:
            # After the user's code for this step (scheduler.step, GradScaler.update...),
            # before the next batch: AdaptiveDataLoader calls _between_steps.
            self._pending_change, self._pending_decision = agreement.generation, decision
            return
        self._apply_decision(decision)

    def _between_steps(self) -> None:
        generation, self._pending_change = self._pending_change, 0
        if not generation or self._stop:
            return
        self._live_change(generation)
        self._apply_decision(self._pending_decision)
        self._pending_decision = None

    def _apply_decision(self, decision: Optional[Decision]) -> None:
        if decision is None:
            return
        try:
            self.sampler.set_decision(decision)
            self._applied = decision
        except ValueError:
            pass

    def _report(self, step_time: float, accum_steps: int) -> None:
        if not self._reporting:  # outside pollux-agent: nothing to tell
            return
        sampler = self.sampler
        epochs = sampler.epoch + sampler.position / sampler.dataset_size
        noise = self.noise.value()
        self.trainer.report_step(step_time, sampler.local_bsz, max(accum_steps, 0),
                                 self.examples, epochs,
                                 grad_sqr=None if noise is None else noise.grad_sqr,
                                 grad_var=None if noise is None else noise.grad_var)
        decision = self.trainer.decision()
        if decision is not None:
            self._decision = decision

    def _checkpoint_wanted(self) -> bool:
        return self.trainer.checkpoint_requested()

    # -- live changes of the world size (pollux.elastic) -----------------------------------

    def _prepare_change(self) -> int:
        """Rank 0, in the agreeing step's hook: the generation of a live change to announce
        in this all-reduce (its plan written to the store first), else 0."""
        if self._group is None:
            return 0
        trainer_request = getattr(self.trainer, "resize_request", None)
        if trainer_request is not None:  # the agent's (an in-place shrink, a part's leave)
            wanted = trainer_request()
            if wanted is not None:
                leave, join = wanted
                try:
                    if isinstance(leave, Leavers):
                        leave = self._group.ranks_of(leave.job, leave.nodes)
                        if not leave and not join:
                            raise ValueError(f"no worker of {wanted[0]} in this generation")
                    self.request_resize(leave, join)
                except (ValueError, RuntimeError) as error:
                    log(f"resize request refused: {error}")
        if self._request is None:
            return 0
        leave, join, since = self._request
        ready = self._group.ready_joiners() if join else []
        if len(ready) < join:
            if time.monotonic() - since > self._group.join_timeout_s:
                self._request = None
                self._force_stop = True
                self.resize_failed = (f"{join - len(ready)} joiner(s) not ready within "
                                      f"{self._group.join_timeout_s:g} s")
                log(f"live change abandoned: {self.resize_failed}; stopping for a checkpoint")
            return 0
        self._request = None
        stay = [rank for rank in range(self._world) if rank not in leave]
        return self._group.write_plan(stay, ready[:join])

    def _live_change(self, generation: int) -> None:
        """Every rank, at the agreeing step that announced `generation`: leave, or re-form
        the group at the new size (joiners get rank 0's state)."""
        started = time.perf_counter()
        old_world, failure = self._world, None
        try:
            plan = self._group.read_plan(generation)
        except (RuntimeError, ValueError) as error:
            failure = f"cannot read the plan of generation {generation}: {error}"
        if failure is not None:
            self._drop_ddp()
            return self._fall_back(failure)
        self._drop_ddp()
        if self._rank == 0 and plan["joiners"]:
            self._group.admit(plan)  # before a rank 0 that leaves goes
        if self._rank not in plan["stay"]:
            self._leave()
        failure = self._reform(plan, sync_state=bool(plan["joiners"]))
        if failure is not None:
            return self._fall_back(failure)
        self._record_change(generation, old_world, started)

    def _recover(self) -> None:
        """Every survivor of a failed collective (a peer died), in optimizer.step: the step
        is undone (not applied, its examples given back to the sampler), the group re-formed
        from the survivors, and rank 0's state broadcast to all. Outside any except block,
        with the DDP wrapper dropped first (a traceback or a wrapper that outlives the group
        keeps its sockets open, and peers blocked in a collective never see the failure)."""
        started = time.perf_counter()
        why, self._failure = self._failure, None
        self._agreeing = self._manual = self._queued = False
        self._micro = self._step_examples = 0
        self._step_full = True
        self._extras, self._whole_parts = None, []
        self.sampler.rewind(*self._step_position)
        if self._group is None:
            raise RuntimeError(f"a collective failed ({why}) and live changes are off")
        log(f"rank {self._rank}: a collective failed ({why}); re-forming the group from the "
            f"survivors")
        old_world = self._world
        self._drop_ddp()
        plan, failure = None, None
        try:
            plan = self._group.survivors(self.min_replicas, self._last_step_s)
        except (RuntimeError, ValueError) as error:
            failure = f"no plan from rank 0 ({error})"
        if failure is None and "fallback" in plan:
            failure = plan["fallback"]
        if failure is not None:
            return self._fall_back(failure)
        if self._rank not in plan["stay"]:
            self._leave()
        failure = self._reform(plan, sync_state=True)
        if failure is not None:
            return self._fall_back(failure)
        self._record_change(plan["generation"], old_world, started)

    def _reform(self, plan: Dict[str, Any], sync_state: bool) -> Optional[str]:
        """Initialises the plan's generation, rebuilds DDP, and (sync_state) takes rank 0's
        state; the failure as text, None on success."""
        rank, world = plan["stay"].index(self._rank), plan["world"]
        failure = None
        try:
            self._group.form(plan["generation"], rank, world)
            self._rebuild_ddp()
            self._rank, self._world = rank, world
            self.sampler.set_rank(rank, world)
            self._applied, self._lr_for = None, None
            if sync_state:
                self._sync_state()
        except (RuntimeError, ValueError) as error:
            failure = f"generation {plan['generation']}: {error.__class__.__name__}: {error}"
        if failure is not None:
            self._drop_ddp()
        return failure

    def _drop_ddp(self) -> None:
        """Drops what holds the process group (DDP's reducer and logger) and destroys the
        group: after it, nothing of the old generation is left (torch 1.13 deadlocks at exit
        when a DDP reducer outlives destroy_process_group)."""
        for name in ("reducer", "logger", "_replicated_tensor_module"):
            self.__dict__.pop(name, None)
        self.__dict__["process_group"] = None
        self._extras, self._whole_parts = None, []
        self._previous = None
        elastic.destroy()

    def _rebuild_ddp(self) -> None:
        """DistributedDataParallel's constructor again on the new group (it broadcasts the
        parameters and buffers from rank 0), with Pollux's communication hook."""
        module, training = self.module, self.training
        torch.nn.parallel.DistributedDataParallel.__init__(self, module, **self._ddp_kwargs)
        self.train(training)
        self._sync_off = False
        self.register_comm_hook(None, self._elastic_hook)

    def _live_state(self) -> Dict[str, Any]:
        state = {"optimizer": self.optimizer.state_dict(), "loader": self.sampler.state_dict(),
                 "noise": self.noise.state_dict(), "examples": self.examples,
                 "steps": self._steps, "stop": self._stop,
                 "applied": None if self._applied is None else tuple(
                     getattr(self._applied, field) for field in
                     ("batch_size", "local_bsz", "accum_steps", "lr_scale"))}
        if self.lr_scheduler is not None:
            state["lr_scheduler"] = self.lr_scheduler.state_dict()
        if self.scaler is not None:
            state["scaler"] = self.scaler.state_dict()
        return state

    def _sync_state(self) -> None:
        """Rank 0's optimizer, scheduler, scaler, sampler, noise and progress on every rank,
        in memory (pollux.elastic.broadcast_state); the parameters came with DDP's
        constructor."""
        state = elastic.broadcast_state(self._live_state() if self._rank == 0 else None)
        if self._rank == 0:
            return
        self.optimizer.load_state_dict(state["optimizer"])
        self.sampler.load_state_dict(state["loader"])
        self.sampler.layout += 1
        self.noise.load_state_dict(state["noise"])
        self.examples, self._steps, self._stop = state["examples"], state["steps"], state["stop"]
        self._applied = None if state["applied"] is None else Decision(*state["applied"])
        if self.lr_scheduler is not None and "lr_scheduler" in state:
            self.lr_scheduler.load_state_dict(state["lr_scheduler"])
        if self.scaler is not None and "scaler" in state:
            self.scaler.load_state_dict(state["scaler"])
        self._lr_for = None

    def _record_change(self, generation: int, old_world: int, started: float) -> None:
        stall = time.perf_counter() - started
        self.resizes.append((generation, old_world, self._world, stall))
        report = getattr(self.trainer, "report_resize", None)
        if report is not None:
            report(old_world, self._world, stall, rank=self._rank)
        if self._rank == 0:
            log(f"live change to generation {generation}: {old_world} -> {self._world} "
                f"replicas in {stall:.3f} s")

    def _fall_back(self, why: str) -> None:
        """A live change that cannot complete: stop as for a checkpoint request (rank 0
        writes it without a collective; the script exits 143 as at a requeue). A step that
        the loop still runs (when the change failed between two steps) runs the module
        locally and is not applied (optimizer.step does nothing), its examples given back."""
        self._drop_ddp()
        self._fallen_back = True
        self._stop = True
        self.resize_failed = why
        log(f"rank {self._rank}: live change failed ({why}); falling back to a checkpoint and "
            f"a restart")

    def _leave(self) -> None:
        """A leaver: its DDP wrapper and group are already gone; tell the agent, exit 0."""
        report = getattr(self.trainer, "report_leaving", None)
        if report is not None:
            report()
        self.trainer.close()
        sys.stdout.flush()
        sys.stderr.flush()
        raise SystemExit(0)

    # -- checkpoints ----------------------------------------------------------------------

    def checkpoint_state(self) -> Dict[str, Any]:
        """Everything to resume: the module's, optimizer's, scheduler's and scaler's state,
        the loader's position and batch configuration, the noise average and the progress."""
        if self._micro > self.sampler.accum_steps:
            self._finish_step()
        state = {"model": self.module.state_dict(), "optimizer": self.optimizer.state_dict(),
                 "loader": self.sampler.state_dict(), "noise": self.noise.state_dict(),
                 "examples": self.examples, "steps": self._steps}
        if self.lr_scheduler is not None:
            state["lr_scheduler"] = self.lr_scheduler.state_dict()
        if self.scaler is not None:
            state["scaler"] = self.scaler.state_dict()
        return state

    def load_checkpoint_state(self, state: Dict[str, Any]) -> None:
        """Puts back a checkpoint_state()."""
        self.module.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.sampler.load_state_dict(state["loader"])
        self.noise.load_state_dict(state["noise"])
        self.examples = state["examples"]
        self._steps = state.get("steps", 0)
        if self.lr_scheduler is not None and "lr_scheduler" in state:
            self.lr_scheduler.load_state_dict(state["lr_scheduler"])
        if self.scaler is not None and "scaler" in state:
            self.scaler.load_state_dict(state["scaler"])
        self._lr_for = None

    def checkpoint(self, path: str) -> None:
        """Writes checkpoint_state() to PATH (rank 0, atomically: pollux.save_checkpoint) and,
        when the agent asked for it (stop_requested), tells the agent it is written."""
        if self._fallen_back:  # no group left: rank 0 writes, nobody waits
            if self._rank == 0:
                save_checkpoint(path, self.checkpoint_state())
        else:
            save_checkpoint(path, self.checkpoint_state())
        if self._stop:
            self.trainer.checkpointed()

    def restore(self, path: str) -> bool:
        """Resumes from PATH if it exists; False if there was none. An unreadable checkpoint
        raises pollux.CheckpointError and changes nothing. A process that joined a running
        job (pollux.elastic) has its state from rank 0 already: it reads nothing, True."""
        if self._group is not None and self._group.joined:
            return True
        state = load_checkpoint(path)
        if state is None:
            return False
        self.load_checkpoint_state(state)
        return True

    def close(self) -> None:
        """Closes the agent connection (training may go on, unreported)."""
        self.trainer.close()


def _hook_outputs(output: Any, hook: Any) -> None:
    """hook on every tensor of the output (tensors, lists, tuples, dicts) that needs a
    gradient: the first the backward pass reaches calls it."""
    if isinstance(output, torch.Tensor):
        if output.requires_grad:
            output.register_hook(hook)
    elif isinstance(output, (list, tuple)):
        for item in output:
            _hook_outputs(item, hook)
    elif isinstance(output, dict):
        for item in output.values():
            _hook_outputs(item, hook)


def _done(value: torch.Tensor) -> Any:
    future = torch.futures.Future()
    future.set_result(value)
    return future


def _squared_norm(flat: torch.Tensor) -> torch.Tensor:
    """|flat|^2 accumulated in double precision, in one reduction."""
    return torch.linalg.vector_norm(flat, dtype=torch.float64).square()
