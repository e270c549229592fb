#!/usr/bin/env python3
"""Validates trace files written by traceprof (or merged by `traceprof
merge`): plain, .gz or .zst.

    tracecheck.py FILE...      one summary line per file; exit 1 on any problem

A .pftrace (TRACEPROF_FORMAT=perfetto) is decoded by protoc with Perfetto's
schema, then read as the same object (rel.load_pftrace) and checked alike.

As a module:
    from tracecheck import load_trace, check_trace
    trace = load_trace(path)            # the parsed JSON object
    problems = check_trace(trace)       # [] when valid

Checks: a JSON object with schemaVersion, traceName, baseTimeNanoseconds,
distributedInfo (with rank and world_size), deviceProperties and
traceEvents; a `traceprof` footer (or `traceprof_merge` for merged files)
with version, steps, events_written, events_dropped, threads; each event has
ph, pid and tid, a numeric ts with at most 3 decimals (M events excepted),
X events a numeric dur >= 0, host CUDA events no args.stream, and a
correlation arg, where there is one, a positive integer.
"""
import gzip
import json
import os
import re
import subprocess
import sys

REQUIRED = ("schemaVersion", "traceName", "baseTimeNanoseconds", "distributedInfo",
            "deviceProperties", "traceEvents")
FOOTER = ("version", "steps", "events_written", "events_dropped", "threads")
# The footer `traceprof recover` writes for a window its process did not
# end (python/traceprof/cli/recover.py): what it can know from the file.
FOOTER_CUT = ("version", "steps", "events_written", "cut")
# Categories of host-side CUDA calls: Holistic Trace Analysis counts every
# event whose args.stream is there and not -1 as a GPU event, so these must
# not have one.
HOST_CUDA = ("cuda_runtime", "cuda_driver")
# ts and dur as written (checked on the raw text, since the parsed float
# forgets how it was written): ts with at most 3 decimals (whole ns); dur
# written so that double(ts) + double(dur) is exactly the double of the
# end's whole ns (format/trace.c), which is what DevTools and speedscope
# compute: at most 24 decimals, no exponent.
_TS_TEXT = re.compile(r'"(ts|dur)":\s*(-?[0-9]+(?:\.([0-9]+))?(?:[eE][-+]?[0-9]+)?)')
_SPAN_TEXT = re.compile(r'"ts":(-?[0-9]+(?:\.[0-9]+)?),"dur":([0-9]+(?:\.[0-9]+)?)[,}]')


def _us_text(ns):
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    return "%s%d.%03d" % (sign, ns // 1000, ns % 1000)


def span_ends_on_ns(ts_text, dur_text):
    """True when double(ts) + double(dur) is the double of a whole-ns end."""
    neg = ts_text.startswith("-")
    whole, _, frac = ts_text.lstrip("-").partition(".")
    start = int(whole + frac.ljust(3, "0")) * (-1 if neg else 1)
    s = float(ts_text) + float(dur_text)
    guess = start + round(float(dur_text) * 1000)
    return any(float(_us_text(guess + k)) == s for k in (0, -1, 1, -2, 2))


def read_bytes(path):
    if path.endswith(".zst"):
        return subprocess.run(["zstd", "-dc", "--", path], check=True,
                              stdout=subprocess.PIPE).stdout
    if path.endswith(".gz"):
        with gzip.open(path, "rb") as f:
            return f.read()
    with open(path, "rb") as f:
        return f.read()


def load_trace(path):
    """The parsed trace (plain, .gz or .zst)."""
    return json.loads(read_bytes(path).decode("utf-8"))


def load_pftrace(path):
    """A .pftrace as the JSON trace's object, checked against Perfetto's
    schema where protoc is here (rel.load_pftrace)."""
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)
    import rel
    return rel.load_pftrace(path)


def check_trace(t, text=None, pftrace=False):
    """Problems found in the parsed trace t (a list of strings); pftrace:
    t is a .pftrace read as the JSON's object, where deviceProperties is
    there only when devices are known."""
    p = []
    if not isinstance(t, dict):
        return ["not a JSON object (a bare array?)"]
    for k in REQUIRED:
        if pftrace and k == "deviceProperties":
            continue
        if k not in t:
            p.append("missing top-level key %r" % k)
    di = t.get("distributedInfo")
    if isinstance(di, dict):
        for k in ("rank", "world_size"):
            if not isinstance(di.get(k), int):
                p.append("distributedInfo.%s missing or not an integer" % k)
    elif "distributedInfo" in t:
        p.append("distributedInfo is not an object")
    if not isinstance(t.get("baseTimeNanoseconds", 0), int):
        p.append("baseTimeNanoseconds is not an integer")
    if "traceprof" in t:
        f = t["traceprof"]
        for k in (FOOTER_CUT if isinstance(f, dict) and "cut" in f else FOOTER):
            if k not in f:
                p.append("traceprof.%s missing" % k)
    elif "traceprof_merge" not in t:
        p.append("neither a traceprof nor a traceprof_merge object")
    evs = t.get("traceEvents")
    if not isinstance(evs, list):
        p.append("traceEvents is not an array")
        evs = []
    bad = 0
    for i, e in enumerate(evs):
        why = None
        if not isinstance(e, dict):
            why = "not an object"
        elif not isinstance(e.get("ph"), str):
            why = "no ph"
        elif "pid" not in e or "tid" not in e:
            why = "no pid/tid"
        elif e["ph"] != "M" and not isinstance(e.get("ts"), (int, float)):
            why = "ts missing or not a number"
        elif e["ph"] == "X" and (not isinstance(e.get("dur"), (int, float)) or e["dur"] < 0):
            why = "X event with dur missing or < 0"
        elif e.get("cat") in HOST_CUDA and "stream" in (e.get("args") or {}):
            why = "host CUDA event with args.stream (HTA takes it for a GPU event)"
        elif "correlation" in (e.get("args") or {}) and not (
                isinstance(e["args"]["correlation"], int) and e["args"]["correlation"] > 0):
            why = "correlation is not a positive integer"
        if why:
            bad += 1
            if bad <= 5:
                p.append("event %d: %s: %s" % (i, why, json.dumps(e)[:200]))
    if bad > 5:
        p.append("... %d bad events in all" % bad)
    if text is not None:
        for m in _TS_TEXT.finditer(text):
            places = len(m.group(3) or "")
            if (m.group(1) == "ts" and places > 3) or places > 24 or "e" in m.group(2).lower():
                p.append("%s written with more than %d decimals or an exponent: %s" % (
                    m.group(1), 3 if m.group(1) == "ts" else 24, m.group(2)))
                break
        off = [m for m in _SPAN_TEXT.finditer(text)
               if not span_ends_on_ns(m.group(1), m.group(2))]
        if off:
            p.append("%d slices whose ts + dur in doubles is not a whole-ns end "
                     "(readers mis-nest them), e.g. ts %s dur %s" % (
                         len(off), off[0].group(1), off[0].group(2)))
    return p


def table_problems(path, t):
    """The writer's self-check (issue 43 item 6): a file with a footer table
    must pass the reader's checks (traces/aggtable.py check(): its covers and
    its form), and its rows must be the events' (calls exactly, times to
    within the JSON's ns rounding)."""
    ft = t.get("traceprof") if isinstance(t, dict) else None
    if not isinstance(ft, dict) or "aggregate" not in ft:
        return []
    top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python")
    if top not in sys.path:
        sys.path.insert(0, top)
    from traceprof.traces import aggtable
    from traceprof.traces.rowacc import EventRows
    a, _, why = aggtable.check(path)
    if a is None:
        return ["the footer's table is not usable: %s" % why]
    evs = t.get("traceEvents") or []
    if ".pftrace" not in path and a["covers"].get("events") != len(evs):
        return ["the footer's table covers %s events, the file has %d" % (
            a["covers"].get("events"), len(evs))]
    x = aggtable.summary_rows(a, "all")
    if x is None:
        return []  # names were cut: summary reads the events
    acc = EventRows("all", want_self=True)
    acc.add_batch(t.get("traceEvents") or [])
    ev = acc.finish()
    if set(x[0]) != set(ev):
        return ["the footer's table names %s, the events %s" % (
            sorted(set(x[0]) - set(ev))[:3], sorted(set(ev) - set(x[0]))[:3])]
    for k, r in x[0].items():
        e = ev[k]
        tol = 2e-3 * r[0] + 1e-6
        # Self time is the total less every child's, each child's start
        # and duration rounded to the JSON's ns: its error grows with the
        # children (an optimizer step holds dozens of ops), which the calls
        # do not count.  Seen: 5 ns on 2 calls of MmBackward0, 10 ns on 2
        # of an optimizer step.  10 ns a call, and 1e-5 of the total.
        tol_self = tol + 1e-2 * r[0] + 1e-5 * abs(r[1])
        if r[0] != e[0] or abs(r[1] - e[1]) > tol or abs(r[2] - e[2]) > tol_self:
            return ["the footer's table has %r %s, the events %s" % (k, r[:3], e[:3])]
    return []


def main(argv):
    if not argv:
        sys.stderr.write("usage: tracecheck.py FILE...\n")
        return 2
    rc = 0
    for path in argv:
        pf = ".pftrace" in path
        try:
            if pf:
                text, t = None, load_pftrace(path)
            else:
                text = read_bytes(path).decode("utf-8")
                t = json.loads(text)
        except (OSError, ValueError, subprocess.CalledProcessError) as e:
            print("%s: INVALID: %s" % (path, e))
            rc = 1
            continue
        problems = check_trace(t, text, pf) or table_problems(path, t)
        evs = t.get("traceEvents") if isinstance(t, dict) else None
        n = len(evs) if isinstance(evs, list) else 0
        if problems:
            rc = 1
            print("%s: INVALID: %d events; %s" % (path, n, "; ".join(problems)))
            continue
        kinds = {}
        for e in evs:
            kinds[e["ph"]] = kinds.get(e["ph"], 0) + 1
        f = t.get("traceprof") or {}
        di = t.get("distributedInfo") or {}
        print("%s: ok: rank %s/%s, %d events (%s), steps %s, dropped %s" % (
            path, di.get("rank"), di.get("world_size"), n,
            " ".join("%s=%d" % kv for kv in sorted(kinds.items())), f.get("steps", "-"),
            f.get("events_dropped", "-")))
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
