"""`traceprof summary --by comm`: communication time and bytes per NCCL
collective, from the ranges NCCL marks in its NVTX domain "NCCL" (their
"bytes" arg is the decoded payload's message size, docs/trace-format.md)."""

import math

from ..layout import CAT_USER_ANNOTATION
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
