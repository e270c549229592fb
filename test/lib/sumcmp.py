#!/usr/bin/env python3
"""Compares two CSV outputs of `traceprof summary` (the table from the files'
aggregates against the one from their events): the same rows, the same
counts, and times equal to within what the JSON's durations round (each
event's dur is within a ns of its true duration, format/trace.c, so a sum
over N calls may differ by N ns; printed times have 3 decimals of us).  A
self time also carries its children's rounding: each event is a direct
child of at most one slice, so all the self times together are off by at
most a ns per event of the file, the bound used for each.

    sumcmp.py A.csv B.csv        exit 0 when equal, 1 (and what differs) if not
"""
import csv
import sys

NS = 0.001  # us


def load(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], {r[0]: r[1:] for r in rows[1:]}


def main():
    ha, a = load(sys.argv[1])
    hb, b = load(sys.argv[2])
    bad = []
    if ha != hb:
        bad.append("headers differ: %s / %s" % (ha, hb))
    if sorted(a) != sorted(b):
        bad.append("rows differ: only in A %s, only in B %s"
                   % (sorted(set(a) - set(b))[:5], sorted(set(b) - set(a))[:5]))
    events = 0
    if "calls" in ha:
        col = ha.index("calls") - 1
        events = sum(int(r[col]) for r in a.values() if r[col].isdigit())
    for key in sorted(set(a) & set(b)):
        ra, rb = a[key], b[key]
        n = 1
        for col, x, y in zip(ha[1:], ra, rb):
            if col in ("calls", "steps", "slowest_step", "pid") or not x or not y:
                if x != y:
                    bad.append("%s %s: %s / %s" % (key, col, x, y))
                if col in ("calls", "steps"):
                    n = int(x)
                continue
            fx, fy = float(x), float(y)
            # Sums (total, self, mean over steps) may differ by a ns a call.
            tol = 2 * NS + (n * NS if col in ("total_us", "self_us") else 0)
            if col == "self_us":
                tol += events * NS
            if col in ("percent_window", "slowest_vs_job_median"):
                tol = 0.011
            elif col == "comm_us_per_step":
                # --by rank's collectives: a sum of calls (a ns each) over
                # the steps; the calls are not in the CSV.
                tol += 1e-4 * abs(fx)
            elif col == "stddev" or key == "stddev":
                tol = 0.01
            if abs(fx - fy) > tol:
                bad.append("%s %s: %s / %s" % (key, col, x, y))
    for b_ in bad[:20]:
        print("sumcmp: " + b_)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
