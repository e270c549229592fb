"""An unmodified training script that runs its own PyTorch profilers
(test/integration/torch_profiler_coexist.sh).

    torch_profiler_coexist.py OUTDIR

A small MLP trained with SGD, 8 steps; the program itself profiles:
  steps 0-1  nothing of its own (traceprof's NVTX emission starts here, at
             the first module call);
  step 2     torch.profiler.profile() around the step, no schedule, with a
             record_function("my_range") around the forward; its Chrome
             trace goes to OUTDIR/own_plain.json;
  steps 3-5  torch.profiler.profile(schedule=wait=1, active=1) stepped by
             prof.step(), its trace to OUTDIR/own_sched.json;
  step 6     torch.autograd.profiler.emit_nvtx() around the step (with no
             GPU its __enter__ raises from torch.cuda.synchronize(): the
             script prints what happened, which must be the same with and
             without traceprof);
  step 7     torch.cuda.memory._record_memory_history() (the same: printed,
             whatever it does here).
Prints the losses, and for each own trace how many aten::addmm and
record_function ranges it holds."""
import json
import os
import sys

import torch
import torch.nn as nn


def outcome(fn):
    try:
        fn()
        return "ok"
    except Exception as e:
        return "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")


def main():
    out = sys.argv[1]
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    x = torch.randn(32, 8)
    losses = []

    def step():
        with torch.autograd.profiler.record_function("my_range"):
            loss = m(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append("%.6f" % loss.item())

    acts = [torch.profiler.ProfilerActivity.CPU]
    step()
    step()
    with torch.profiler.profile(activities=acts, record_shapes=True) as prof:
        step()
    prof.export_chrome_trace(os.path.join(out, "own_plain.json"))
    sched = torch.profiler.schedule(wait=1, warmup=0, active=1, repeat=1)
    ready = lambda p: p.export_chrome_trace(os.path.join(out, "own_sched.json"))  # noqa: E731
    with torch.profiler.profile(activities=acts, schedule=sched, on_trace_ready=ready) as prof:
        for _ in range(3):
            step()
            prof.step()

    def nvtx():
        with torch.autograd.profiler.emit_nvtx():
            step()
    print("emit_nvtx:", outcome(nvtx))
    if len(losses) < 7:
        step()  # emit_nvtx raised before its step: the run keeps its 8 steps

    def memory():
        torch.cuda.memory._record_memory_history(max_entries=1000)
        step()
        torch.cuda.memory._record_memory_history(enabled=None)
    print("_record_memory_history:", outcome(memory))
    if len(losses) < 8:
        step()
    print("losses", " ".join(losses))
    for name in ("own_plain", "own_sched"):
        ev = json.load(open(os.path.join(out, name + ".json")))["traceEvents"]
        addmm = [e for e in ev if e.get("name") == "aten::addmm"]
        rng = [e for e in ev if e.get("name") == "my_range" and e.get("ph") == "X"]
        dims = sum(1 for e in addmm if e.get("args", {}).get("Input Dims"))
        print("%s: %d aten::addmm (%d with Input Dims), %d my_range" % (name, len(addmm), dims,
                                                                     len(rng)))


main()
