"""What profiling costs a training loop, side by side (bench/run, row 9):
the unmodified loop of test/programs/torch_block.py (an MLP and a small
transformer block, AdamW, on the CPU, one thread).

    torch_cost.py plain|profiler ITERS

plain: the loop as it is (bench/run runs it without traceprof and under
traceprof's options); profiler: inside torch.profiler.profile with CPU
activity, recording every iteration.  Prints median_us, the median time of
an iteration after 5 warm-up iterations (the thread's CPU time would leave
out nothing that matters here; wall time is what a user sees).
"""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "programs"))

import torch.nn.functional as F  # noqa: E402
from torch_block import setup  # noqa: E402


def loop(iters, model, opt, x, y):
    times = []
    for _ in range(iters + 5):
        t0 = time.perf_counter_ns()
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        times.append(time.perf_counter_ns() - t0)
    return times[5:]


def main():
    mode, iters = sys.argv[1], int(sys.argv[2])
    model, opt, x, y = setup()
    if mode == "profiler":
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU]):
            times = loop(iters, model, opt, x, y)
    else:
        times = loop(iters, model, opt, x, y)
    print("median_us=%.1f" % (statistics.median(times) / 1000))


if __name__ == "__main__":
    main()
