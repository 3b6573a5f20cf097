# SPDX-License-Identifier: GPL-2.0-or-later
"""A drop-in data-parallel training step for Pollux: DistributedDataParallel whose gradient
all-reduce, every few steps, also carries what the job must agree on.

    rank, replicas = pollux_torch.init_process_group()
    loader = pollux_data.AdaptiveDataLoader(dataset, init_batch_size=128)
    with pollux_train.Trainer(128, 4096, 16, 256, accumulation=True) as trainer:
        model = AdaptiveDataParallel(net, optimizer, loader, trainer, lr_rule="adascale",
                                     epochs=10)           # the job's declared length
        model.restore("ckpt.pt")                          # model, optimizer, loader, progress
        for epoch in loader.epochs(10):
            for inputs, targets in loader:
                model.train_step(loss_fn, inputs, targets)
                if model.stop_requested:                  # the agent asked for a checkpoint
                    model.checkpoint("ckpt.pt"); trainer.checkpointed(); sys.exit(143)
        model.checkpoint("ckpt.pt")

With several replicas, every `agree_every`-th step (default 8: the first, the 9th...) keeps
its local gradients (DDP's no_sync) and averages them itself, in one all-reduce that also
carries this replica's |G_i|^2 (the squared norm of its local gradient), its wish to stop
(the agent's checkpoint request) and rank 0's current decision: it gives mean_i |G_i|^2 (the
gradient noise estimate of pollux_torch.noise_from_norms, with no extra collective), the
same stop flag on every rank, and rank 0's decision to every rank, so that all ranks stop or
change batch size at the same step. The steps between are plain DDP, its all-reduce
untouched: a checkpoint request waits at most agree_every - 1 steps. Alone, the noise comes
from the two halves of each batch (pollux_torch.half_batch_backward).

epochs=N (or examples=X) declares the job's length to the agent, as AdaptDL's
remaining_epochs_until(N) states it: N epochs of the loader's data set
(pollux_train.Trainer.declare_target with examples_per_epoch = the data set's size), so that
sched/pollux can estimate the time the job has left. A bad value is refused there (a message
on stderr, `declared` False) and training goes on undeclared.
"""

import time

import torch
import torch.distributed as dist

import pollux_torch

__all__ = ["AdaptiveDataParallel"]

# Values appended to an agreeing step's gradients: |G_i|^2, stop, and rank 0's batch_size,
# local_bsz, accum_steps, lr_scale.
_EXTRA = 6
AGREE_EVERY = 8


def _extras(wants_stop, decision, like):
    """The values of _EXTRA, in the dtype and on the device of `like` (a decision's integers
    are exact in float32 up to 2^24); |G_i|^2 is set by the caller."""
    values = [0.0, 1.0 if wants_stop else 0.0, 0.0, 0.0, 0.0, 0.0]
    if decision is not None:
        values[2:] = [decision.batch_size, decision.local_bsz, decision.accum_steps,
                      decision.lr_scale]
    return torch.tensor(values, device=like.device, dtype=like.dtype)


class _Agreement:
    """What one agreeing all-reduce gave every rank."""

    def __init__(self, mean_sqr, whole_sqr, stop, decision):
        self.mean_sqr = mean_sqr    # mean_i |G_i|^2
        self.whole_sqr = whole_sqr  # |G|^2 of the averaged gradient
        self.stop = stop            # any rank wants a checkpoint
        self.decision = decision    # rank 0's, as a tuple, or None


def _agreeing_all_reduce(parameters, replicas, wants_stop, decision):
    """Averages the parameters' local gradients (left unreduced by DDP's no_sync) over the
    replicas in one all-reduce that also carries this rank's |G_i|^2, wish to stop and
    (rank 0's) decision: what DDP's own all-reduce would do, plus the values of _EXTRA."""
    grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in parameters]
    flat = torch.cat([g.reshape(-1).to(grads[0].dtype) for g in grads])
    extras = _extras(wants_stop, decision, flat)
    extras[0] = flat.square().sum()
    packed = torch.cat([flat, extras]).div_(replicas)
    dist.all_reduce(packed)
    gradient = packed[:-_EXTRA]
    extra = (packed[-_EXTRA:] * replicas).tolist()
    offset = 0
    for parameter, grad in zip(parameters, grads):
        averaged = gradient[offset:offset + grad.numel()].view_as(grad)
        if parameter.grad is None:
            parameter.grad = averaged.to(parameter.dtype).clone()
        else:
            parameter.grad.copy_(averaged)
        offset += grad.numel()
    return _Agreement(extra[0] / replicas, gradient.square().sum().item(), extra[1] > 0,
                      tuple(extra[2:]) if extra[3] >= 1 else None)


class AdaptiveDataParallel:
    """One optimizer step after the loader's accum_steps + 1 micro-batches, its learning rate
    by `lr_rule` (pollux_torch.LR_RULES), its time and gradient noise reported to `trainer`
    (a pollux_train.Trainer, or None), and the agent's decisions applied by every rank at the
    same step. `epochs` (of the loader's data set) or `examples`: the job's length, declared
    to the agent through trainer.declare_target (see the module's doc)."""

    def __init__(self, module, optimizer, loader, trainer=None, lr_rule="adascale",
                 smoothing=0.95, agree_every=AGREE_EVERY, epochs=None, examples=None):
        if lr_rule not in pollux_torch.LR_RULES:
            raise ValueError(f"unknown learning-rate rule {lr_rule!r}: one of "
                             f"{', '.join(pollux_torch.LR_RULES)}")
        if agree_every < 1:
            raise ValueError(f"agree_every must be >= 1, not {agree_every}")
        self.module = module
        self.optimizer = optimizer
        self.loader = loader
        self.trainer = trainer
        self.lr_rule = lr_rule
        self.replicas = loader.replicas
        self.base_lrs = [group["lr"] for group in optimizer.param_groups]
        self.noise = pollux_torch.NoiseAverage(smoothing)
        self.examples = 0.0  # consumed since the job started, over all replicas
        self.stop_requested = False
        self.agree_every = agree_every
        self._steps = 0           # optimizer steps of this process
        self._decision = None     # the latest from this rank's agent
        self._applied = None      # the one the loader runs with, whose lr_scale applies
        self._lr_for = None       # (batch size, decision) the learning rate was set for
        self._micro_batch = 0
        self._step_full = True
        self._step_started = None
        self._agreement = None    # of this step, on an agreeing step
        self._trained = [p for p in module.parameters() if p.requires_grad]
        self.model = module
        if self.replicas > 1:
            self.model = torch.nn.parallel.DistributedDataParallel(module)
        # True once the job's length (epochs= or examples=) is declared to the agent.
        self.declared = False
        if trainer is not None and (epochs is not None or examples is not None):
            self.declared = trainer.declare_target(
                epochs=epochs, examples=examples,
                examples_per_epoch=loader.sampler.dataset_size if epochs is not None else None)

    def train_step(self, loss_fn, inputs, targets):
        """Forward and backward of one micro-batch (loss_fn: a mean over the examples, as
        torch.nn.functional.cross_entropy); the optimizer steps after the last micro-batch of
        the step. Returns this micro-batch's mean loss as a 0-dim tensor, detached (reading it,
        .item(), waits for the device: do it when needed, not every step)."""
        if self._step_started is None:
            self._step_started = time.perf_counter()
        last = self._micro_batch == self.loader.accum_steps
        full = self.loader.global_count == self.replicas * self.loader.local_bsz
        self._step_full = self._step_full and full
        # Every example of the step weighs the same, on every rank and micro-batch.
        weight = len(inputs) * self.replicas / max(self.loader.global_count, 1) \
            / (self.loader.accum_steps + 1)
        if self.replicas == 1:
            loss = self._backward_alone(loss_fn, inputs, targets, weight, full)
        elif last and not self._agreeing():
            loss = self._backward(loss_fn, inputs, targets, weight)  # DDP's own all-reduce
        else:
            with self.model.no_sync():
                loss = self._backward(loss_fn, inputs, targets, weight)
            if last:
                self._agreement = _agreeing_all_reduce(
                    self._trained, self.replicas, self._checkpoint_wanted(),
                    self._decision if self.loader.rank == 0 else None)
        self._micro_batch += 1
        if last:
            self._finish_step()
        return loss

    def _backward(self, loss_fn, inputs, targets, weight):
        output = self.model(inputs)
        loss = loss_fn(output, targets) if len(inputs) else output.sum() * 0.0
        (loss if weight == 1 else loss * weight).backward()
        return loss.detach()

    def _backward_alone(self, loss_fn, inputs, targets, weight, measure):
        if measure and len(inputs) >= 2:
            loss, stats = pollux_torch.half_batch_backward(self.module, loss_fn, inputs,
                                                           targets, grad_scale=weight)
            self.noise.update(stats)
            return torch.tensor(loss)
        return self._backward(loss_fn, inputs, targets, weight)

    def _agreeing(self):
        return self._steps % self.agree_every == 0

    def _checkpoint_wanted(self):
        return self.trainer is not None and self.trainer.checkpoint_requested()

    def _finish_step(self):
        if self.replicas > 1:
            decision = None
            agreed, self._agreement = self._agreement, None
            if agreed:
                if self._step_full:  # else the replicas' gradients are over unequal counts
                    size = self.loader.local_bsz * (self.loader.accum_steps + 1)
                    self.noise.update(pollux_torch.noise_from_norms(
                        agreed.mean_sqr, agreed.whole_sqr, size, self.replicas))
                self.stop_requested = agreed.stop
                decision = agreed.decision
        else:
            self.stop_requested = self._checkpoint_wanted()
            decision = self._decision
        self._apply_lr()
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        step_time = time.perf_counter() - self._step_started
        self.examples += self.loader.global_count * (self.loader.accum_steps + 1)
        self._report(step_time)
        self._micro_batch = 0
        self._step_full = True
        self._step_started = None
        self._steps += 1
        self._take_decision(decision)

    def _apply_lr(self):
        setting = (self.loader.batch_size, self._applied)
        if setting == self._lr_for:
            return
        scale = pollux_torch.lr_scale(self.loader.batch_size, self.loader.init_batch_size,
                                      self.lr_rule, self._applied)
        for group, base in zip(self.optimizer.param_groups, self.base_lrs):
            group["lr"] = base * scale
        self._lr_for = setting

    def _report(self, step_time):
        if self.trainer is None:
            return
        sampler = self.loader.sampler
        epochs = sampler.epoch + sampler.position / sampler.dataset_size
        noise = self.noise.value()
        self.trainer.report_step(step_time, self.loader.local_bsz, self.loader.accum_steps,
                                 self.examples, epochs,
                                 grad_sqr=None if noise is None else noise.grad_sqr,
                                 grad_var=None if noise is None else noise.grad_var)
        if self.trainer.decision() is not None:
            self._decision = self.trainer.decision()

    def _take_decision(self, agreed):
        """Applies the decision every rank now has (rank 0's) to the loader, from the next
        step on; one made for another number of replicas waits for its resize."""
        decision = _as_decision(agreed)
        if decision is None:
            return
        try:
            self.loader.set_decision(decision)
            self._applied = decision
        except ValueError:
            pass

    def state_dict(self):
        return {"model": self.module.state_dict(), "optimizer": self.optimizer.state_dict(),
                "loader": self.loader.state_dict(), "noise": self.noise.state_dict(),
                "examples": self.examples, "base_lrs": self.base_lrs}

    def load_state_dict(self, state):
        self.module.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.loader.load_state_dict(state["loader"])
        self.noise.load_state_dict(state["noise"])
        self.examples = state["examples"]
        self.base_lrs = state["base_lrs"]
        self._lr_for = None

    def checkpoint(self, path):
        """Everything to resume, written by rank 0 atomically (pollux_torch.save_checkpoint)."""
        pollux_torch.save_checkpoint(path, self.state_dict())

    def restore(self, path):
        """Resumes from PATH if it exists; False if there was none. An unreadable checkpoint
        raises pollux_torch.CheckpointError and changes nothing."""
        state = pollux_torch.load_checkpoint(path)
        if state is None:
            return False
        self.load_state_dict(state)
        return True


def _as_decision(values):
    """A pollux_train.Decision from the agreed tuple (or one given as is), None for none."""
    if values is None or not isinstance(values, tuple):
        return values
    import pollux_train
    batch_size, local_bsz, accum_steps, lr_scale = values
    return pollux_train.Decision(int(round(batch_size)), int(round(local_bsz)),
                                 int(round(accum_steps)), float(lr_scale))
