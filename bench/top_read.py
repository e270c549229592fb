#!/usr/bin/env python3
"""`traceprof top` over a large job's live files (issue 46 item 4): N
synthetic processes' files (test/lib/genlive.py static: 64 recent steps
each, one open call), then

  - `top --once` as a command, wall clock from start to exit (Python's
    start and the imports included), the median of BENCH_TOP_TRIALS
    (default 5) runs, with their spread, and its CPU time (user + system:
    what it costs whatever else the machine runs);
  - one refresh of the view (top_live.snapshot: list, read, check, judge,
    straggler), in this process, the median of as many.

The target: both within a second for 1,000 processes on a 2-core
machine.  bench/run's row 15 runs it and prints its lines; it also runs
alone:

    bench/top_read.py [N]          (default 1000)

Prints lines `name: value`."""
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TP = os.path.join(TOP, "scripts", "traceprof")
sys.path.insert(0, os.path.join(TOP, "scripts"))
sys.path.insert(0, os.path.join(TOP, "test", "lib"))

import genlive  # noqa: E402
from traceprof.cli.top_live import live_dirs, snapshot  # noqa: E402


def spread(xs):
    return "%.3f-%.3f" % (min(xs), max(xs))


def main(argv):
    n = int(argv[0]) if argv else 1000
    trials = int(os.environ.get("BENCH_TOP_TRIALS", "5"))
    tmp = tempfile.mkdtemp(prefix="tp-top-")
    try:
        live = os.path.join(tmp, "job", ".live")
        os.makedirs(live)
        genlive.static(live, n)
        size = sum(os.path.getsize(os.path.join(live, f)) for f in os.listdir(live))
        once, cpu = [], []
        for _ in range(trials):
            # Written again before each trial (not timed), so that none is
            # stale on a loaded machine.
            genlive.static(live, n)
            u0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.monotonic()
            p = subprocess.run([sys.executable, TP, "top", os.path.join(tmp, "job"), "--once"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            once.append(time.monotonic() - t)
            u1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu.append(u1.ru_utime + u1.ru_stime - u0.ru_utime - u0.ru_stime)
            if p.returncode:
                raise SystemExit("top --once failed: %s" % p.stderr.decode()[-300:])
            lines = p.stdout.decode().splitlines()
            if sum(1 for x in lines if x.startswith("rank ")) != n or \
                    not lines[-1].startswith("straggler: rank 1 "):
                raise SystemExit("top --once printed something else: %s" % (
                    [x for x in lines if not x.endswith("running")][:6]))
        dirs, where = live_dirs(os.path.join(tmp, "job"))
        refresh = []
        for _ in range(trials):
            genlive.static(live, n)
            t = time.monotonic()
            snap = snapshot(dirs, where)
            refresh.append(time.monotonic() - t)
            assert len(snap["processes"]) == n and snap["straggler"]["rank"] == 1
        print("top --once over %d live files (%.1f KiB each): %.3f s  (spread %s, %d runs; "
              "CPU %.3f s)" % (n, size / n / 1024.0, statistics.median(once), spread(once),
                               trials, statistics.median(cpu)))
        print("top: one refresh of %d processes (in process): %.3f s  (spread %s)" % (
            n, statistics.median(refresh), spread(refresh)))
        ok = statistics.median(once) < 1.0 and statistics.median(refresh) < 1.0
        print("top: both within 1 s (issue 46 item 4): %s" % ("yes" if ok else "NO"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
