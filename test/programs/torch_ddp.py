"""An unmodified distributed training script (no traceprof import) for
torchrun on the CPU: gloo, a small MLP, AdamW, one all-reduce of the loss
per step, and a sleep of SLEEP_MS per step on the rank named by SLOW_RANK
(the straggler summary --by rank must name).  The all-reduces are
asynchronous, waited for after the loop: a synchronizing collective in each
step would make every rank's steps as long as the slowest's.  Prints, on
rank 0, the losses averaged over the ranks.  For test/integration/torch_torchrun.sh.

    torchrun --nproc_per_node 2 torch_ddp.py STEPS
"""
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F


def main():
    steps = int(sys.argv[1])
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    slow = int(os.environ.get("SLOW_RANK", "-1"))
    pause = float(os.environ.get("SLEEP_MS", "0")) / 1000
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(rank)
    x = torch.randn(8, 16, generator=g)
    y = torch.randint(0, 2, (8,), generator=g)
    losses, works = [], []
    for _ in range(steps):
        if rank == slow:
            time.sleep(pause)
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        t = loss.detach().clone()
        works.append(dist.all_reduce(t, async_op=True))
        losses.append(t)
    for w in works:
        w.wait()
    if rank == 0:
        n = dist.get_world_size()
        print("losses", " ".join("%.6f" % (v.item() / n) for v in losses))
    # Both ranks leave together: a rank that tears gloo down while its peer
    # still talks to it aborts now and then, without traceprof too
    # ("terminate called without an active exception").
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
