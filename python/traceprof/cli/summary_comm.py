"""`traceprof summary --by comm`: communication time and bytes per NCCL
collective, from the ranges NCCL marks in its NVTX domain "NCCL" (their
"bytes" arg is the decoded payload's message size, docs/trace-format.md)."""

import math

from ..layout import CAT_CPU_OP, CAT_USER_ANNOTATION
from ..traces.events import finite_num
from .table import fmt_time, print_table, write_csv


def comm_event(ev):
    """(name, bytes or None) when ev is a range of the NCCL domain, else None."""
    args = ev.get("args")
    if ev.get("cat") != CAT_USER_ANNOTATION or not isinstance(args, dict) \
            or args.get("domain") != "NCCL":
        return None
    b = args.get("bytes")
    ok = isinstance(b, (int, float)) and not isinstance(b, bool) and math.isfinite(b) and b >= 0
    return str(ev.get("name", "")), (b if ok else None)


def comm_batch(rows, batch):
    """Adds a batch of events' NCCL ranges (complete events with a numeric
    ts) to rows {name: [calls, time (us), bytes, calls with bytes]}, as
    they stream."""
    for ev in batch:
        if not isinstance(ev, dict) or ev.get("ph") != "X" or finite_num(ev.get("ts")) is None:
            continue
        c = comm_event(ev)
        if c is None:
            continue
        dur = finite_num(ev.get("dur"))
        if dur is None or dur < 0:
            dur = 0
        r = rows.get(c[0])
        if r is None:
            r = rows[c[0]] = [0, 0.0, 0, 0]
        r[0] += 1
        r[1] += float(dur)
        if c[1] is not None:
            r[2] += int(c[1])
            r[3] += 1


def print_comm(a, rows):
    """rows: comm_batch's; prints one row per name."""
    order = sorted(rows.items(), key=lambda kv: (-kv[1][1], kv[0]))
    shown = order if a.top == 0 else order[:a.top]
    if a.csv:
        out = [["name", "calls", "total_us", "avg_us", "total_bytes", "avg_bytes"]]
        for name, r in shown:
            out.append([name, str(r[0]), "%.3f" % r[1], "%.3f" % (r[1] / r[0]),
                        str(r[2]) if r[3] else "", "%.0f" % (r[2] / r[3]) if r[3] else ""])
        write_csv(out)
        return 0
    table = []
    for name, r in shown:
        table.append([name, str(r[0]), fmt_time(r[1]), fmt_time(r[1] / r[0]),
                      fmt_bytes(r[2]) if r[3] else "-",
                      fmt_bytes(r[2] / r[3]) if r[3] else "-"])
    print_table(["Collective", "Calls", "Total", "Avg", "Bytes", "Avg bytes"], table)
    total = sum(r[1] for r in rows.values())
    nbytes = sum(r[2] for r in rows.values())
    print("NCCL ranges (host side, NVTX domain NCCL): %d names, %d calls%s; %s, %s" % (
        len(rows), sum(r[0] for r in rows.values()),
        "" if len(shown) == len(rows) else ", top %d shown" % len(shown),
        fmt_time(total), fmt_bytes(nbytes)))
    return 0


def fmt_bytes(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return ("%d %s" % (n, unit)) if unit == "B" else ("%.1f %s" % (n, unit))
        n /= 1024.0
    return str(n)


# ---- The collectives' share of each rank's steps (summary --by rank).
# Host-side collective calls, told by name alone, so that a file's table
# (format/aggregate.c keys its rows by name and category, without args)
# and its events give the same answer: PyTorch's c10d operators (`c10d::`
# cpu_ops, --pytorch ops), gloo's ranges (`gloo:all_reduce`, on its worker
# threads: the time a collective waited for its peers) and NCCL's (its
# NVTX ranges, `ncclAllReduce`; PyTorch's `nccl:` titles).  GPU kernels
# are left out: host time only, as the steps are.
COLL_PREFIXES = ("c10d::", "gloo:", "nccl")
COLL_CATS = (CAT_CPU_OP, CAT_USER_ANNOTATION)


def is_collective(name, cat):
    return cat in COLL_CATS and isinstance(name, str) and name.startswith(COLL_PREFIXES)


class CommWait:
    """One rank's time in collectives, per name and category: calls, total
    and longest call (us).  wait() leaves each name's longest call out, so
    that one call (start-up's first rendezvous, a checkpoint's barrier)
    cannot decide a rank's wait; the table's rows hold the same three."""

    def __init__(self):
        self.rows = {}  # (name, cat) -> [calls, total, longest]

    def add(self, name, cat, calls, total, longest):
        r = self.rows.get((name, cat))
        if r is None:
            self.rows[(name, cat)] = [calls, total, longest]
        else:
            r[0] += calls
            r[1] += total
            r[2] = max(r[2], longest)

    def add_table(self, rows):
        """A file's aggregate rows [name, cat, calls, total, self, min, max] (ns)."""
        for name, cat, calls, total, _, _, hi in rows:
            if is_collective(name, cat):
                self.add(name, cat, calls, total / 1e3, hi / 1e3)

    def add_event(self, name, cat, dur):
        if is_collective(name, cat):
            self.add(name, cat, 1, dur, dur)

    def calls(self):
        return sum(r[0] for r in self.rows.values())

    def wait(self):
        """The time in collectives (us), each name's longest call left out."""
        return sum(r[1] - r[2] for r in self.rows.values())
