"""A small PyTorch training loop on the GPU for the real-GPU test
(test/integration/gpu_torch.sh): an MLP, SGD, a forward and a backward
marker and one traceprof.step() per step, deterministic so that a run under
traceprof prints exactly what a plain run prints.

    torch_train.py STEPS                     train, print the losses
    torch_train.py STEPS --profiler FILE     the same, with torch.profiler
        recording steps 2 and 3 (wait=1, warmup=1, active=2 from step 0)
        and exporting its Chrome trace to FILE; prints how many kernels
        torch's own trace holds
"""
import os
import sys

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import traceprof  # noqa: E402  (python/traceprof/)


def main():
    steps = int(sys.argv[1])
    prof_file = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--profiler" else None
    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True)
    dev = torch.device("cuda")
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x = torch.randn(64, 256, device=dev)
    y = torch.randint(0, 10, (64,), device=dev)
    prof = None
    if prof_file:
        prof = torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],
            schedule=torch.profiler.schedule(wait=1, warmup=1, active=2, repeat=1),
            on_trace_ready=lambda p: p.export_chrome_trace(prof_file))
        prof.start()
    losses = []
    for _ in range(steps):
        with traceprof.marker("forward"):
            loss = F.cross_entropy(model(x), y)
        with traceprof.marker("backward"):
            opt.zero_grad(set_to_none=True)
            loss.backward()
        opt.step()
        losses.append(loss.item())
        traceprof.step()
        if prof:
            prof.step()
    if prof:
        prof.stop()
    print("losses", " ".join("%.6f" % v for v in losses))
    if prof_file:
        import json
        with open(prof_file) as f:
            ev = json.load(f)["traceEvents"]
        print("profiler kernels", sum(1 for e in ev if e.get("cat") == "kernel"))


main()
