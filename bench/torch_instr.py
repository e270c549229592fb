"""bench/torch_ab.py's cases counted in instructions (bench/run, row 9):
the same training loop, every case in one process, run under callgrind
with its instrumentation off until the loop starts; each case's iterations
are counted alone (CALLGRIND_ZERO_STATS before, CALLGRIND_DUMP_STATS_AT
after, through a tiny library of client requests that bench/run compiles)
and read per thread, so the figure is the training thread's own work:
deterministic where the wall time of a shared 2-vCPU VM spreads by 30%.

    valgrind --tool=callgrind --instr-atstart=no --separate-threads=yes ... \
        torch_instr.py CGCTL_SO ITERS ROUNDS

Runs under traceprof with TRACEPROF_STEP=torch and
TRACEPROF_PYTORCH=modules,ops (bench/run sets them), and switches per case
as torch_ab.py does: plain, profiler (torch.profiler with CPU activity),
modules (traceprof's module hooks), ops (those hooks and the RecordFunction
observer).  bench/run reads the dumps ("<case>-<round>").
"""
import ctypes
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "programs"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch_block import setup  # noqa: E402


def main():
    cg = ctypes.CDLL(sys.argv[1])
    cg.tp_cg_dump.argtypes = [ctypes.c_char_p]
    iters, rounds = int(sys.argv[2]), int(sys.argv[3])
    tt = sys.modules.get("traceprof_torch")
    if tt is None or not tt._handles or not tt.observer:
        sys.exit("torch_instr.py: run it under traceprof with TRACEPROF_PYTORCH=modules,ops on x86-64")
    hooks = [(h.hooks_dict_ref(), h.id) for h in tt._handles]
    saved = {k: d[k] for d, k in hooks}
    stop = ctypes.CDLL(None).traceprof_torch_ops_stop
    stop.argtypes, stop.restype = [], None
    model, opt, x, y = setup()

    def it():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()

    def hooks_on(on):
        for d, k in hooks:
            if on:
                d[k] = saved[k]
            else:
                d.pop(k, None)

    it()
    stop()
    for _ in range(3):
        it()
    cg.tp_cg_start()
    for r in range(rounds):
        for c in ("plain", "profiler", "modules", "ops"):
            hooks_on(c in ("modules", "ops"))
            prof = None
            if c == "profiler":
                prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU])
                prof.__enter__()
            elif c == "ops":
                tt._start_observer(torch)
            it()
            it()
            cg.tp_cg_zero()
            for _ in range(iters):
                it()
            cg.tp_cg_dump(("%s-%d" % (c, r)).encode())
            if prof is not None:
                prof.__exit__(None, None, None)
            elif c == "ops":
                stop()
    hooks_on(False)


main()
