"""Helpers for the CUDA integration tests: load every trace of a folder with
the real JSON parser, validate it (tracecheck.check_trace) and query its
CUDA events.  Used from the tests'
inline Python (see test/integration/cuda_*.sh)."""
import glob
import json
import os
import sys

from tracecheck import check_trace


def load(folder):
    """All events of all trace files in folder (plain JSON)."""
    files = sorted(glob.glob(os.path.join(folder, "*.json")))
    if not files:
        fail("no trace file in %s" % folder)
    events = []
    for f in files:
        with open(f) as fh:
            text = fh.read()
        trace = json.loads(text)
        problems = check_trace(trace, text)
        if problems:
            fail("%s: %s" % (f, "; ".join(problems)))
        events += trace["traceEvents"]
    return events


def api(events, name=None, cat=None):
    """Complete events of the cuda_runtime / cuda_driver categories."""
    return [e for e in events if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver")
            and (name is None or e["name"] == name) and (cat is None or e["cat"] == cat)]


def one(events, name, **args):
    """The events named `name` whose args include `args`; fails when none."""
    found = [e for e in api(events, name) if all(e["args"].get(k) == v for k, v in args.items())]
    if not found:
        seen = [(e["name"], e["args"]) for e in api(events, name)]
        fail("no %s event with args %r; seen: %r" % (name, args, seen))
    return found


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)
