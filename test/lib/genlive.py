#!/usr/bin/env python3
"""Synthetic live files (docs/live.md), as a traced process's flush thread
writes them, for `traceprof top`'s tests and bench row 15, without the
library: each replaced atomically (a dot file, then rename).

    genlive.py DIR job [--ranks N] [--interval-ms MS] [--duration S] [--step-ms MS] [--run NAME]
        A job that runs while the command runs: rank 3's steps take twice as
        long; rank 5 stops at step 6 inside cudaStreamSynchronize, within
        NCCL's ncclAllReduce range; rank 6 stops updating its file after
        0.5 s (killed: stale); rank 7 finishes (exit 0) at step 4.  The
        others step every --step-ms; rank 0 records from step 2 on.  Ends after --duration seconds, or when
        DIR/stop exists.
    genlive.py DIR static N
        N processes of one run, written once, updated now (every 5 s): rank 1
        twice as slow as the others (bench/run's row 15)."""
import json
import os
import socket
import sys
import time

KEYS = ("traceprofLive", "host", "pid", "program", "rank", "local_rank", "world_size", "run",
        "interval_ms", "updated_ns", "started_ns", "state", "exit_status", "step",
        "step_started_ns", "steps", "last_step", "recording", "window", "events", "dropped",
        "top", "threads")


def doc(host, pid, rank, world, run="synthetic", **kw):
    now = time.time_ns()
    d = {"traceprofLive": 1, "host": host, "pid": pid, "program": "train", "rank": rank,
         "local_rank": rank, "world_size": world, "run": run, "interval_ms": 1000,
         "updated_ns": now, "started_ns": now, "state": "running", "exit_status": None,
         "step": -1, "step_started_ns": None, "steps": [], "last_step": None,
         "recording": False, "window": None, "events": 0, "dropped": 0,
         "top": [["cudaLaunchKernel", 1234567, 100], ["cudaMemcpyAsync", 234567, 10]],
         "threads": []}
    d.update(kw)
    assert list(d) == list(KEYS), "keys out of order"
    return d


def write(folder, d):
    """Replaces <host>.<pid>.json atomically."""
    name = "%s.%d.json" % (d["host"], d["pid"])
    tmp = os.path.join(folder, ".%s.tmp" % name)
    with open(tmp, "w") as f:
        json.dump(d, f, separators=(",", ":"))
    os.rename(tmp, os.path.join(folder, name))


def stepping(start, now, step_ns, upto=None):
    """(step, its start, the completed steps' durations) of a process that
    began at start and steps every step_ns (until step upto, which it
    never ends)."""
    n = (now - start) // step_ns
    if upto is not None:
        n = min(n, upto)
    # A little spread, the same for every run: 97%..103% of step_ns.
    durs = [step_ns * (97 + (i * 3) % 7) // 100 for i in range(max(0, n - 64), n)]
    return n, start + n * step_ns, durs


def job(folder, ranks, interval_ms, duration, step_ms, run="synthetic"):
    host = socket.gethostname().split(".")[0] or "host"
    start = time.time_ns()
    step_ns = step_ms * 1000000
    pids = {r: 40000 + r for r in range(ranks)}
    done = set()
    end = time.monotonic() + duration
    while time.monotonic() < end and not os.path.exists(os.path.join(folder, "stop")):
        now = time.time_ns()
        for r in range(ranks):
            if r in done:
                continue
            kw = {"interval_ms": interval_ms, "started_ns": start}
            if r == 6 and now - start > 500000000:
                continue  # killed: its file stays as it was
            if r == 5:
                n, st, durs = stepping(start, now, step_ns, 6)
                if n == 6:
                    kw["threads"] = [
                        {"tid": 40005, "name": "python", "open": [
                            {"kind": "module", "name": "Model", "since_ns": st - 1000,
                             "payload": {}},
                            {"kind": "nvtx", "name": "ncclAllReduce", "since_ns": st + 1000000,
                             "payload": {"op": "sum", "bytes": 4194304, "peer": None}},
                            {"kind": "cuda", "name": "cudaStreamSynchronize",
                             "since_ns": st + 2000000, "payload": {}}]},
                        # A thread inside a range since before the step began
                        # (a data loader's epoch): not where the step waits.
                        {"tid": 40105, "name": "loader", "open": [
                            {"kind": "nvtx", "name": "epoch", "since_ns": start,
                             "payload": {}}]}]
            elif r == 7:
                n, st, durs = stepping(start, now, step_ns, 4)  # exits in step 4
            else:
                n, st, durs = stepping(start, now, step_ns * (2 if r == 3 else 1))
            if r == 7 and n >= 4:
                kw.update(state="finished", exit_status=0)
                done.add(r)
            kw.update(step=n, step_started_ns=st, steps=durs,
                      last_step=n - 1 if n > 0 else None, events=n * 100,
                      recording=(r == 0 and n >= 2),
                      window={"first_step": 2, "name": "w0"} if r == 0 and n >= 2 else None)
            write(folder, doc(host, pids[r], r, ranks, run, **kw))
        time.sleep(interval_ms / 1000.0)


def static(folder, n):
    now = time.time_ns()
    for r in range(n):
        base = 100000000 * (2 if r == 1 else 1)
        durs = [base + (i * 37) % 1000 for i in range(64)]
        # An update period of 5 s (stale after 25 s): writing 1,000 files
        # took up to 5 s on a loaded machine here, which left the first
        # ones stale at 1 s before top read them.
        write(folder, doc("node%03d" % (r // 8), 50000 + r, r, n, interval_ms=5000, step=200,
                          step_started_ns=now - 1000000, steps=durs, last_step=199,
                          events=123456, threads=[{"tid": 50000 + r, "name": "python", "open": [
                              {"kind": "cuda", "name": "cudaLaunchKernel",
                               "since_ns": now - 1000, "payload": {}}]}]))


def main(argv):
    folder, what = argv[0], argv[1]
    os.makedirs(folder, exist_ok=True)
    if what == "static":
        static(folder, int(argv[2]))
        return 0
    opts = {"--ranks": 8, "--interval-ms": 200, "--duration": 30, "--step-ms": 100,
            "--run": "synthetic"}
    rest = argv[2:]
    for k, v in zip(rest[::2], rest[1::2]):
        opts[k] = type(opts[k])(v)
    job(folder, opts["--ranks"], opts["--interval-ms"], opts["--duration"], opts["--step-ms"],
        opts["--run"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
