# SPDX-License-Identifier: GPL-2.0-or-later
"""What the pollux.parallel tests share: a fake agent connection, data, and gloo ranks."""

import os

import ports


class FakeTrainer:
    """pollux.Trainer's interface, with a decision and a checkpoint request at set steps."""

    def __init__(self, decide_at=None, decision=None, stop_at=None, resize_at=None,
                 resize=None):
        self.steps = []
        self.declared = []
        self.checkpoints = 0
        self.decide_at, self._decision, self.stop_at = decide_at, decision, stop_at
        self.resize_at, self._resize = resize_at, resize  # the agent's resize request, once

    def declare_target(self, epochs=None, examples=None, examples_per_epoch=None):
        self.declared.append((epochs, examples, examples_per_epoch))
        return True

    def report_step(self, step_time, local_bsz, accum_steps, examples, epochs, grad_sqr=None,
                    grad_var=None):
        self.steps.append((local_bsz, accum_steps, examples, grad_sqr, grad_var))
        return True

    def decision(self):
        ready = self.decide_at is not None and len(self.steps) >= self.decide_at
        return self._decision if ready else None

    def resize_request(self):
        if self.resize_at is None or len(self.steps) < self.resize_at:
            return None
        request, self._resize = self._resize, None
        return request

    def checkpoint_requested(self):
        return self.stop_at is not None and len(self.steps) >= self.stop_at

    def checkpointed(self):
        self.checkpoints += 1
        return True

    def close(self):
        pass


def dataset(torch, size=64):
    generator = torch.Generator().manual_seed(0)
    inputs = torch.randn(size, 5, generator=generator)
    targets = inputs @ torch.tensor([1.0, -2.0, 0.5, 3.0, 0.0]) + \
        0.3 * torch.randn(size, generator=generator)
    return torch.utils.data.TensorDataset(inputs, targets.unsqueeze(1))


def model(torch):
    torch.manual_seed(1)
    return torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))


def _rank_main(rank, world, port, target, arguments, results):
    os.environ.update({"RANK": str(rank), "WORLD_SIZE": str(world),
                       "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)})
    import torch.distributed as dist
    import pollux
    pollux.init_process_group("gloo")
    try:
        results.put((rank, target(rank, world, *arguments)))
    finally:
        dist.destroy_process_group()


def process_context():
    """The multiprocessing context of the tests' gloo processes: each starts clean (not a fork
    of the test, whose gloo state it must not share), from a server that imported torch once."""
    import torch.multiprocessing as mp
    context = mp.get_context("forkserver")
    context.set_forkserver_preload(["torch", "torch.distributed"])
    return context


def run_ranks(target, arguments=(), world=2, timeout=120):
    """target(rank, world, *arguments) in `world` gloo processes; its results by rank."""
    context = process_context()
    results = context.Queue()
    port = ports.rendezvous_port()
    processes = [context.Process(target=_rank_main,
                                 args=(rank, world, port, target, arguments, results))
                 for rank in range(world)]
    for process in processes:
        process.start()
    try:
        got = dict(results.get(timeout=timeout) for _ in range(world))
    finally:  # a worker that failed leaves the other waiting in gloo: never hang the test
        for process in processes:
            process.join(10)
            if process.is_alive():
                process.kill()
    return [got[rank] for rank in range(world)]
