"""An unmodified FSDP2 training script (no traceprof import) for torchrun on
the CPU: gloo, a CPU device mesh, each block and the whole model sharded
with torch.distributed.fsdp.fully_shard, AdamW, STEPS steps.  Rank 0 prints
the losses averaged over the ranks (float.hex) and a SHA-256 of the full
parameters after training (gathered from the shards).  For
test/integration/torch_fsdp.sh.

    torchrun --nproc_per_node 2 torch_fsdp2.py STEPS
"""
import hashlib
import sys

import torch
import torch.distributed as dist
import torch.nn.functional as F


class Block(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc1 = torch.nn.Linear(d, 2 * d)
        self.fc2 = torch.nn.Linear(2 * d, d)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(x)))


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Linear(8, 16)
        self.blocks = torch.nn.ModuleList([Block(16), Block(16)])
        self.head = torch.nn.Linear(16, 4)

    def forward(self, x):
        x = self.embed(x)
        for b in self.blocks:
            x = b(x)
        return self.head(x)


def train(steps):
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard
    rank, world = dist.get_rank(), dist.get_world_size()
    mesh = init_device_mesh("cpu", (world,))
    torch.manual_seed(0)
    model = Net()
    for b in model.blocks:
        fully_shard(b, mesh=mesh)
    fully_shard(model, mesh=mesh)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    g = torch.Generator().manual_seed(rank)
    x = torch.randn(6, 8, generator=g)
    y = torch.randint(0, 4, (6,), generator=g)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        t = loss.detach().clone()
        dist.all_reduce(t)
        losses.append(t.item() / world)
    h = hashlib.sha256()
    for name, p in sorted(model.named_parameters()):
        full = p.full_tensor() if hasattr(p, "full_tensor") else p
        h.update(name.encode())
        h.update(full.detach().contiguous().numpy().tobytes())
    return losses, h.hexdigest()


def main():
    dist.init_process_group("gloo")
    torch.set_num_threads(1)
    losses, digest = train(int(sys.argv[1]))
    if dist.get_rank() == 0:
        print("losses", " ".join(float(v).hex() for v in losses))
        print("parameters", digest)
    # Both ranks leave together: a rank that destroys its gloo group while
    # the other still talks to it can abort in gloo ("terminate called
    # without an active exception", seen once without traceprof).
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
