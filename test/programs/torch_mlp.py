"""An unmodified PyTorch training script (no traceprof import): an MLP with
named submodules, SGD, deterministic on the CPU, so that a run under
traceprof prints exactly what a plain run prints.  For
test/integration/torch_zero_code.sh.

    torch_mlp.py STEPS [--accumulate N] [--thread] [--cuda]
        --accumulate N: N forward/backward passes per optimizer step
        --thread: train in a second Python thread (module events there)
        --cuda: on the GPU (test/integration/gpu_torch_zero_code.sh)
"""
import os
import sys
import threading

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch
import torch.nn.functional as F


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU())
        self.head = torch.nn.Linear(64, 4)

    def forward(self, x):
        return self.head(self.encoder(x))


def train(steps, accumulate, out, dev):
    torch.manual_seed(0)
    model = MLP().to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(16, 32).to(dev)
    y = torch.randint(0, 4, (16,)).to(dev)
    for _ in range(steps):
        opt.zero_grad()
        for _ in range(accumulate):
            loss = F.cross_entropy(model(x), y) / accumulate
            loss.backward()
        opt.step()
        out.append(loss.item())


def main():
    steps = int(sys.argv[1])
    accumulate = int(sys.argv[sys.argv.index("--accumulate") + 1]) \
        if "--accumulate" in sys.argv else 1
    dev = "cuda" if "--cuda" in sys.argv else "cpu"
    if dev == "cuda":
        torch.use_deterministic_algorithms(True)
    losses = []
    if "--thread" in sys.argv:
        t = threading.Thread(target=train, args=(steps, accumulate, losses, dev))
        t.start()
        t.join()
    else:
        train(steps, accumulate, losses, dev)
    print("losses", " ".join("%.6f" % v for v in losses))


main()
