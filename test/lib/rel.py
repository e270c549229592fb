"""Helpers for the reliability tests (test/integration/rel_*.sh).

Import from a test's inline Python (sys.path.insert(0, TP_TOP/test/lib)) or
run `rel.py matrix` for the never-break-the-host matrix.  Every trace is read
strictly: the bytes must be UTF-8, the text must parse with json.loads and
no NaN/Infinity, and the object must end with its traceprof footer.  A
.pftrace (TRACEPROF_FORMAT=perfetto, rel_perfetto.sh) is read as the same
object, and must decode whole and carry the same footer.
"""
import json
import os
import sys


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def _no_constants(name):
    raise ValueError("non-JSON constant %s" % name)


def load_pftrace(path):
    """A Perfetto trace (.pftrace, TRACEPROF_FORMAT=perfetto) as the JSON
    trace's object, read by traceprof's own decoder (python/traceprof/traces/
    pftrace.py): traceEvents (slices as X, instants as i, process and
    thread names as M, with the threads' pids and tids) and the top-level
    members the writer's document instants carry.  First, where protoc and
    the schema are here and the file is up to 16 MB, protoc decodes it with
    Perfetto's schema and every string field must be UTF-8 (test/lib/
    pftrace.py).  Raises ValueError."""
    here = os.path.dirname(os.path.abspath(__file__))
    top = os.path.dirname(os.path.dirname(here))
    for d in (here, os.path.join(top, "python")):
        if d not in sys.path:
            sys.path.insert(0, d)
    import pftrace
    if (not pftrace.skip_reason() and os.path.getsize(path) <= 16 << 20
            and len(pftrace.decompress(path)) <= 16 << 20):
        try:
            pftrace.decode(path)  # Perfetto's schema, and UTF-8 strings
        except SystemExit as e:
            raise ValueError(str(e))
    from traceprof.traces.pftrace import PftraceReader
    from traceprof.traces.reader import TraceError
    obj = {"schemaVersion": 1, "traceEvents": []}
    try:
        for kind, a, b in PftraceReader(path).items():
            if kind == "events":
                obj["traceEvents"].extend(a)
            elif kind == "meta":
                obj[a] = b
    except TraceError as e:
        raise ValueError(str(e))
    return obj


def load_trace(path):
    """Reads one trace strictly; returns the object or raises ValueError."""
    if ".pftrace" in os.path.basename(path):
        obj = load_pftrace(path)
        for key in ("traceEvents", "traceprof", "distributedInfo", "baseTimeNanoseconds"):
            if key not in obj:
                raise ValueError("no %r" % key)
        return obj
    with open(path, "rb") as f:
        raw = f.read()
    if path.endswith(".gz"):
        import gzip
        raw = gzip.decompress(raw)
    elif path.endswith(".zst"):
        import subprocess
        raw = subprocess.run(["zstd", "-dcq"], input=raw, capture_output=True,
                             check=True).stdout
    text = raw.decode("utf-8")  # strict: invalid UTF-8 raises
    obj = json.loads(text, parse_constant=_no_constants)
    if not isinstance(obj, dict):
        raise ValueError("top level is not an object")
    for key in ("schemaVersion", "traceEvents", "traceprof", "distributedInfo",
                "baseTimeNanoseconds"):
        if key not in obj:
            raise ValueError("no %r" % key)
    return obj


def trace_files(folder):
    """Final trace files under folder (recursively), not temporary ones."""
    out = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]  # .live/: not traces
        for f in files:
            if f.startswith("."):
                continue
            if ".json" in f or ".pftrace" in f:
                out.append(os.path.join(root, f))
    return sorted(out)


def temp_files(folder):
    out = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]  # .live/: its own
        for f in files:
            if f.startswith(".") and ".tmp." in f:
                out.append(os.path.join(root, f))
    return sorted(out)


def load_all(folder):
    traces = {}
    for p in trace_files(folder):
        try:
            traces[p] = load_trace(p)
        except (ValueError, UnicodeDecodeError) as e:
            fail("%s: not a valid, complete trace: %s" % (p, e))
    return traces


def thread_totals(traces):
    """{tid: [written, dropped]} summed over the footers of all windows.

    Every part of a window carries the window's counts: only part 1 is
    counted."""
    tot = {}
    for t in traces.values():
        if t["traceprof"].get("part", 1) != 1:
            continue
        for th in t["traceprof"]["threads"]:
            w = tot.setdefault(th["tid"], [0, 0])
            w[0] += th["events_written"]
            w[1] += th["events_dropped"]
    return tot


def tp_lines(stderr):
    """(traceprof lines, the program's own stderr) from raw stderr bytes."""
    mine, prog = [], []
    for line in stderr.split(b"\n"):
        (mine if line.startswith(b"traceprof:") else prog).append(line)
    return mine, b"\n".join(prog)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    if len(sys.argv) > 1 and sys.argv[1] == "matrix":
        import rel_matrix
        sys.exit(rel_matrix.main(sys.argv[2:]))
    if len(sys.argv) > 2 and sys.argv[1] == "check":
        tr = load_all(sys.argv[2])
        for p in tr:
            print(p)
        sys.exit(0)
    print("usage: rel.py matrix ... | rel.py check FOLDER", file=sys.stderr)
    sys.exit(2)


class Checks:
    """The cut tests' "ok"/"FAIL" lines: check(cond, msg) prints one, and
    the failed ones are kept; done() exits 1 if any failed."""

    def __init__(self):
        self.fails = []

    def __call__(self, cond, msg):
        print(("ok   " if cond else "FAIL ") + msg)
        if not cond:
            self.fails.append(msg)
        return cond

    def done(self):
        sys.exit(1 if self.fails else 0)


def die_env(folder, preload, extra=None, cupti=None):
    """The environment of a program run by a cut test (test/programs/die.c,
    gpu_die.c): no TRACEPROF_* of the caller's, traceprof preloaded or not
    (cupti: the stand-in CUPTI preloaded after it), TRACEPROF_FOLDER, a
    long window from step 1, and extra's variables.  Under a sanitizer its
    own SIGSEGV handler is off, which would turn a NULL dereference into its
    exit status (1 under ASan, 66 under TSan; docs/development.md)."""
    e = {k: v for k, v in os.environ.items() if not k.startswith("TRACEPROF_")}
    e.pop("LD_PRELOAD", None)
    pre = ([os.environ["TP_PRELOAD"]] if preload else []) + ([cupti] if cupti else [])
    if pre:
        e["LD_PRELOAD"] = ":".join(pre)
    e.update({"TRACEPROF_FOLDER": folder, "TRACEPROF_SCHEDULE": "wait=1,active=100000"})
    e.update(extra or {})
    san = {"asan": "ASAN_OPTIONS", "tsan": "TSAN_OPTIONS"}.get(os.environ.get("TP_SANITIZER"))
    if san:
        e[san] = e.get(san, "") + ":handle_segv=0"
    return e


def run_die(p, sig=None, after=3.0, at_kill=None):
    """Reads the lines of a die.c / gpu_die.c program started as p (stdout
    piped): "pid P", "ended STEP NS", "dying NS".  With sig, sends it to the
    program's pid once `after` seconds have passed (at_kill(pid) is called
    just before), and stops reading.  Returns (pid, ended {step: ns},
    death ns: the program's "dying" time, or the time of the kill)."""
    import time
    ended, death, pid = {}, None, None
    t0 = time.monotonic()
    for line in p.stdout:
        w = line.decode().split()
        if w[0] == "pid":
            pid = int(w[1])
        elif w[0] == "ended":
            ended[int(w[1])] = int(w[2])
        elif w[0] == "dying":
            death = int(w[1])
        if sig and pid and time.monotonic() - t0 > after:
            if at_kill:
                at_kill(pid)
            death = time.monotonic_ns()
            os.kill(pid, sig)
            break
    return pid, ended, death


def steps_before(ended, death, first=1):
    """The steps (from first) that ended more than a second before death:
    those a cut trace must hold."""
    return sorted(s for s, at in ended.items() if s >= first and at < death - 1000000000)


def step_spans(evs):
    """{N: the ProfilerStep#N slice} of a trace's events."""
    return {int(e["name"].split("#")[1]): e for e in evs
            if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#")}


def kernels_by_correlation(evs):
    """{correlation: [kernel slices]} of a trace's events (None: those
    without one)."""
    kernels = {}
    for e in evs:
        if e.get("ph") == "X" and e.get("cat") == "kernel":
            kernels.setdefault(e["args"].get("correlation"), []).append(e)
    return kernels


def check_cut_steps(check, label, t, ended, death, events=None, pid=None, pftrace=False):
    """The checks every cut trace t of die.c or gpu_die.c passes: the trace
    checker, a footer saying it was cut (of pid, when given), every step
    that ended a second before the death (at least 50), with its `events`
    "launch" instants when given.  Returns {N: ProfilerStep#N slice} of the
    steps it holds."""
    import tracecheck
    probs = tracecheck.check_trace(t, pftrace=pftrace)
    check(not probs, "%s: the trace checker passes it (%s)" % (label, probs[:3]))
    c = t.get("traceprof", {}).get("cut")
    check(isinstance(c, dict) and (pid is None or "pid %d" % pid in c.get("reason", "")),
          "%s: the footer says it was cut (%s)" % (label, c))
    evs = t["traceEvents"]
    got = step_spans(evs)
    want = steps_before(ended, death)
    check(len(want) >= 50, "%s: the program ran %d steps before the last second" % (label, len(want)))
    missing = [s for s in want if s not in got]
    check(not missing, "%s: every step ended a second before the death is there (missing %s of %d)"
          % (label, missing[:5], len(want)))
    if events is not None:
        launches = sum(1 for e in evs if e.get("name") == "launch")
        check(launches >= events * len(want), "%s: their events are there (%d launches for %d steps)"
              % (label, launches, len(want)))
    return got
