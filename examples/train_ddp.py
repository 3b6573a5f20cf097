#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Data-parallel PyTorch training under Pollux: handwritten digits (scikit-learn's 8x8 digits,
shipped by Debian's python3-sklearn; nothing is downloaded).

An MLP learns the 1,797 digits (1,497 to train, 300 to test, a fixed split). Every worker joins
the job's process group from the environment pollux-agent gives it (torchrun's: RANK,
WORLD_SIZE, MASTER_ADDR...; gloo on CPU, nccl on GPUs; alone, a group of one) and trains as a
DDP script does (loss.backward(), optimizer.step(), an LR scheduler, gradient clipping),
with pollux.AdaptiveDataParallel in place of DistributedDataParallel and
pollux.AdaptiveDataLoader (a DataLoader) in place of a DataLoader with a DistributedSampler:
the agent's decisions change the batch size from the next batch on, and when the agent asks
for a checkpoint (Slurm is about to requeue or resize the job) every worker stops at the same
step, rank 0 writes --checkpoint and the script exits 143. It resumes from that file, with
any number of workers, at the next example. It declares its length, --epochs epochs of the
training set, to the agent. The last line is `final accuracy: X` (test set, 0..1).

    srun pollux-agent -- python3 train_ddp.py --checkpoint ckpt.pt --epochs 30   (job script)
    torchrun --nproc-per-node 2 train_ddp.py --checkpoint /tmp/ckpt.pt           (plain DDP)
    python3 train_ddp.py --checkpoint /tmp/ckpt.pt                                (alone)

--log-examples PREFIX appends, for every micro-batch, the indices each worker trained on to
PREFIX.rankR (`examples epoch=E rank=R: i,j,...`; a file per worker, as Slurm's output
forwarding may split long lines), from which tests/ddp_cluster.sh checks that no example is
repeated or skipped across a resize.
"""

import argparse
import sys

import torch

import pollux

TEST_SIZE = 300


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", required=True, help="checkpoint file (resumed if present)")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--lr", type=float, default=0.05, help="learning rate at --init-batch-size")
    parser.add_argument("--lr-rule", choices=pollux.LR_RULES, default="sqrt")
    parser.add_argument("--init-batch-size", type=int, default=32)
    parser.add_argument("--max-batch-size", type=int, default=512)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=0, help="DataLoader worker processes")
    parser.add_argument("--log-examples", metavar="PREFIX")
    args = parser.parse_args(argv)
    if args.epochs < 1 or args.init_batch_size < 1 or args.max_batch_size < args.init_batch_size:
        parser.error("--epochs and --init-batch-size must be >= 1, --max-batch-size >= it")
    return args


def digits():
    """(train, test) TensorDatasets of the 8x8 digits, pixels scaled to [0, 1]."""
    from sklearn.datasets import load_digits
    data = load_digits()
    inputs = torch.tensor(data.data, dtype=torch.float32) / 16.0
    targets = torch.tensor(data.target, dtype=torch.long)
    order = torch.randperm(len(inputs), generator=torch.Generator().manual_seed(1234))
    test, train = order[:TEST_SIZE], order[TEST_SIZE:]
    return (torch.utils.data.TensorDataset(inputs[train], targets[train]),
            torch.utils.data.TensorDataset(inputs[test], targets[test]))


def mlp():
    torch.manual_seed(0)  # every worker starts from the same weights
    return torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(),
                               torch.nn.Linear(128, 10))


def accuracy(model, dataset, device):
    inputs, targets = (tensor.to(device) for tensor in dataset.tensors)
    with torch.no_grad():
        return (model(inputs).argmax(dim=1) == targets).float().mean().item()


def main(argv):
    args = parse_args(argv)
    rank, replicas = pollux.init_process_group()
    # The GPU init_process_group chose from LOCAL_RANK, as under torchrun; else the CPU.
    device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
    train_set, test_set = digits()
    net = mlp().to(device)
    optimizer = torch.optim.SGD(net.parameters(), lr=args.lr, momentum=0.9)
    # Halves the rate every 10 epochs' worth of steps at the initial batch size.
    scheduler = torch.optim.lr_scheduler.StepLR(
        optimizer, step_size=10 * len(train_set) // args.init_batch_size, gamma=0.5)
    limits = pollux.BatchSizeLimits(init_batch_size=args.init_batch_size,
                                     max_batch_size=args.max_batch_size, min_local_bsz=8,
                                     max_local_bsz=256)
    loader = pollux.AdaptiveDataLoader(train_set, limits, seed=args.seed,
                                       num_workers=args.workers)
    # epochs=: the job's declared length (AdaptDL's remaining_epochs_until), with which
    # sched/pollux estimates the time the job has left.
    model = pollux.AdaptiveDataParallel(net, optimizer, scheduler, loader=loader,
                                        lr_rule=args.lr_rule, epochs=args.epochs)
    if model.restore(args.checkpoint) and rank == 0:
        print(f"resumed from {args.checkpoint} at epoch {loader.batch_sampler.epoch}, example "
              f"{loader.batch_sampler.position} of {len(train_set)}, with {replicas} "
              f"worker(s)", flush=True)
    loss_fn = torch.nn.functional.cross_entropy
    examples_log = open(f"{args.log_examples}.rank{rank}", "a") if args.log_examples else None
    for epoch in loader.epochs(args.epochs):
        loss_sum, examples = 0.0, 0  # this rank's, for the epoch's mean loss
        for inputs, targets in loader:
            inputs, targets = inputs.to(device), targets.to(device)
            optimizer.zero_grad()
            loss = loss_fn(model(inputs), targets)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0)
            optimizer.step()
            scheduler.step()
            loss_sum += loss.detach() * len(inputs)
            examples += len(inputs)
            if examples_log:
                examples_log.write(f"examples epoch={epoch} rank={rank}: "
                                   f"{','.join(map(str, loader.last_indices))}\n")
                examples_log.flush()
            if model.stop_requested:  # the agent asked for a checkpoint: every rank stops
                model.checkpoint(args.checkpoint)
                if model.rank == 0:
                    print(f"checkpointed at epoch {epoch}, example "
                          f"{loader.batch_sampler.position}", flush=True)
                return 143
        if model.rank == 0:  # the current rank 0: live changes may move it
            print(f"epoch {epoch}: batch {loader.global_batch_size}, loss "
                  f"{float(loss_sum) / max(examples, 1):.4g}, test accuracy "
                  f"{accuracy(net, test_set, device):.4f}", flush=True)
    model.checkpoint(args.checkpoint)
    if model.rank == 0:
        print(f"final accuracy: {accuracy(net, test_set, device):.4f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
