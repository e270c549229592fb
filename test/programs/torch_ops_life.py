"""An unmodified training script for --pytorch ops through the library's
RecordFunction observer (test/integration/torch_ops_observer.sh).

    torch_ops_life.py STEPS

A small MLP trained with SGD for STEPS steps, inside the program's own
torch.profiler (its ProfilerStep#N ranges must not become traceprof's
steps).  In each step: a record_function("my_range") around the forward,
a second thread that runs three aten::mm (joined before the backward), and
in step 2 an operator of our own that calls itself 139 times (140 nested
operator calls, deeper than the library's op stack).  Prints the losses,
how many aten::mm the program's own profiler saw, and after each step
whether PyTorch has global RecordFunction callbacks (at::hasGlobalCallbacks:
the program's torch.profiler registers thread-local ones only, so under
traceprof this shows whether the library's observer is switched on) and
how many global module forward hooks there are."""
import ctypes
import os
import sys
import threading

import torch
import torch.nn as nn

lib = torch.library.Library("tptest", "DEF")
lib.define("rec(Tensor x, int n) -> Tensor")


def _rec(x, n):
    return x.clone() if n == 0 else torch.ops.tptest.rec(x, n - 1)


lib.impl("rec", _rec, "CPU")


def side():
    a = torch.ones(4, 4)
    for _ in range(3):
        torch.mm(a, a)


def main():
    steps = int(sys.argv[1])
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    x = torch.randn(32, 8)
    losses = []
    glob = ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so"))
    glob = glob._ZN2at18hasGlobalCallbacksEv
    glob.restype = ctypes.c_bool
    on = []
    hooks = []
    mm = torch.nn.modules.module
    acts = [torch.profiler.ProfilerActivity.CPU]
    with torch.profiler.profile(activities=acts) as prof:
        for i in range(steps):
            with torch.autograd.profiler.record_function("my_range"):
                loss = m(x).square().mean()
            t = threading.Thread(target=side, name="side")
            t.start()
            t.join()
            if i == 2:
                torch.ops.tptest.rec(x, 139)
            loss.backward()
            opt.step()
            opt.zero_grad()
            prof.step()
            losses.append("%.6f" % loss.item())
            on.append(str(int(glob())))
            hooks.append(str(len(mm._global_forward_hooks)))
    own = sum(1 for e in prof.events() if e.name == "aten::mm")
    print("losses", " ".join(losses))
    print("own profiler aten::mm", own)
    print("global callbacks after each step", " ".join(on))
    print("global forward hooks after each step", " ".join(hooks))


main()
