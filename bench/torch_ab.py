"""The training loop of bench/torch_cost.py, every case in ONE process
(bench/run, row 9): blocks of iterations rotate through the cases of
bench/torch_cases.py, so that what differs from one process to the next
(where the heap and the code landed, which core, the clock) is the same for
all of them.

    torch_ab.py BLOCKS ITERS_PER_BLOCK

Runs under traceprof with TRACEPROF_STEP=torch and
TRACEPROF_PYTORCH=modules,ops (bench/run sets them, with pyboot on
PYTHONPATH).  Prints, per case, the median wall time of an iteration (ns)
and the median thread CPU time, as "case_wall=... case_cpu=...".
"""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from torch_cases import Loop  # noqa: E402


def main():
    blocks, per = int(sys.argv[1]), int(sys.argv[2])
    loop = Loop("torch_ab.py")
    wall = {c: [] for c in loop.cases}
    cpu = {c: [] for c in loop.cases}
    for _ in range(5):
        loop.it()
    for _ in range(blocks):
        for c in loop.cases:
            with loop.case(c):
                loop.it()  # one iteration to settle into the case, not counted
                for _ in range(per):
                    w0, c0 = time.perf_counter_ns(), time.thread_time_ns()
                    loop.it()
                    wall[c].append(time.perf_counter_ns() - w0)
                    cpu[c].append(time.thread_time_ns() - c0)
    print(" ".join("%s_wall=%.0f %s_cpu=%.0f" % (c, statistics.median(wall[c]), c,
                                                 statistics.median(cpu[c])) for c in loop.cases))


main()
