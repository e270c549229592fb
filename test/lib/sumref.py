#!/usr/bin/env python3
"""The in-memory reading of `traceprof summary --from-events` as it was
before issue 35 item 2 (every event kept, then sorted per thread): the
reference that the streaming reading (python/traceprof/traces/rowacc.py)
must print the same table as.

    sumref.py FILE BY       (BY: all, api, kernel, marker, step)

Prints `summary FILE --by BY --csv --top 0`'s CSV."""
import math
import os
import sys
import types

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "python"))
from traceprof.cli.summary import footer_phases, print_rows, print_steps  # noqa: E402
from traceprof.traces.events import STEP_RE, finite_num, selected  # noqa: E402
from traceprof.traces.pftrace import DOCS, PFTRACE_RE, PftraceReader  # noqa: E402
from traceprof.traces.reader import TraceReader  # noqa: E402


def main():
    return table(sys.argv[1], sys.argv[2])


def table(path, by):
    a = types.SimpleNamespace(by=by, top=0, csv=True, file=path)
    events = []  # (pid, tid, ts, dur, key or None, the step's phase or None)
    lo, hi = math.inf, -math.inf
    reader = PftraceReader(path) if PFTRACE_RE.search(path) else TraceReader(path)
    meta = {}
    for kind, batch, b in reader.items():
        if kind == "meta":
            meta[batch] = b
        if kind != "events":
            continue
        for ev in batch:
            if not isinstance(ev, dict):
                continue
            ph = ev.get("ph")
            ts = finite_num(ev.get("ts"))
            if ph == "M" or ts is None:
                continue
            if ph == "i" and ev.get("name") in DOCS and ev.get("cat") is None:
                continue
            dur = finite_num(ev.get("dur")) if ph == "X" else 0
            if dur is None or dur < 0:
                dur = 0
            lo = min(lo, ts)
            hi = max(hi, ts + dur)
            if ph != "X":
                continue
            name = str(ev.get("name", ""))
            key = name if selected(by, ev.get("cat"), name) else None
            if by != "step" and key is None and STEP_RE.match(name):
                continue  # steps are outside self time's nesting (since 2026-11-26)
            args = ev.get("args")
            phase = args.get("phase") if isinstance(args, dict) else None
            events.append((str(ev.get("pid")), str(ev.get("tid")), ts, float(dur), key,
                           phase if isinstance(phase, str) else None))
    window = hi - lo if hi > lo else 0.0
    if by == "step":
        return print_steps(a, events, window, footer_phases(meta))
    selft = [0.0] * len(events)
    by_thread = {}
    for i, e in enumerate(events):
        by_thread.setdefault((e[0], e[1]), []).append(i)
    for idxs in by_thread.values():
        idxs.sort(key=lambda i: (events[i][2], -events[i][3]))
        stack = []
        for i in idxs:
            ts, dur = events[i][2], events[i][3]
            while stack and events[stack[-1]][2] + events[stack[-1]][3] <= ts + 1e-9 \
                    and not (dur == 0 and events[stack[-1]][2] + events[stack[-1]][3] == ts
                             and events[stack[-1]][2] == ts):
                stack.pop()
            selft[i] = dur
            if stack:
                parent = stack[-1]
                end = min(ts + dur, events[parent][2] + events[parent][3])
                selft[parent] -= max(0.0, end - ts)
            stack.append(i)
    rows = {}
    for i, e in enumerate(events):
        key = e[4]
        if key is None:
            continue
        r = rows.get(key)
        if r is None:
            r = rows[key] = [0, 0.0, 0.0, math.inf, 0.0]
        r[0] += 1
        r[1] += e[3]
        r[2] += max(0.0, selft[i])
        r[3] = min(r[3], e[3])
        r[4] = max(r[4], e[3])
    return print_rows(a, rows, window)


if __name__ == "__main__":
    sys.exit(main())
