"""An unmodified Hugging Face Accelerate script (no traceprof import): an MLP
with dropout, AdamW and a DataLoader, all through Accelerator.prepare() on
the CPU (under torchrun with 2 processes: DistributedDataParallel over gloo;
under `accelerate launch --cpu`: one process), STEPS optimizer steps with
accelerator.backward().  The main process prints each step's loss averaged
over the processes (float.hex) and a SHA-256 of the parameters after
training.  For test/integration/torch_accelerate.sh.

    torchrun --nproc_per_node 2 accelerate_tiny.py STEPS
    accelerate launch --cpu accelerate_tiny.py STEPS
"""
import hashlib
import sys

import torch
import torch.distributed as dist
import torch.nn.functional as F
from accelerate import Accelerator
from accelerate.utils import set_seed


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(),
                                           torch.nn.Dropout(0.1))
        self.head = torch.nn.Linear(32, 4)

    def forward(self, x):
        return self.head(self.encoder(x))


def main():
    steps = int(sys.argv[1])
    torch.set_num_threads(1)
    acc = Accelerator(cpu=True)
    set_seed(0)
    g = torch.Generator().manual_seed(1)
    n = 4 * steps * acc.num_processes
    data = torch.utils.data.TensorDataset(torch.randn(n, 16, generator=g),
                                          torch.randint(0, 4, (n,), generator=g))
    loader = torch.utils.data.DataLoader(data, batch_size=4, shuffle=False)
    model = MLP()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    model, opt, loader = acc.prepare(model, opt, loader)
    losses = []
    model.train()
    for x, y in loader:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        acc.backward(loss)
        opt.step()
        losses.append(acc.gather(loss.detach()).mean().item())
    acc.wait_for_everyone()
    if acc.is_main_process:
        print("processes", acc.num_processes, "distributed", acc.distributed_type)
        print("losses", " ".join(float(v).hex() for v in losses))
        h = hashlib.sha256()
        for name, p in sorted(acc.unwrap_model(model).named_parameters()):
            h.update(name.encode())
            h.update(p.detach().contiguous().numpy().tobytes())
        print("parameters", h.hexdigest())
    # Both ranks leave together and destroy the gloo group themselves: one
    # that exits while the other still prints can abort in gloo at teardown
    # ("terminate called without an active exception": rank 0 of a run
    # without traceprof, once in a clean-clone make check).
    acc.wait_for_everyone()
    acc.end_training()
    if dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
