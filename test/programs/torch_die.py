"""An unmodified PyTorch training loop (no traceprof import) that dies in
the middle of a window, for test/integration/torch_cut.sh (issue 44): an
MLP, SGD, deterministic on the CPU, 10 ms of sleep a step so that a few
seconds hold a few hundred steps.

    torch_die.py MODE STEPS

It prints "pid PID" first, then after each optimizer step "ended I AT_NS"
(time.monotonic_ns, CLOCK_MONOTONIC; I from 0, as --step torch numbers the
step that the I-th optimizer step ends).  After STEPS steps, in the middle
of the next one (after its forward), it prints "dying AT_NS" and: MODE
abort calls os.abort(); segv reads address 0 (ctypes.string_at(0)); oom
allocates and touches 16 MiB blocks until the kernel kills it (the test
has put it in a memory cgroup; after 8 GiB it gives up and exits 3).
MODE loop trains until it is killed or interrupted (no KeyboardInterrupt
handler)."""
import os
import sys
import time

import torch
import torch.nn.functional as F


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU())
        self.head = torch.nn.Linear(64, 4)

    def forward(self, x):
        return self.head(self.encoder(x))


def say(*words):
    sys.stdout.write(" ".join(str(w) for w in words) + "\n")
    sys.stdout.flush()


def die(mode):
    say("dying", time.monotonic_ns())
    if mode == "abort":
        os.abort()
    if mode == "segv":
        import ctypes
        ctypes.string_at(0)
    if mode == "oom":
        hold = []
        for _ in range(512):
            hold.append(bytearray(b"\1") * (16 << 20))
        sys.exit(3)


def main():
    mode, steps = sys.argv[1], int(sys.argv[2])
    say("pid", os.getpid())
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = MLP()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(16, 32)
    y = torch.randint(0, 4, (16,))
    i = 0
    while True:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        if i >= steps and mode != "loop":
            die(mode)
        loss.backward()
        time.sleep(0.01)
        opt.step()
        say("ended", i, time.monotonic_ns())
        i += 1
        if mode == "loop" and i >= steps:
            break


main()
