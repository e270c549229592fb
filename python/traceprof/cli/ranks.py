"""`traceprof summary --by rank`: the step times of each rank of a job,
their time in collectives, and the straggler."""

import heapq
import os
import re
import sys
import time
from array import array

from ..layout import (DOC_DISTRIBUTED_INFO, FOOTER_RUN_ID, FOOTER_RUN_ID_FROM, FOOTER_START,
                      META_PROCESS_NAME, RUN_ID_FROM_PARENT, STEP_PHASE_ARG, STEP_PHASE_STARTUP,
                      STEP_PHASE_TEARDOWN)
from ..traces import aggtable
from ..traces.cut import note_cut
from ..traces.events import STEP_RE, finite_num
from .inputs import merge_inputs, rank_of
from ..traces.pfmerge import meta_of, scan
from ..traces.pftrace import PFTRACE_RE, PftraceReader
from ..traces.reader import TraceError, TraceReader
from .summary_comm import CommWait
from .table import fmt_time, print_table, write_csv
from ..traces.tail import load_meta
from ..util import err, fail


_RANK_NAME = re.compile(r"^rank (\d+)[: ]")


def _median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2.0


def robust(durs):
    """(median, trimmed mean, median absolute deviation) of a rank's step
    durations: a quarter of the steps (at least one from each end when
    there are 3 or more) left out at each end of the trimmed mean, so that
    one slow step (start-up in step 0, a checkpoint) cannot move any of
    the three far."""
    xs = sorted(durs)
    n = len(xs)
    med = _median(xs)
    k = max(1, n // 4) if n >= 3 else 0
    mid = xs[k:n - k]
    return med, sum(mid) / len(mid), _median([abs(x - med) for x in xs])


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
    ranks of a few hundred steps keeps 16 bytes a step, not 130.  procs:
    the processes that recorded them, (host, pid) -> the files."""

    def __init__(self):
        self.durs, self.nums = array("d"), array("q")
        self.procs = {}
        self.runs = {}  # run id (the footer's run_id) -> the files

    def extend(self, pairs, host, pid, path, run=(None, None)):
        """run: the file's (run id, start time), from its footer (None
        each where it has none: older files, merged ones)."""
        for d, n in pairs:
            self.durs.append(d)
            self.nums.append(n)
        self.procs.setdefault((host, str(pid), run[1]), []).append(path)
        if run[0] is not None:
            self.runs.setdefault(run[0], []).append(path)

    def __iter__(self):
        return zip(self.durs, self.nums)

    def __len__(self):
        return len(self.durs)


def _processes(procs):
    """procs ((host, pid, start) -> files) with a file of unknown host or
    start time (a merged file keeps its ranks' pids, not their hosts; a
    file of an older library has no start) counted with the known ones of
    the same pid.  One pid that started twice (two runs, pids reused as in
    containers) is two processes."""
    out = {}
    for (host, pid, start), files in procs.items():
        if host is None:
            host = next((h for h, p, _ in procs if p == pid and h is not None), None)
        if start is None:
            start = next((t for h, p, t in procs if p == pid and h in (host, None)
                          and t is not None), None)
        out.setdefault((host, pid, start), []).extend(files)
    return out


def _files(files):
    names = sorted(set(os.path.basename(f) for f in files))
    return ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")


def _mixed_ids(steps):
    """None, or one line naming the run ids of files that mix runs."""
    runs = {}
    for s in steps.values():
        for rid, files in s.runs.items():
            runs.setdefault(rid, []).extend(files)
    if len(runs) < 2:
        return None
    order = sorted(runs.items(), key=lambda kv: min(kv[1]))
    shown = "; ".join("%s: %s" % (rid, _files(files)) for rid, files in order[:3])
    if len(order) > 3:
        shown += "; and %d more" % (len(order) - 3)
    return ("these files mix runs: %d run ids (the footers' run_id: %s); name the files of "
            "one run, record each run in its own folder (traceprof run --run-name NAME, or "
            "--folder), or pass --all-runs to count them together" % (len(order), shown))


def mixed_runs(steps):
    """None, or one line saying which runs a job's files mix: a rank whose
    steps come from several processes (a (host, pid) each: two runs, or a
    restarted worker), or that has a step number twice (the same pid in
    two runs, as in containers); first, files of several run ids."""
    ids = _mixed_ids(steps)
    if ids:
        return ids
    bad = []
    for rank in sorted(steps):
        s = steps[rank]
        dup = len(set(s.nums)) != len(s.nums)
        if len(_processes(s.procs)) > 1 or dup:
            bad.append(rank)
    if not bad:
        return None
    s = steps[bad[0]]
    procs = sorted(_processes(s.procs).items(), key=lambda kv: min(kv[1]))
    twice = {p for i, ((h, p, _), _f) in enumerate(procs)
             if any(p == q for (_h, q, _t), _g in procs[:i])}
    shown = "; ".join("pid %s%s%s: %s" % (
        pid, " on %s" % host if host else "",
        " started %s" % time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(start / 1e9))
        if pid in twice and start is not None else "",
        _files(files)) for (host, pid, start), files in procs[:4])
    if len(procs) > 4:
        shown += "; and %d more" % (len(procs) - 4)
    what = ("%d processes (%s)" % (len(procs), shown) if len(procs) > 1 else
            "one process, its step numbers twice (%s: the same steps read twice, as a "
            "merged file beside its inputs, or two runs with the same pid)" % shown)
    more = "" if len(bad) == 1 else " (and %d more ranks alike)" % (len(bad) - 1)
    return ("these files mix runs: rank %d was recorded by %s%s; name the files of one run, "
            "record each run in its own folder (traceprof run --run-name NAME, or "
            "--folder), or pass --all-runs to count them together" % (bad[0], what, more))


def _footer_host(ft):
    h = ft.get("hostname") if isinstance(ft, dict) else None
    return h if isinstance(h, str) else None


def _footer_run(ft):
    """(run id, start time in ns) of a file's footer, None each where it
    has none (a file of a library before them, a merged file).  An id
    derived from the parent process is not one: the processes of one run
    need not share their parent (common/launcher.h)."""
    if not isinstance(ft, dict):
        return None, None
    rid, start = ft.get(FOOTER_RUN_ID), ft.get(FOOTER_START)
    if ft.get(FOOTER_RUN_ID_FROM) == RUN_ID_FROM_PARENT:
        rid = None
    return (rid if isinstance(rid, str) and rid else None,
            start if isinstance(start, int) and start > 0 else None)


# The steps that are not iterations: the span before the program's first
# step (set-up, `import torch`) and after its last (teardown), as the
# library labels them (args.phase; the table's "step_phases").  Left out of
# every rank's statistics, and said so once; a run whose only step is the
# whole run keeps it (nothing else to judge by).
_EDGES = (STEP_PHASE_STARTUP, STEP_PHASE_TEARDOWN)


def _from_tables(files, steps, comm, notes=None, edges=None):
    """Fills steps and comm from the files' tables; False (and nothing
    kept) when one file has no table or left steps out.  A table that left
    names out (past 4,096) is still read, as --by all's is not: its steps
    are all there, and the collectives are named early (set-up's first
    rendezvous); one line says how many such files there were."""
    cut = []
    for path in files:
        x = aggtable.aggregate_of(path, notes)
        t, ft = x if x else (None, None)
        if t is None or t.get("steps_cut") or not isinstance(t.get("rank"), int):
            steps.clear()
            comm.clear()
            return False
        if t.get("names_cut") or t.get("calls_cut"):
            cut.append(path)
        host, run, by_pid = _footer_host(ft), _footer_run(ft), {}
        phases = {(r[0], r[1]) for r in t.get("step_phases") or ()
                  if isinstance(r, list) and len(r) == 3 and r[2] in _EDGES}
        for n, dur, pid in t["steps"]:
            if (n, pid) in phases:
                if edges is not None:
                    edges.append(n)
                continue
            by_pid.setdefault(pid, []).append((dur / 1e3, n))
        for pid, lst in by_pid.items():
            steps.setdefault(t["rank"], _Steps()).extend(lst, host, pid, path, run)
        comm.setdefault(t["rank"], CommWait()).add_table(t["rows"])
    if cut:
        err("note: %d file%s (%s%s) left names out of %s table (more than 4,096 names): the "
            "time in collectives counts the names kept; --from-events reads every event" % (
                len(cut), "s" if len(cut) > 1 else "", os.path.basename(cut[0]),
                ", ..." if len(cut) > 1 else "", "their" if len(cut) > 1 else "its"))
    return True


def _rank_meta(path):
    """What rank_of reads of load_meta(path): the head alone where it holds
    distributedInfo (load_meta keeps the head's members), else load_meta,
    whose tail decodes the footer (its tables: half the reading of a 1 MB
    file, which the events' reading decodes again)."""
    head = TraceReader(path).head()
    return head if DOC_DISTRIBUTED_INFO in head else load_meta(path)


def _from_events(files, steps, comm, edges=None):
    for i, path in enumerate(files):
        try:
            pf = PFTRACE_RE.search(path)
            rank, _ = rank_of(meta_of(scan(path)) if pf else _rank_meta(path), path, i)
            by_pid, pid_rank, waits, meta = {}, {}, {}, {}
            for kind, batch, b in (PftraceReader(path) if pf else TraceReader(path)).items():
                if kind != "events":
                    if kind == "meta":
                        meta[batch] = b
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
                    dur = finite_num(ev.get("dur"))
                    if dur is None or dur < 0:
                        continue
                    m = STEP_RE.match(name)
                    if m:
                        args = ev.get("args")
                        if isinstance(args, dict) and args.get(STEP_PHASE_ARG) in _EDGES:
                            if edges is not None:
                                edges.append(int(m.group(1)))
                            continue
                        by_pid.setdefault(str(ev.get("pid")), []).append((dur, int(m.group(1))))
                    elif finite_num(ev.get("ts")) is not None:
                        w = waits.get(str(ev.get("pid")))
                        if w is None:
                            w = waits[str(ev.get("pid"))] = CommWait()
                        w.add_event(name, ev.get("cat"), dur)
        except TraceError as e:
            fail(str(e), 1)
        host, run = _footer_host(meta.get("traceprof")), _footer_run(meta.get("traceprof"))
        for pid, lst in by_pid.items():
            steps.setdefault(pid_rank.get(pid, rank), _Steps()).extend(lst, host, pid, path, run)
        for pid, w in waits.items():
            c = comm.setdefault(pid_rank.get(pid, rank), CommWait())
            for (name, cat), r in w.rows.items():
                c.add(name, cat, *r)


def summary_ranks(a):
    """--by rank: the step times of each rank of a job, from its per-rank
    files (or their folder) or from a merged file, where each process's
    name starts with "rank N" (traceprof merge); JSON or .pftrace.
    Streams: only the steps' durations and the collectives' sums are kept.
    The tables (each file's footer) when every file has a complete one,
    else the events: the same rows either way."""
    files, _ = merge_inputs(a.files, "summary")
    for f in files:
        note_cut(f)
    steps = {}  # rank -> _Steps
    comm = {}   # rank -> CommWait
    notes = []  # why a table was not used: said once the events were read
    edges = []  # start-up and teardown steps left out
    miss = aggtable.missing_parts(files)
    if miss:
        notes.append(miss)
    if getattr(a, "from_events", False) or miss or \
            not _from_tables(files, steps, comm, notes, edges):
        del edges[:]
        _from_events(files, steps, comm, edges)
    for n in notes:
        err(n)
    if not steps:
        err("nothing to show: no ProfilerStep#N events in %s (traceprof_step() was not "
            "called in a recorded step?)" % ", ".join(files))
        return 1
    mix = mixed_runs(steps)
    if mix and not getattr(a, "all_runs", False):
        err(mix)
        return 1
    if edges:
        err("note: %d start-up and teardown step%s (the span before each process's first "
            "step and after its last) left out of the step statistics" % (
                len(edges), "" if len(edges) == 1 else "s"))
    median = _job_median(steps)
    rows = []
    for rank in sorted(steps):
        lst = steps[rank]
        durs = lst.durs
        worst = max(lst)
        med, trim, mad = robust(durs)
        c = comm.get(rank)
        wait = c.wait() / len(durs) if c is not None and c.calls() else None
        rows.append((rank, len(durs), sum(durs) / len(durs), min(durs), worst[0], worst[1],
                     med, trim, mad, wait))
    _report(a, rows, median)
    return 0


def verdict(rows):
    """(rank, why) of the rank holding the job back.  rows: (rank, steps,
    mean, min, max, slowest step, its number, median, trimmed mean, MAD,
    time in collectives a step or None).  Where every rank has collectives
    and the ranks differ more in their time there than in their median
    steps, they wait for each other there and their steps last about as
    long as the slowest's: the rank that waits least is the one the others
    wait for (HTA's and Nsight's straggler analyses look for the rank whose
    collectives start last).  Otherwise (no collectives, or collectives
    that wait for nothing: a few ns of enqueueing) the rank with the
    longest median step."""
    waits = [r[9] for r in rows]
    meds = [r[6] for r in rows]
    if all(w is not None for w in waits) and max(waits) - min(waits) > max(meds) - min(meds):
        s = min(rows, key=lambda r: (r[9], -r[6], r[0]))
        return s, "wait"
    return max(rows, key=lambda r: (r[6], r[7], -r[0])), "step"


def _report(a, rows, median):
    def rel(x):
        return x / median if median else 0.0
    has_comm = any(r[9] is not None for r in rows)
    if a.csv:
        out = [["rank", "steps", "mean_us", "min_us", "max_us", "slowest_step",
                "slowest_vs_job_median", "median_us", "trimmed_mean_us", "mad_us",
                "comm_us_per_step"]]
        for r in rows:
            out.append([str(r[0]), str(r[1]), "%.3f" % r[2], "%.3f" % r[3], "%.3f" % r[4],
                        str(r[5]), "%.3f" % rel(r[4]), "%.3f" % r[6], "%.3f" % r[7],
                        "%.3f" % r[8], "" if r[9] is None else "%.3f" % r[9]])
        write_csv(out)
    else:
        head = ["Rank", "Steps", "Median", "Trim mean", "MAD", "Min", "Max"] + \
            (["Collectives/step"] if has_comm else []) + ["Slowest step", "vs job median"]
        print_table(head, [[str(r[0]), str(r[1]), fmt_time(r[6]), fmt_time(r[7]),
                            fmt_time(r[8]), fmt_time(r[3]), fmt_time(r[4])] +
                           ([fmt_time(r[9]) if r[9] is not None else "-"] if has_comm else []) +
                           ["#%d" % r[5], "%.2fx" % rel(r[4])] for r in rows])
        print("ranks: %d, steps: %d, job median step %s" % (
            len(rows), sum(r[1] for r in rows), fmt_time(median)))
    if len(rows) < 2:
        return
    s, how = verdict(rows)
    if how == "wait":
        others = _median([r[9] for r in rows if r is not s])
        line = ("straggler: rank %d (waits %s a step in collectives, the least: the other "
                "ranks wait a median %s for it; median step %s, the job's %s)" % (
                    s[0], fmt_time(s[9]), fmt_time(others), fmt_time(s[6]), fmt_time(median)))
    else:
        mid = _median([r[6] for r in rows])
        line = ("straggler: rank %d (median step %s, %+.1f%% against the median rank's %s; "
                "slowest step #%d at %s, %.2fx the job median)" % (
                    s[0], fmt_time(s[6]), 100.0 * (s[6] - mid) / mid if mid else 0.0,
                    fmt_time(mid), s[5], fmt_time(s[4]), rel(s[4])))
    print(line, file=sys.stderr if a.csv else sys.stdout)
