"""TRACEPROF_PYTHON_STACK's cost per recorded CUDA call (bench/run row 10).

Usage: python_stack.py LIBPROBE DEPTH TRIALS.  Calls tp_probe() of
test/scope/probe.c (two CUDA runtime calls: cudaGetDeviceCount,
cudaRuntimeGetVersion, on the stand-in runtime) through ctypes.PyDLL, which
keeps the GIL, from a Python stack DEPTH frames deep.  Prints the thread CPU
time per CUDA call (median, min, max of TRIALS bursts), which bench/run runs
with the option on and off, both under traceprof.
"""
import ctypes
import statistics
import sys
import time


def main():
    lib = ctypes.PyDLL(sys.argv[1])
    depth, trials = int(sys.argv[2]), int(sys.argv[3])
    v = ctypes.c_int(0)
    probe, ref = lib.tp_probe, ctypes.byref(v)
    reps = 2000

    def burst():
        for _ in range(reps):
            probe(ref)

    def down(n):
        # The frames of this function make the stack DEPTH deep at the call
        # (the module's frame and main() count as two).
        if n > 4:
            return down(n - 1)
        burst()
        t0 = time.thread_time_ns()
        burst()
        return time.thread_time_ns() - t0

    got = sorted(down(depth) / (reps * 2.0) for _ in range(trials))
    print("median_ns=%.1f min_ns=%.1f max_ns=%.1f" % (statistics.median(got), got[0], got[-1]))


main()
