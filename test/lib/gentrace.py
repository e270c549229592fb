#!/usr/bin/env python3
"""Writes a synthetic trace in traceprof's layout (format/trace.c), for the
CLI tests and the merge benchmark.

    gentrace.py OUT [--rank R] [--world W] [--base NS] [--pid P] [--events N]
                    [--mb MB] [--t0 US] [--step-us US] [--dropped N] [--gpu]
                    [--aggregate]

Events: per step a ProfilerStep#N complete event, a marker "forward" inside
it, and cudaLaunchKernel calls inside the marker, each --step-us apart from
--t0 (microseconds relative to --base); with --gpu, a kernel and its flow
arrow per launch.  --mb writes events until the file
is about that size.  OUT may end in .gz or .zst.  The file is written as it
is generated (a 500 MB file takes little memory).

--aggregate: the footer carries the summary table the library writes
(format/aggregate.c: per name and category calls, total, self, min, max in
ns; the steps; the span), computed from the same events as they are
generated: nested as summary nests them (the events come in start order on
each thread).
"""
import argparse
import gzip
import json
import os
import re
import struct
import subprocess
import sys
import zlib

# The layout's names (scripts/layout.spec, via the package's layout.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from traceprof import layout as L  # noqa: E402


class Digest:
    """format/digest.c's samples of the bytes before the footer: the table's
    "covers" (what the reader checks, traces/aggtable.py)."""

    def __init__(self):
        self.len, self.stride, self.crcs, self.cur = 0, 4096, [], 0

    def add(self, b):
        end = self.len + len(b)
        while True:
            at = len(self.crcs) * self.stride
            lo, hi = max(at, self.len), min(at + 64, end)
            if lo >= hi:
                break
            self.cur = zlib.crc32(b[lo - self.len:hi - self.len], self.cur)
            if hi < at + 64:
                break
            self.crcs.append(self.cur)
            self.cur = 0
            if len(self.crcs) == 64:
                self.crcs = self.crcs[::2]
                self.stride *= 2
        self.len = end
        return b

    def covers(self, events):
        return {"bytes": self.len, "events": events, "stride": self.stride,
                "samples": len(self.crcs),
                "crc": zlib.crc32(b"".join(struct.pack("<I", c) for c in self.crcs))}


class Aggregate:
    """format/aggregate.c's table of the events given in start order per
    thread (as events() makes them)."""

    STEP = re.compile(r"^%s(\d+)$" % re.escape(L.STEP_PREFIX))

    def __init__(self, rank):
        self.rank = rank
        self.rows = {}   # (name, cat) -> [calls, total, self, min, max]
        self.steps = []
        self.stacks = {}  # (pid, tid) -> [[start, end, self, key or None]]
        self.lo = self.hi = None

    def _close(self, x):
        if x[3] is not None:
            self.rows[x[3]][2] += max(0, x[2])

    def add(self, ev):
        if ev.get("ph") == "M":
            return
        s = round(ev["ts"] * 1000)
        e = round((ev["ts"] + ev.get("dur", 0)) * 1000) if ev.get("ph") == "X" else s
        self.lo = s if self.lo is None else min(self.lo, s)
        self.hi = e if self.hi is None else max(self.hi, e)
        if ev.get("ph") != "X":
            return
        d = e - s
        m = self.STEP.match(ev["name"])
        key = None
        if m:
            self.steps.append([int(m.group(1)), d, ev["pid"]])
        else:
            key = (ev["name"], ev.get("cat"))
            r = self.rows.get(key)
            if r is None:
                r = self.rows[key] = [0, 0, 0, d, d]
            r[0] += 1
            r[1] += d
            r[3] = min(r[3], d)
            r[4] = max(r[4], d)
        st = self.stacks.setdefault((ev["pid"], ev["tid"]), [])
        while st and st[-1][1] <= s:
            self._close(st.pop())
        if st:
            st[-1][2] -= min(e, st[-1][1]) - s
        st.append([s, e, d, key])

    def footer(self):
        for st in self.stacks.values():
            while st:
                self._close(st.pop())
        return {"version": 1, "rank": self.rank,
                "span_ns": (self.hi - self.lo) if self.lo is not None else 0,
                "names_cut": 0, "calls_cut": 0, "steps_cut": 0, "self_folded": 0,
                "rows": [[k[0], k[1]] + v for k, v in self.rows.items()],
                "steps": self.steps, "covers": getattr(self, "covers", None)}


def us(ns):
    """A time in ns as the microseconds traceprof writes (TIME_PLACES
    decimals)."""
    return ns / 10 ** L.TIME_PLACES


def span(start_ns, end_ns):
    """ts and dur as format/trace.c writes them: dur = double(end) -
    double(ts), so that readers' double sums land exactly on the end."""
    return {"ts": us(start_ns), "dur": us(end_ns) - us(start_ns)}


def events(a, pid, tid):
    step = 0
    t = round(a.t0 * 1000)
    step_ns = round(a.step_us * 1000)
    while True:
        yield dict({"ph": "X", "cat": L.CAT_USER_ANNOTATION, "name": L.STEP_PREFIX + str(step),
                    "pid": pid, "tid": tid}, **span(t, t + step_ns - 1000))
        yield dict({"ph": "X", "cat": L.CAT_USER_ANNOTATION, "name": "forward", "pid": pid,
                    "tid": tid}, **span(t + 1000, t + 1000 + step_ns // 2))
        for k in range(8):
            corr = step * 8 + k + 1
            ts = t + 2000 + k * 10000
            yield dict({"ph": "X", "cat": L.CAT_CUDA_RUNTIME, "name": "cudaLaunchKernel",
                        "pid": pid, "tid": tid}, **span(ts, ts + 4125),
                       args={"cbid": 211, "correlation": corr})
            if a.gpu:
                # The kernel on GPU 0 (pid 10^9, collector/gpu.h), stream 7, and the flow between them,
                # in the key order collector/gpu.c writes.
                yield dict({"ph": "X", "cat": L.CAT_KERNEL, "name": "gemm", "pid": L.GPU_PID_BASE,
                            "tid": 7},
                           **span(ts + 5000, ts + 8000),
                           args={"device": 0, "context": 1, "stream": 7, "correlation": corr})
                yield {"ph": "s", "cat": L.CAT_FLOW, "name": L.CAT_FLOW, "id": corr, "pid": pid,
                       "tid": tid, "ts": us(ts)}
                yield {"ph": "f", "bp": "e", "cat": L.CAT_FLOW, "name": L.CAT_FLOW, "id": corr,
                       "pid": L.GPU_PID_BASE, "tid": 7, "ts": us(ts + 5000)}
        yield {"ph": "i", "s": "t", "cat": L.CAT_USER_ANNOTATION, "name": "tick", "pid": pid,
               "tid": tid, "ts": us(t + 3500)}
        yield {"ph": "C", "name": "loss", "pid": pid, "tid": tid, "ts": us(t + 4000),
               "args": {"value": 1.0 / (step + 1)}}
        step += 1
        t += step_ns


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--rank", type=int, default=0)
    p.add_argument("--world", type=int, default=1)
    p.add_argument("--base", type=int, default=1700000000000000000)
    p.add_argument("--pid", type=int, default=1000)
    p.add_argument("--events", type=int, default=100)
    p.add_argument("--mb", type=float, default=0)
    p.add_argument("--t0", type=float, default=100.0)
    p.add_argument("--step-us", type=float, default=1000.0)
    p.add_argument("--dropped", type=int, default=0)
    p.add_argument("--gpu", action="store_true",
                   help="a kernel and its ac2g flow for every launch")
    p.add_argument("--aggregate", action="store_true",
                   help="the footer's summary table, as the library writes it")
    a = p.parse_args()
    pid, tid = a.pid, a.pid
    head = ('{\n  "schemaVersion": 1,\n  "traceName": %s,\n  "displayTimeUnit": "ms",\n'
            '  "baseTimeNanoseconds": %d,\n  "distributedInfo": {"backend": "torchrun", '
            '"rank": %d, "world_size": %d, "local_rank": %d, "local_world_size": %d, '
            '"node_rank": 0},\n  "deviceProperties": [],\n  "traceEvents": [\n'
            % (json.dumps(a.out.rsplit("/", 1)[-1]), a.base, a.rank, a.world, a.rank, a.world))
    if a.out.endswith(".gz"):
        out, proc = gzip.open(a.out, "wb"), None
    elif a.out.endswith(".zst"):
        proc = subprocess.Popen(["zstd", "-q", "-f", "-o", a.out], stdin=subprocess.PIPE)
        out = proc.stdin
    else:
        out, proc = open(a.out, "wb"), None
    agg = Aggregate(a.rank) if a.aggregate else None
    dg = Digest()
    out.write(dg.add(head.encode()))
    meta = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
             "args": {"name": "rank %d: train (pid %d)" % (a.rank, pid)}},
            {"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0,
             "args": {"sort_index": a.rank}},
            {"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
             "args": {"name": "main"}}]
    n = 0
    size = len(head)
    limit = a.mb * 1e6
    gen = events(a, pid, tid)
    body = []
    first = True
    while (limit and size < limit) or (not limit and n < a.events):
        ev = next(gen)
        if agg:
            agg.add(ev)
        s = json.dumps(ev, separators=(",", ":"))
        body.append(s if first else ",\n" + s)
        first = False
        size += len(s) + 2
        n += 1
        if len(body) >= 4096:
            out.write(dg.add("".join(body).encode()))
            body = []
    for m in meta:
        body.append(",\n" + json.dumps(m, separators=(",", ":")))
    out.write(dg.add("".join(body).encode()))
    body = []
    if agg:
        agg.covers = dg.covers(n + len(meta))
    body.append('\n  ],\n  "traceprof": {"version":"0.1.0","steps":[0,%d],'
                '"events_written":%d,"events_dropped":%d,"threads":[{"tid":%d,"name":"main",'
                '"events_written":%d,"events_dropped":%d}],"configuration":{}%s}\n}\n'
                % (max(0, n // (36 if a.gpu else 12) - 1), n, a.dropped, tid, n, a.dropped,
                   ',"aggregate":' + json.dumps(agg.footer(), separators=(",", ":"))
                   if agg else ""))
    out.write("".join(body).encode())
    written = out.tell() if proc is None and not a.out.endswith(".gz") else None
    out.close()
    if proc and proc.wait():
        sys.exit("gentrace: zstd failed")
    sys.stderr.write("gentrace: %s: %d events%s\n" % (
        a.out, n, "" if written is None else ", %d bytes" % written))


if __name__ == "__main__":
    main()
