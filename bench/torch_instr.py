"""bench/torch_ab.py's cases counted in instructions (bench/run, row 9):
the same training loop, every case of bench/torch_cases.py in one process,
run under callgrind with its instrumentation off until the loop starts;
each case's iterations are counted alone (CALLGRIND_ZERO_STATS before,
CALLGRIND_DUMP_STATS_AT after, through a tiny library of client requests
that bench/run compiles) and read per thread, so the figure is the training
thread's own work: deterministic where the wall time of a shared 2-vCPU VM
spreads by 30%.

    valgrind --tool=callgrind --instr-atstart=no --separate-threads=yes ... \\
        torch_instr.py CGCTL_SO ITERS ROUNDS

Runs under traceprof with TRACEPROF_STEP=torch and
TRACEPROF_PYTORCH=modules,ops on x86-64 (bench/run sets them).  bench/run
reads the dumps ("<case>-<round>").
"""
import ctypes
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from torch_cases import Loop  # noqa: E402


def main():
    cg = ctypes.CDLL(sys.argv[1])
    cg.tp_cg_dump.argtypes = [ctypes.c_char_p]
    iters, rounds = int(sys.argv[2]), int(sys.argv[3])
    loop = Loop("torch_instr.py")
    if "ops" not in loop.cases:
        sys.exit("torch_instr.py: no RecordFunction observer here (x86-64 only)")
    for _ in range(3):
        loop.it()
    cg.tp_cg_start()
    for r in range(rounds):
        for c in ("plain", "profiler", "modules", "ops"):
            with loop.case(c):
                loop.it()
                loop.it()
                cg.tp_cg_zero()
                for _ in range(iters):
                    loop.it()
                cg.tp_cg_dump(("%s-%d" % (c, r)).encode())


main()
