"""An unmodified PyTorch script (no traceprof import) with a DataLoader of
num_workers=2 started by METHOD (fork or spawn), and optionally a
torch.compile'd model (inductor on the CPU).  Prints the losses and what
each worker saw, so that a run under traceprof can be compared with a plain
one.  For test/integration/torch_procs.sh.

    torch_loader.py fork|spawn STEPS [--compile]
"""
import os
import sys

import torch
import torch.nn.functional as F


class Data(torch.utils.data.Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        info = torch.utils.data.get_worker_info()
        return torch.randn(8, generator=g), i % 2, info.id if info else -1


def main():
    method, steps = sys.argv[1], int(sys.argv[2])
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    fwd = torch.compile(model) if "--compile" in sys.argv else model
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = torch.utils.data.DataLoader(Data(), batch_size=4, num_workers=2,
                                         multiprocessing_context=method)
    losses, workers = [], set()
    for k, (x, y, w) in enumerate(loader):
        if k == steps:
            break
        opt.zero_grad()
        loss = F.cross_entropy(fwd(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        workers.update(w.tolist())
    print("losses", " ".join("%.5f" % v for v in losses))
    print("workers", sorted(workers))


if __name__ == "__main__":
    main()
