"""An unmodified DistributedDataParallel script (no traceprof import) for
torchrun on the CPU (gloo), where one rank does more work: the rank named
by WORK_RANK trains on WORK_X times the batch in each step.  DDP all-reduces
the gradients in backward() and waits for the slowest rank, so every
rank's step takes about as long as the slowest's: only the time each rank
waits in its collectives tells the straggler (the rank that waits least).
STARTUP_RANK sleeps STARTUP_MS before the loop (a long start-up: with no
schedule it lies in step 0).  SLEEP_RANK sleeps SLEEP_MS in each step.
SYNC=0 replaces DDP by an asynchronous all-reduce of the loss, waited for
after the loop (each rank's steps keep their own length, but a rank that
started late makes the others wait at the end); SYNC=none trains each
rank alone (no collective after the process group's set-up).  Prints, on rank 0, the
losses averaged over the ranks.  For test/integration/summary_straggler.sh.

    torchrun --nproc_per_node 2 torch_ddp_work.py STEPS
"""
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F


def env(name, default):
    return int(os.environ.get(name, default))


def main():
    steps = int(sys.argv[1])
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    if rank == env("STARTUP_RANK", "-1"):
        time.sleep(env("STARTUP_MS", "0") / 1000)
    mode = os.environ.get("SYNC", "1")
    sync, alone = mode == "1", mode == "none"
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 2))
    if sync:
        model = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    batch = env("BATCH", "256") * (env("WORK_X", "1") if rank == env("WORK_RANK", "-1") else 1)
    g = torch.Generator().manual_seed(rank)
    x = torch.randn(batch, 256, generator=g)
    y = torch.randint(0, 2, (batch,), generator=g)
    losses, works = [], []
    for _ in range(steps):
        if rank == env("SLEEP_RANK", "-1"):
            time.sleep(env("SLEEP_MS", "0") / 1000)
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        t = loss.detach().clone()
        if sync:
            dist.all_reduce(t)
        elif not alone:
            works.append(dist.all_reduce(t, async_op=True))
        losses.append(t)
    for w in works:
        w.wait()
    if rank == 0:
        n = 1 if alone else dist.get_world_size()
        print("losses", " ".join("%.6f" % (v.item() / n) for v in losses))
    # Both ranks leave together: a rank that tears gloo down while its peer
    # still talks to it aborts now and then, without traceprof too
    # ("terminate called without an active exception").
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
