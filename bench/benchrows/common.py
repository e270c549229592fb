"""bench/run's settings (the BENCH_* variables), the table its rows fill,
and the helpers every row uses: running a traced or plain program, medians
and spreads, the footers of the traces a run wrote."""
import glob
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

# The bench/ folder, where the programs the rows run lie.
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("BUILD", "build")
LIB = os.path.abspath(os.path.join(BUILD, "libtraceprof.so"))
LOOP = os.path.join(BUILD, "bench", "launch_loop")
CLOCK = os.path.join(BUILD, "bench", "bench_clock")
QUICK = os.environ.get("BENCH_QUICK") == "1"
TRIALS = int(os.environ.get("BENCH_TRIALS", "3" if QUICK else "5"))
T_START = time.monotonic()
BEFORE = os.environ.get("BENCH_BEFORE_LIB")
BEFORE = os.path.abspath(BEFORE) if BEFORE else None
BEFORE_BUILD = os.environ.get("BENCH_BEFORE_BUILD")
BEFORE_JSON = os.path.join(os.path.abspath(BEFORE_BUILD), "bench", "bench_json") if BEFORE_BUILD else None
ONLY = set(int(x) for x in os.environ.get("BENCH_ROWS", "").split(",") if x.strip())


def want(*nums):
    return not ONLY or any(n in ONLY for n in nums)

ROWS = []  # (row, measure, median, spread, target, verdict)
NOTES = []


def log(msg):
    print("bench: [%5.1fs] %s" % (time.monotonic() - T_START, msg), file=sys.stderr, flush=True)


def row(num, measure, median="", spread="", target="", verdict=""):
    ROWS.append((str(num), measure, median, spread, target, verdict))


def med(xs):
    return statistics.median(xs)


def spread(xs, fmt="%.1f"):
    return (fmt + "-" + fmt) % (min(xs), max(xs)) if xs else ""


def kv(text):
    """The last line of key=value pairs in text, as a dict of floats/strings."""
    d = {}
    for line in text.splitlines():
        pairs = re.findall(r"(\w+)=(\S+)", line)
        if pairs:
            d = {}
            for k, v in pairs:
                try:
                    d[k] = float(v)
                except ValueError:
                    d[k] = v
    return d


def tmpdir(tag):
    base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    return tempfile.mkdtemp(prefix="traceprof-bench-%s." % tag, dir=base)


def footers(folder):
    """Sums events_written/events_dropped over the windows of the traces in
    folder (a window split into parts repeats its totals in every part: each
    window counts once), from the traceprof footer at the end of each file."""
    windows = {}
    for path in glob.glob(os.path.join(folder, "*.json")):
        with open(path, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - (1 << 20)))
            tail = f.read().decode("utf-8", "replace")
        m = list(re.finditer(r'"traceprof":\s*\{', tail))
        i = m[-1].start() if m else -1
        if i < 0:
            continue
        foot = tail[i:]
        steps = re.search(r'"steps":\[(\d+),(\d+)\]', foot)
        w = re.search(r'"events_written":(\d+)', foot)
        d = re.search(r'"events_dropped":(\d+)', foot)
        lost = re.search(r'"events_lost_after_thread_exit":(\d+)', foot)
        key = steps.group(0) if steps else path
        windows[key] = (int(w.group(1)) if w else 0, int(d.group(1)) if d else 0,
                        int(lost.group(1)) if lost else 0)
    written = sum(v[0] for v in windows.values())
    dropped = sum(v[1] for v in windows.values())
    lost = max([v[2] for v in windows.values()] or [0])
    return written, dropped + lost, len(windows)


def run(cmd, env=None, timeout=120):
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError("%s exited %d: %s" % (" ".join(cmd), p.returncode,
                                                  p.stderr.strip()[-400:]))
    return p


def traced_env(folder, extra=None, lib=None):
    env = dict(os.environ)
    env.update({"LD_PRELOAD": lib or LIB, "TRACEPROF_FOLDER": folder, "TRACEPROF_LOG": "warn",
                "TRACEPROF_OVERWRITE": "1"})
    for k in ("TRACEPROF_SCHEDULE", "TRACEPROF_BUFFER_EVENTS", "TRACEPROF_COMPRESS"):
        env.pop(k, None)
    env.update(extra or {})
    return env


def plain_env():
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    return env


def loop_args(threads, calls, burst, pause_us, warmup=100000):
    return [LOOP, "-t", str(threads), "-n", str(calls), "-b", str(burst), "-p", str(pause_us),
            "-w", str(warmup)]


def per_call(out):
    d = kv(out)
    if d.get("errors", 0):
        raise RuntimeError("launch_loop reported %d failed calls" % d["errors"])
    return d["cpu_ns"] / d["calls"], d["wall_ns"] / d["calls"]


def lib_has_cuda():
    try:
        out = subprocess.run(["nm", "-D", "--defined-only", LIB], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True).stdout
    except OSError:
        return False
    return re.search(r"\bcudaLaunchKernel\b", out) is not None


# ---- table ------------------------------------------------------------------------------


def print_table():
    head = ("#", "measure", "median", "spread (min-max)", "target", "verdict")
    rows = [head] + ROWS
    widths = [max(len(r[i]) for r in rows if len(r[1]) < 70 or i != 1) for i in range(6)]
    widths[1] = min(max(len(r[1]) for r in rows), 58)
    print()
    print("traceprof bench  %s  %s" % (time.strftime("%Y-%m-%d %H:%M"), machine()))
    for i, r in enumerate(rows):
        if r[1].startswith("bench_") and ": " in r[1]:
            print("%-*s  %s" % (widths[0], r[0], r[1]))
            continue
        print("  ".join(c.ljust(w) if j < 5 else c for j, (c, w) in enumerate(zip(r, widths))).rstrip())
        if i == 0:
            print("-" * (sum(widths) + 12))
    for n in NOTES:
        print("note: " + n)
    print("bench: total %.0f s" % (time.monotonic() - T_START))


def machine():
    model = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return "%s, %d cores, Linux %s" % (model, os.cpu_count() or 0, os.uname().release)
