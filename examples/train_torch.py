#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""An adaptive PyTorch training script for pollux-agent (CPU is enough).

A tiny MLP learns a noisy linear function of synthetic data. Every optimizer step is reported
to pollux-agent with its time and gradient noise (pollux_torch.half_batch_backward); the agent's
decision (local batch size, gradient accumulation, learning-rate scale) applies from the next
step on; when the agent asks for a checkpoint (Slurm is about to requeue or resize the job) the
script saves model, optimizer and progress to --checkpoint, says so and exits 0. It resumes from
that file on start and exits 0 once it has trained --epochs epochs, the length it declares to
the agent (--epochs epochs of --dataset-size examples). Without pollux-agent it simply trains.

    srun pollux-agent -- python3 train_torch.py --checkpoint ckpt.pt     (examples/*.sbatch)
    python3 train_torch.py --checkpoint /tmp/ckpt.pt                       (no agent)

One process is one replica: a data-parallel script would wrap the model in
DistributedDataParallel, split each batch over its replicas and report from rank 0.
"""

import argparse
import dataclasses
import math
import os
import sys
import time

import torch

import pollux_torch
import pollux_train


@dataclasses.dataclass(frozen=True)
class BatchConfig:
    local_bsz: int
    accum_steps: int  # micro-batches beyond the first
    lr_scale: float


@dataclasses.dataclass
class Progress:
    """Where training is, all counted since the job first started."""

    step: int = 0
    examples: int = 0
    epoch: int = 0  # the current epoch ...
    position: int = 0  # ... and how many of its examples have been used

    def epochs(self, dataset_size):
        return self.epoch + self.position / dataset_size


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", required=True, help="checkpoint file (resumed if present)")
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--dataset-size", type=int, default=8192)
    parser.add_argument("--features", type=int, default=16)
    parser.add_argument("--lr", type=float, default=0.02, help="learning rate at --init-batch-size")
    parser.add_argument("--init-batch-size", type=int, default=64)
    parser.add_argument("--max-batch-size", type=int, default=1024)
    parser.add_argument("--min-local-bsz", type=int, default=8)
    parser.add_argument("--max-local-bsz", type=int, default=256)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if not 2 <= args.min_local_bsz <= args.max_local_bsz:
        parser.error("need 2 <= --min-local-bsz <= --max-local-bsz (batches are split in halves)")
    return args


def synthetic_dataset(size, features, seed):
    """y = x . w + noise, the same for every run with the same seed."""
    generator = torch.Generator().manual_seed(seed)
    inputs = torch.randn(size, features, generator=generator)
    weights = torch.randn(features, 1, generator=generator)
    targets = inputs @ weights + 0.5 * torch.randn(size, 1, generator=generator)
    return inputs, targets


class Batches:
    """Micro-batches in a per-epoch random order that a resumed run continues exactly."""

    def __init__(self, inputs, targets, seed, progress):
        self.inputs, self.targets, self.seed, self.progress = inputs, targets, seed, progress

    def _order(self):
        generator = torch.Generator().manual_seed(self.seed * 100003 + self.progress.epoch)
        return torch.randperm(len(self.inputs), generator=generator)

    def next(self, size):
        """The next `size` examples, running on into the next epoch if this one ends."""
        picked = []
        while size > 0:
            order = self._order()
            taken = order[self.progress.position:self.progress.position + size]
            picked.append(taken)
            size -= len(taken)
            self.progress.examples += len(taken)
            self.progress.position += len(taken)
            if self.progress.position == len(order):
                self.progress.epoch, self.progress.position = self.progress.epoch + 1, 0
        indices = torch.cat(picked)
        return self.inputs[indices], self.targets[indices]


def initial_config(args):
    """The batch the hyper-parameters were tuned for, accumulated if a GPU cannot hold it."""
    accum_steps = math.ceil(args.init_batch_size / args.max_local_bsz) - 1
    return BatchConfig(args.init_batch_size // (accum_steps + 1), accum_steps, 1.0)


def config_from(decision, args):
    local_bsz = min(max(decision.local_bsz, args.min_local_bsz), args.max_local_bsz)
    return BatchConfig(local_bsz, max(decision.accum_steps, 0), decision.lr_scale)


def set_lr(optimizer, lr):
    for group in optimizer.param_groups:
        group["lr"] = lr


def save_checkpoint(path, model, optimizer, noise, progress):
    """Written to a temporary file first: a kill mid-write leaves the previous checkpoint."""
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
             "noise": noise.state_dict(), "progress": dataclasses.asdict(progress)}
    torch.save(state, path + ".tmp")
    os.replace(path + ".tmp", path)


def load_checkpoint(path, model, optimizer, noise):
    state = torch.load(path)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    noise.load_state_dict(state["noise"])
    return Progress(**state["progress"])


def train_step(model, optimizer, batches, config, noise):
    """One optimizer step of accum_steps + 1 micro-batches; (step time, compute time, loss)."""
    loss_fn = torch.nn.MSELoss()
    start = time.perf_counter()
    micro_batches = config.accum_steps + 1
    for _ in range(micro_batches):
        inputs, targets = batches.next(config.local_bsz)
        compute_start = time.perf_counter()
        loss, stats = pollux_torch.half_batch_backward(model, loss_fn, inputs, targets,
                                                       grad_scale=1.0 / micro_batches)
        compute_time = time.perf_counter() - compute_start
        noise.update(stats)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return time.perf_counter() - start, compute_time, loss


def log(message):
    print("train_torch: " + message, flush=True)


def restore(args):
    """Model, optimizer, noise average and progress: fresh, or from the checkpoint if any."""
    torch.manual_seed(args.seed)
    model = torch.nn.Sequential(torch.nn.Linear(args.features, 32), torch.nn.Tanh(),
                                torch.nn.Linear(32, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    noise = pollux_torch.NoiseAverage()
    if not os.path.exists(args.checkpoint):
        return model, optimizer, noise, Progress()
    progress = load_checkpoint(args.checkpoint, model, optimizer, noise)
    log(f"resumed from {args.checkpoint}: step {progress.step}, "
        f"examples {progress.examples}, epochs {progress.epochs(args.dataset_size):.4f}")
    return model, optimizer, noise, progress


def next_config(trainer, config, args, optimizer, step):
    """The agent's latest decision if it changes the configuration (logged), else config."""
    decision = trainer.decision()
    if decision is None or config_from(decision, args) == config:
        return config
    config = config_from(decision, args)
    set_lr(optimizer, args.lr * config.lr_scale)
    log(f"decision from step {step + 1}: local_bsz {config.local_bsz}, "
        f"accum_steps {config.accum_steps}, lr {optimizer.param_groups[0]['lr']:.9g}")
    return config


def train(args, trainer):
    model, optimizer, noise, progress = restore(args)
    inputs, targets = synthetic_dataset(args.dataset_size, args.features, args.seed)
    batches = Batches(inputs, targets, args.seed, progress)
    config = initial_config(args)  # a new allocation starts afresh until the agent decides
    set_lr(optimizer, args.lr * config.lr_scale)
    while progress.epoch < args.epochs:
        epoch = progress.epoch
        step_time, compute_time, loss = train_step(model, optimizer, batches, config, noise)
        progress.step += 1
        stats = noise.value()
        trainer.report_step(step_time, config.local_bsz, config.accum_steps, progress.examples,
                            progress.epochs(args.dataset_size), compute_time,
                            stats.grad_sqr, stats.grad_var)
        if trainer.checkpoint_requested():
            save_checkpoint(args.checkpoint, model, optimizer, noise, progress)
            trainer.checkpointed()
            log(f"checkpoint requested: saved at step {progress.step}, "
                f"examples {progress.examples}")
            return
        config = next_config(trainer, config, args, optimizer, progress.step)
        if progress.epoch > epoch:
            log(f"epoch {progress.epoch} done at step {progress.step}: loss {loss:.4f}")
    save_checkpoint(args.checkpoint, model, optimizer, noise, progress)
    log(f"finished {args.epochs} epochs at step {progress.step}, examples {progress.examples}")


def main(argv):
    args = parse_args(argv)
    with pollux_train.Trainer(args.init_batch_size, args.max_batch_size, args.min_local_bsz,
                              args.max_local_bsz, accumulation=True) as trainer:
        # The job's length, so that sched/pollux can estimate the time it has left.
        trainer.declare_target(epochs=args.epochs, examples_per_epoch=args.dataset_size)
        train(args, trainer)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
