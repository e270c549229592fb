"""The per-call cost of traceprof's PyTorch hooks (bench/run, row 9).

    torch_hooks.py modules|optimizer|ops TRIALS

modules: forward calls of a Sequential of 64 Identity modules (65 module
calls each); prints ns per module call.  optimizer: SGD.step() on one
parameter; prints ns per step() call.  ops: torch.add on two small tensors
(on the GPU when there is one); prints ns per op.  Each figure is the median
over TRIALS of the thread's CPU time per call.  bench/run runs it without
traceprof, with the library and no option, and with each option, and
reports the differences.
"""
import statistics
import sys
import time

import torch


def per_call(fn, calls, trials):
    fn()  # warm up: the first call installs lazily entered state (emit_nvtx)
    vals = []
    for _ in range(trials):
        t0 = time.thread_time_ns()
        fn()
        vals.append((time.thread_time_ns() - t0) / calls)
    return statistics.median(vals), min(vals), max(vals)


def main():
    what, trials = sys.argv[1], int(sys.argv[2])
    if what == "modules":
        model = torch.nn.Sequential(*[torch.nn.Identity() for _ in range(64)])
        x = torch.zeros(1)
        reps = 200

        def fn():
            for _ in range(reps):
                model(x)
        m = per_call(fn, reps * 65, trials)
    elif what == "optimizer":
        p = torch.zeros(1, requires_grad=True)
        p.grad = torch.zeros(1)
        opt = torch.optim.SGD([p], lr=0.0)
        reps = 2000

        def fn():
            for _ in range(reps):
                opt.step()
        m = per_call(fn, reps, trials)
    else:
        dev = "cuda" if torch.cuda.is_available() else "cpu"
        a = torch.zeros(4, device=dev)
        torch.nn.Identity()(a)  # a module call: ops' emit_nvtx is entered at the first
        reps = 5000

        def fn():
            for _ in range(reps):
                torch.add(a, a)
            if dev == "cuda":
                torch.cuda.synchronize()
        m = per_call(fn, reps, trials)
    print("median_ns=%.1f min_ns=%.1f max_ns=%.1f" % m)


main()
