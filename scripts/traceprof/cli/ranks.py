"""`traceprof summary --by rank`: the step times of each rank of a job,
and the straggler."""

import heapq
import re
import sys
from array import array

from ..layout import META_PROCESS_NAME
from ..traces import aggtable
from ..traces.events import STEP_RE, finite_num
from .inputs import merge_inputs, rank_of
from ..traces.pfmerge import meta_of, scan
from ..traces.pftrace import PFTRACE_RE, PftraceReader
from ..traces.reader import TraceError, TraceReader
from .table import fmt_time, print_table, write_csv
from ..traces.tail import load_meta
from ..util import err, fail


_RANK_NAME = re.compile(r"^rank (\d+)[: ]")


def _median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2.0


def _job_median(steps):
    """The median of every rank's step durations (steps: rank -> _Steps),
    without one list of them all (a Python float in a list is about 32
    bytes; a job of 10 million steps would hold 300 MiB for it): each rank's
    durations sorted into an array of their own, merged lazily up to the
    middle."""
    runs = [array("d", sorted(lst.durs)) for lst in steps.values()]
    n = sum(len(r) for r in runs)
    if not n:
        return 0.0
    it = heapq.merge(*runs)
    for i, x in enumerate(it):
        if i == (n - 1) // 2:
            return x if n % 2 else (x + next(it)) / 2.0
    return 0.0


class _Steps:
    """One rank's (duration, step number) pairs, unboxed: a job of 1,000
    ranks of a few hundred steps keeps 16 bytes a step, not 130."""

    def __init__(self):
        self.durs, self.nums = array("d"), array("q")

    def extend(self, pairs):
        for d, n in pairs:
            self.durs.append(d)
            self.nums.append(n)

    def __iter__(self):
        return zip(self.durs, self.nums)

    def __len__(self):
        return len(self.durs)


def summary_ranks(a):
    """--by rank: the step times of each rank of a job, from its per-rank
    files (or their folder) or from a merged file, where each process's
    name starts with "rank N" (traceprof merge); JSON or .pftrace.
    Streams: only the steps' durations are kept."""
    files, _ = merge_inputs(a.files, "summary")
    steps = {}  # rank -> [(duration, step number)]
    # Every file carries its table: only the files' ends are read, one file
    # at a time (only the steps' durations are kept).
    fast = not getattr(a, "from_events", False)
    for path in files if fast else ():
        x = aggtable.aggregate_of(path)
        t = x[0] if x else None
        if t is None or t.get("steps_cut") or not isinstance(t.get("rank"), int):
            fast = False
            steps = {}
            break
        steps.setdefault(t["rank"], _Steps()).extend((dur / 1e3, n) for n, dur, _ in t["steps"])
    for i, path in enumerate(() if fast else files):
        try:
            pf = PFTRACE_RE.search(path)
            rank, _ = rank_of(meta_of(scan(path)) if pf else load_meta(path), path, i)
            by_pid, pid_rank = {}, {}
            for kind, batch, _ in (PftraceReader(path) if pf else TraceReader(path)).items():
                if kind != "events":
                    continue
                for ev in batch:
                    if not isinstance(ev, dict):
                        continue
                    name = ev.get("name")
                    if ev.get("ph") == "M" and name == META_PROCESS_NAME:
                        args = ev.get("args")
                        m = _RANK_NAME.match(str(args.get("name"))) \
                            if isinstance(args, dict) else None
                        if m:
                            pid_rank[str(ev.get("pid"))] = int(m.group(1))
                        continue
                    if ev.get("ph") != "X" or not isinstance(name, str):
                        continue
                    m = STEP_RE.match(name)
                    dur = finite_num(ev.get("dur"))
                    if m and dur is not None and dur >= 0:
                        by_pid.setdefault(str(ev.get("pid")), []).append((dur, int(m.group(1))))
        except TraceError as e:
            fail(str(e), 1)
        for pid, lst in by_pid.items():
            steps.setdefault(pid_rank.get(pid, rank), _Steps()).extend(lst)
    if not steps:
        err("nothing to show: no ProfilerStep#N events in %s (traceprof_step() was not "
            "called in a recorded step?)" % ", ".join(files))
        return 1
    median = _job_median(steps)
    rows = []
    for rank in sorted(steps):
        lst = steps[rank]
        durs = [d for d, _ in lst]
        worst = max(lst)
        rows.append((rank, len(durs), sum(durs) / len(durs), min(durs), worst[0], worst[1]))
    slow = max(rows, key=lambda r: (r[2], -r[0]))
    mean_med = _median([r[2] for r in rows])

    def rel(x):
        return x / median if median else 0.0
    if a.csv:
        out = [["rank", "steps", "mean_us", "min_us", "max_us", "slowest_step",
                "slowest_vs_job_median"]]
        for r in rows:
            out.append([str(r[0]), str(r[1]), "%.3f" % r[2], "%.3f" % r[3], "%.3f" % r[4],
                        str(r[5]), "%.3f" % rel(r[4])])
        write_csv(out)
    else:
        print_table(["Rank", "Steps", "Mean", "Min", "Max", "Slowest step", "vs job median"],
                    [[str(r[0]), str(r[1]), fmt_time(r[2]), fmt_time(r[3]), fmt_time(r[4]),
                      "#%d" % r[5], "%.2fx" % rel(r[4])] for r in rows])
        print("ranks: %d, steps: %d, job median step %s" % (
            len(rows), sum(r[1] for r in rows), fmt_time(median)))
    if len(rows) > 1:
        print("straggler: rank %d (mean step %s, %+.1f%% against the median rank's %s; "
              "slowest step #%d at %s, %.2fx the job median)" % (
                  slow[0], fmt_time(slow[2]),
                  100.0 * (slow[2] - mean_med) / mean_med if mean_med else 0.0,
                  fmt_time(mean_med), slow[5], fmt_time(slow[4]), rel(slow[4])),
              file=sys.stderr if a.csv else sys.stdout)
    return 0
