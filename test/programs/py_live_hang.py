"""One rank of a made-up Python job on the stand-in runtime, for
test/integration/live_pystack.sh: STEPS steps, each train_step() (a short
sleep, clear(): one cudaMemset, and sync(): one cudaStreamSynchronize, both
through ctypes.CDLL, which releases the GIL as an extension module's long
call does) and traceprof_step() (when traced).  The stand-in's
STANDIN_SYNC_SLEEP_AT and STANDIN_MEMSET_SLEEP_AT knobs make one of those
calls block.  With OWN_PROFILE_AT=N the program sets a profile function of
its own (sys.setprofile) before step N, as cProfile or a debugger would.
Prints "done STEPS".

    py_live_hang.py STEPS
"""
import ctypes
import os
import sys
import time

rt = ctypes.CDLL("libcudart.so.13")
try:  # traceprof_step(), from the preloaded library; none untraced
    step_mark = ctypes.CDLL(None).traceprof_step
except AttributeError:
    def step_mark():
        pass


def sync():
    return rt.cudaStreamSynchronize(None)


def clear():
    return rt.cudaMemset(None, 0, 0)


def train_step():
    time.sleep(0.05)
    clear()
    sync()


def mine(frame, event, arg):
    pass


def main(steps):
    own = int(os.environ.get("OWN_PROFILE_AT", "-1"))
    for i in range(steps):
        if i == own:
            sys.setprofile(mine)
        train_step()
        step_mark()
    print("done", steps)


main(int(sys.argv[1]))
