"""TRACEPROF_PYTHON_STACK's costs (bench/run row 10).

Usage: python_stack.py LIBPROBE KIND DEPTH TRIALS.
  pydll, cdll: calls tp_probe() of test/scope/probe.c (two CUDA runtime
      calls, cudaGetDeviceCount and cudaRuntimeGetVersion, on the stand-in
      runtime) through ctypes.PyDLL (keeps the GIL) or ctypes.CDLL (releases
      it) from a Python stack DEPTH frames deep; prints the thread CPU time
      per CUDA call.
  calls: calls an empty Python function; prints the time per call (what the
      profile function that python/traceprof/pyboot installs adds to Python code),
      after one tp_probe() call, so that the thread has recorded, as a training
      loop's thread has: its profile function then also publishes each push and
      pop for the live file (collector/live_pub.h).
Each figure: median, min, max of TRIALS bursts.  bench/run runs each with
the option on and off, both under traceprof.
"""
import ctypes
import statistics
import sys
import time


def main():
    kind, depth, trials = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    lib = (ctypes.PyDLL if kind == "pydll" else ctypes.CDLL)(sys.argv[1])
    v = ctypes.c_int(0)
    probe, ref = lib.tp_probe, ctypes.byref(v)
    reps = 2000 if kind != "calls" else 200000

    def empty():
        pass

    def burst():
        if kind == "calls":
            for _ in range(reps):
                empty()
        else:
            for _ in range(reps):
                probe(ref)

    def down(n):
        # The frames of this function make the stack DEPTH deep at the call
        # (the module's frame, main() and burst() count as three).
        if n > 4:
            return down(n - 1)
        burst()
        t0 = time.thread_time_ns()
        burst()
        return time.thread_time_ns() - t0

    if kind == "calls":
        probe(ref)
    per = reps * (1.0 if kind == "calls" else 2.0)
    got = sorted(down(depth) / per for _ in range(trials))
    print("median_ns=%.1f min_ns=%.1f max_ns=%.1f" % (statistics.median(got), got[0], got[-1]))


main()
