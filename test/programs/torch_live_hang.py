"""A two-rank gloo job on the CPU (torchrun) where rank 1 stops calling
all_reduce at step HANG_STEP for HANG_S seconds, then catches up: rank 0
waits inside its all_reduce meanwhile.  Each step: a tiny model's forward,
backward, an all_reduce of a tensor inside a module's forward (Sync), an
optimizer step (the steps of --step torch).  For test/integration/live_torch.sh.  Prints, on rank 0,
"done STEPS".

    torchrun --nproc_per_node 2 torch_live_hang.py STEPS
"""
import os
import sys
import time

import torch
import torch.distributed as dist


class Sync(torch.nn.Module):
    """All-reduces its input in its forward."""

    def forward(self, t):
        dist.all_reduce(t)
        return t


def main():
    steps = int(sys.argv[1])
    hang_step = int(os.environ.get("HANG_STEP", "5"))
    hang_s = float(os.environ.get("HANG_S", "6"))
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Linear(16, 16)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.ones(4, 16)
    sync = Sync()
    for i in range(steps):
        loss = model(x).sum()
        loss.backward()
        if rank == 1 and i == hang_step:
            time.sleep(hang_s)
        sync(torch.ones(8))
        opt.step()
        opt.zero_grad()
        time.sleep(0.05)
    dist.barrier()
    dist.destroy_process_group()
    if rank == 0:
        print("done", steps)


if __name__ == "__main__":
    main()
