"""The training loop of bench/torch_cost.py, every case in ONE process
(bench/run, row 9): blocks of iterations rotate through the cases, so that
what differs from one process to the next (where the heap and the code
landed, which core, the clock) is the same for all of them.

    torch_ab.py BLOCKS ITERS_PER_BLOCK

Runs under traceprof with TRACEPROF_STEP=torch and
TRACEPROF_PYTORCH=modules,ops (bench/run sets them, with pyboot on
PYTHONPATH), then switches per block:
  plain     traceprof's module hooks removed, no operator emission
            (the optimizer's step hook stays: a few microseconds);
  profiler  the same, inside torch.profiler.profile with CPU activity;
  modules   traceprof's module hooks, as `--pytorch modules` installs them;
  ops       those hooks and the library's RecordFunction observer, as
            `--pytorch ops` starts it (preload/torch_ops.c; x86-64);
  ops_nvtx  those hooks and PyTorch's NVTX emission, the way ops go where
            the observer cannot run and with `shapes` (CUDA builds of
            PyTorch only).
Prints, per case, the median wall time of an iteration (ns) and the median
thread CPU time, as "case_wall=... case_cpu=...".
"""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "programs"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch_block import setup  # noqa: E402


def main():
    blocks, per = int(sys.argv[1]), int(sys.argv[2])
    tt = sys.modules.get("traceprof_torch")
    if tt is None or not tt._handles:
        sys.exit("torch_ab.py: run it under traceprof with TRACEPROF_PYTORCH=modules,ops")
    mm = torch.nn.modules.module
    hooks = [(h.hooks_dict_ref(), h.id) for h in tt._handles]
    saved = {}
    for d, k in hooks:
        saved[k] = d[k]
    ap = torch.autograd.profiler
    model, opt, x, y = setup()

    def it():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()

    it()  # the first module call starts the operator emission: stop it again
    if tt._nvtx:
        ap._disable_profiler()
    nvtx_cfg = ap.ProfilerConfig(ap.ProfilerState.NVTX, False, False, False, False, False,
                                 ap._ExperimentalConfig())
    nvtx_ok = bool(tt._nvtx) or (tt.observer and torch.backends.cuda.is_built())
    import ctypes
    stop = ctypes.CDLL(None).traceprof_torch_ops_stop
    stop.argtypes, stop.restype = [], None
    observer_ok = tt.observer
    stop()

    def hooks_on(on):
        for d, k in hooks:
            if on:
                d[k] = saved[k]
            else:
                d.pop(k, None)

    cases = ["plain", "profiler", "modules"] + (["ops"] if observer_ok else []) + \
        (["ops_nvtx"] if nvtx_ok else [])
    wall = {c: [] for c in cases}
    cpu = {c: [] for c in cases}
    for _ in range(5):
        it()
    for _ in range(blocks):
        for c in cases:
            hooks_on(c in ("modules", "ops", "ops_nvtx"))
            prof = None
            if c == "profiler":
                prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU])
                prof.__enter__()
            elif c == "ops":
                tt._start_observer(torch)
            elif c == "ops_nvtx":
                ap._enable_profiler(nvtx_cfg, set())
            it()  # one iteration to settle into the case, not counted
            for _ in range(per):
                w0, c0 = time.perf_counter_ns(), time.thread_time_ns()
                it()
                wall[c].append(time.perf_counter_ns() - w0)
                cpu[c].append(time.thread_time_ns() - c0)
            if prof is not None:
                prof.__exit__(None, None, None)
            elif c == "ops":
                stop()
            elif c == "ops_nvtx":
                ap._disable_profiler()
    hooks_on(False)
    del mm
    print(" ".join("%s_wall=%.0f %s_cpu=%.0f" % (c, statistics.median(wall[c]), c, statistics.median(cpu[c]))
                   for c in cases))


main()
