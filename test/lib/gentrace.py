#!/usr/bin/env python3
"""Writes a synthetic trace in traceprof's layout (format/trace.c), for the
CLI tests and the merge benchmark.

    gentrace.py OUT [--rank R] [--world W] [--base NS] [--pid P] [--events N]
                    [--mb MB] [--t0 US] [--step-us US] [--dropped N] [--gpu]

Events: per step a ProfilerStep#N complete event, a marker "forward" inside
it, and cudaLaunchKernel calls inside the marker, each --step-us apart from
--t0 (microseconds relative to --base); with --gpu, a kernel and its flow
arrow per launch.  --mb writes events until the file
is about that size.  OUT may end in .gz or .zst.
"""
import argparse
import gzip
import json
import subprocess
import sys


def us(ns):
    """A time in ns as the microseconds traceprof writes (3 decimals)."""
    return ns / 1000


def span(start_ns, end_ns):
    """ts and dur as format/trace.c writes them: dur = double(end) -
    double(ts), so that readers' double sums land exactly on the end."""
    return {"ts": us(start_ns), "dur": us(end_ns) - us(start_ns)}


def events(a, pid, tid):
    step = 0
    t = round(a.t0 * 1000)
    step_ns = round(a.step_us * 1000)
    while True:
        yield dict({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % step,
                    "pid": pid, "tid": tid}, **span(t, t + step_ns - 1000))
        yield dict({"ph": "X", "cat": "user_annotation", "name": "forward", "pid": pid,
                    "tid": tid}, **span(t + 1000, t + 1000 + step_ns // 2))
        for k in range(8):
            corr = step * 8 + k + 1
            ts = t + 2000 + k * 10000
            yield dict({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                        "pid": pid, "tid": tid}, **span(ts, ts + 4125),
                       args={"cbid": 211, "correlation": corr})
            if a.gpu:
                # The kernel on GPU 0 (pid 10^9, collector/gpu.h), stream 7, and the flow between them,
                # in the key order collector/gpu.c writes.
                yield dict({"ph": "X", "cat": "kernel", "name": "gemm", "pid": 1000000000, "tid": 7},
                           **span(ts + 5000, ts + 8000),
                           args={"device": 0, "context": 1, "stream": 7, "correlation": corr})
                yield {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": corr, "pid": pid,
                       "tid": tid, "ts": us(ts)}
                yield {"ph": "f", "bp": "e", "cat": "ac2g", "name": "ac2g", "id": corr,
                       "pid": 1000000000, "tid": 7, "ts": us(ts + 5000)}
        yield {"ph": "i", "s": "t", "cat": "user_annotation", "name": "tick", "pid": pid,
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
    a = p.parse_args()
    pid, tid = a.pid, a.pid
    head = ('{\n  "schemaVersion": 1,\n  "traceName": %s,\n  "displayTimeUnit": "ms",\n'
            '  "baseTimeNanoseconds": %d,\n  "distributedInfo": {"backend": "torchrun", '
            '"rank": %d, "world_size": %d, "local_rank": %d, "local_world_size": %d, '
            '"node_rank": 0},\n  "deviceProperties": [],\n  "traceEvents": [\n'
            % (json.dumps(a.out.rsplit("/", 1)[-1]), a.base, a.rank, a.world, a.rank, a.world))
    parts = [head]
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
        s = json.dumps(next(gen), separators=(",", ":"))
        body.append(s if first else ",\n" + s)
        first = False
        size += len(s) + 2
        n += 1
    for m in meta:
        body.append(",\n" + json.dumps(m, separators=(",", ":")))
    parts.append("".join(body))
    parts.append('\n  ],\n  "traceprof": {"version":"0.1.0","steps":[0,%d],'
                 '"events_written":%d,"events_dropped":%d,"threads":[{"tid":%d,"name":"main",'
                 '"events_written":%d,"events_dropped":%d}],"configuration":{}}\n}\n'
                 % (max(0, n // (36 if a.gpu else 12) - 1), n, a.dropped, tid, n, a.dropped))
    data = "".join(parts).encode()
    if a.out.endswith(".gz"):
        with gzip.open(a.out, "wb") as f:
            f.write(data)
    elif a.out.endswith(".zst"):
        subprocess.run(["zstd", "-q", "-f", "-o", a.out], input=data, check=True)
    else:
        with open(a.out, "wb") as f:
            f.write(data)
    sys.stderr.write("gentrace: %s: %d events, %d bytes\n" % (a.out, n, len(data)))


if __name__ == "__main__":
    main()
