"""bench/run's rows of the flush side and after: 6 (writing JSON), 7
(uftrace), 8 (memory), 12 (bursts), 13 (the writer), 14 (reading a job)
and 15 (top)."""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

from .common import (BEFORE, BEFORE_JSON, BUILD, HERE, LOOP, QUICK, TRIALS, kv, log, loop_args,
                     med, per_call, plain_env, row, run, spread, tmpdir, traced_env)

# ---- 6: flush side ------------------------------------------------------------------

def bench_flush_side():
    found = False
    known = ("bench_clock", "bench_json", "bench_compress")
    others = sorted(os.path.basename(p) for p in glob.glob(os.path.join(BUILD, "bench", "bench_*"))
                    if os.path.basename(p) not in known and os.access(p, os.X_OK))
    progs = [("bench_json", []), ("bench_compress", ["100000" if QUICK else "200000", "3"])]
    progs += [(name, []) for name in others]
    for name, args in progs:
        path = os.path.join(BUILD, "bench", name)
        if not os.access(path, os.X_OK):
            continue
        found = True
        env = dict(os.environ, BENCH_EVENTS="500000" if QUICK else "1000000")
        try:
            p = run([path] + args, env=env, timeout=90)
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            row(6, name, "FAILED", "", "", str(e)[:60])
            continue
        for line in p.stdout.splitlines():
            if line.strip():
                row(6, "%s: %s" % (name, line.rstrip()))
    if not found:
        row(6, "flush side", "SKIP", "", "", "bench_json / bench_compress not built")
    json_table_cost()



def json_table_cost():
    """Row 6's figures of the aggregate table (format/aggregate.c) on the JSON
    formatter: bench_json's own rounds with and without it (one process, in
    turn), TRIALS runs; with BENCH_BEFORE_BUILD, that build's bench_json (its
    table always on) in turn with ours; then callgrind's instructions per
    event (deterministic: the figure to compare on a shared machine)."""
    ours = os.path.join(BUILD, "bench", "bench_json")
    if not os.access(ours, os.X_OK):
        return
    before = BEFORE_JSON if BEFORE_JSON and os.access(BEFORE_JSON, os.X_OK) else None
    n = "500000" if QUICK else "1000000"
    env = dict(os.environ, BENCH_EVENTS=n, BENCH_ZSTD="0")
    on, off, ratio, added, bef = [], [], [], [], []
    try:
        for _ in range(TRIALS):
            out = run([ours], env=env, timeout=120).stdout
            m = re.search(r"json_events_per_sec=(\d+)", out)
            ab = kv(out)
            if not m or "table_on_over_off" not in ab:
                raise RuntimeError("no table_on_over_off line from bench_json")
            on.append(float(m.group(1)) / 1e6)
            off.append(ab["table_off_events_per_sec"] / 1e6)
            ratio.append(ab["table_on_over_off"])
            added.append(ab["added_ns_per_event"])
            if before:
                out = run([before], env=env, timeout=120).stdout
                bef.append(kv(out)["json_events_per_sec"] / 1e6)
    except (RuntimeError, subprocess.TimeoutExpired, KeyError) as e:
        row(6, "aggregate table on the JSON writer", "FAILED", "", "", str(e)[:60])
        return
    row(6, "table's cost, bench_json plain: with table", "%.2f M/s" % med(on), spread(on, "%.2f"))
    row(6, "  without (same runs, passes in turn)", "%.2f M/s" % med(off), spread(off, "%.2f"))
    row(6, "  with / without (median of %d runs' medians)" % TRIALS, "%.3f" % med(ratio),
        spread(ratio, "%.3f"), "no measurable cost", "")
    row(6, "  added per event (best passes)", "%.1f ns" % med(added), spread(added))
    if before:
        r = [o / b for o, b in zip(on, bef)]
        row(6, "  before (BENCH_BEFORE_BUILD), with its table", "%.2f M/s" % med(bef), spread(bef, "%.2f"))
        row(6, "  with table, this / before (per run)", "%.3f" % med(r), spread(r, "%.3f"))
    if not shutil.which("valgrind"):
        row(6, "  instructions per event (callgrind)", "SKIP", "", "", "valgrind not installed")
        return
    events, rounds = 200000, 3
    cenv = dict(env, BENCH_EVENTS=str(events), BENCH_ROUNDS=str(rounds))

    def ir(path, extra):
        with tempfile.TemporaryDirectory(prefix="traceprof-bench-cg.") as d:
            p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + os.path.join(d, "cg"),
                                path], env=dict(cenv, **extra), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, timeout=300)
        m = re.search(r"Collected\s*:\s*(\d+)", p.stderr)
        if p.returncode or not m:
            raise RuntimeError(p.stderr.strip()[-200:])
        return int(m.group(1))

    try:
        # 3 x 200,000 events formatted either way (ours: BENCH_ROUNDS passes
        # of one kind; an older bench_json: its best of three passes).
        without = ir(ours, {"BENCH_TABLE": "0"})
        wt = ir(ours, {"BENCH_TABLE": "1"})
        b = ir(before, {}) if before else None
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        row(6, "  instructions per event (callgrind)", "SKIP", "", "", str(e)[:60])
        return
    per = events * rounds
    row(6, "  instructions per event (callgrind): without table", "%.1f" % (without / per))
    row(6, "  with table (added)", "%.1f (+%.1f)" % (wt / per, (wt - without) / per))
    if b is not None:
        row(6, "  before (BENCH_BEFORE_BUILD), with its table (added)",
            "%.1f (+%.1f)" % (b / per, (b - without) / per))

# ---- 7: uftrace ------------------------------------------------------------------------

def bench_uftrace(ours):
    uf = shutil.which("uftrace")
    if not uf:
        row(7, "uftrace, per library call", "SKIP", "", "", "uftrace not installed (apt-get install uftrace)")
        return
    calls = 500000 if QUICK else 2000000
    trials = max(3, TRIALS - 2)
    diffs = []
    try:
        for _ in range(trials):
            wo = per_call(run(loop_args(1, calls, 50000, 1000, 10000), env=plain_env()).stdout)
            folder = tmpdir("uftrace")
            try:
                p = run([uf, "record", "--force", "--no-pager", "-d", os.path.join(folder, "data")] +
                        loop_args(1, calls, 50000, 1000, 10000), env=plain_env(), timeout=120)
                w = per_call(p.stdout)
                recorded = len(glob.glob(os.path.join(folder, "data", "*.dat")))
            finally:
                shutil.rmtree(folder, ignore_errors=True)
            if not recorded:
                raise RuntimeError("uftrace wrote no data")
            diffs.append(w[0] - wo[0])
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        row(7, "uftrace, per library call", "SKIP", "", "", "uftrace could not run: " + str(e)[:80])
        return
    d = med(diffs)
    row(7, "uftrace record (PLT tracing), added per call", "%.1f ns" % d, spread(diffs))
    if ours and ours > 0:
        row(7, "  uftrace / traceprof", "%.1fx" % (d / ours), "", ">= 5x", "met" if d / ours >= 5 else "MISSED")


# ---- 8: memory -----------------------------------------------------------------------

def bench_memory():
    for threads in (1, 64):
        for warm, label in ((1000, "1k calls/thread"),):
            vals = {}
            for mode in ("without", "with"):
                folder = tmpdir("mem")
                try:
                    env = plain_env() if mode == "without" else traced_env(folder)
                    out = run([LOOP, "-m", "-t", str(threads), "-w", str(warm)], env=env).stdout
                finally:
                    shutil.rmtree(folder, ignore_errors=True)
                vals[mode] = kv(out)
            rss = (vals["with"]["vm_rss_kb"] - vals["without"]["vm_rss_kb"]) / 1024
            hwm = (vals["with"]["vm_hwm_kb"] - vals["without"]["vm_hwm_kb"]) / 1024
            row(8, "%d thread%s, %s: VmRSS / VmHWM added" % (threads, "" if threads == 1 else "s", label),
                "%.1f / %.1f MiB" % (rss, hwm), "one run")


# ---- 10 and 11: bursts and the writer ------------------------------------------

def zst_footer(folder):
    """(written, dropped) of the window in the .zst traces of folder, read by
    streaming `zstd -dc` (the footer is at the end)."""
    written = dropped = 0
    for path in glob.glob(os.path.join(folder, "*")):
        cmd = ["zstd", "-dc", path] if path.endswith(".zst") else ["cat", path]
        z = subprocess.Popen(cmd, stdout=subprocess.PIPE)
        foot = b""
        for line in z.stdout:
            if b'"traceprof"' in line:
                foot = line
        z.wait()
        m = re.search(rb'"part":1,.*?"events_written":(\d+),"events_dropped":(\d+)', foot)
        if m:
            written, dropped = int(m.group(1)), int(m.group(2))
    return written, dropped


def burst_run(threads, calls, pause_us, extra, traced=True, lib=None):
    """Runs launch_loop; returns (written, dropped, VmHWM MB, CPU s)."""
    folder = tmpdir("burst")
    env = traced_env(folder, extra, lib) if traced else plain_env()
    try:
        args = [LOOP, "-t", str(threads), "-n", str(calls), "-b", "100000", "-p", str(pause_us),
                "-w", "0"]
        p = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        if status:
            raise RuntimeError("launch_loop ended with status %d" % status)
        w, d = zst_footer(folder) if traced else (0, 0)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return w, d, ru.ru_maxrss / 1024.0, ru.ru_utime + ru.ru_stime


def bench_bursts():
    if not shutil.which("zstd"):
        row(12, "bursts", "SKIP", "", "", "zstd command not installed")
        return
    zstd = {"TRACEPROF_COMPRESS": "zstd"}
    for name, threads, calls, pause in (("4 threads x 5 bursts of 100k, 30 ms apart", 4, 500000, 30000),
                                        ("1 thread x 21 bursts of 100k, 15 ms apart", 1, 2100000, 15000)):
        drops, hwm = [], []
        for t in range(TRIALS):
            w, d, m, _ = burst_run(threads, calls, pause, zstd)
            drops.append(d)
            hwm.append(m)
            log("burst %s: %d written, %d dropped, VmHWM %.0f MB" % (name, w, d, m))
        row(12, name + ": dropped", "%d" % med(drops), spread(drops, "%d"), "0",
            "met" if med(drops) == 0 else "MISSED (%d CPUs)" % (os.cpu_count() or 0))
        row(12, "  peak memory (VmHWM)", "%.0f MB" % med(hwm), spread(hwm, "%.0f"))


def bench_writer():
    if not shutil.which("zstd"):
        row(13, "writer", "SKIP", "", "", "zstd command not installed")
        return
    for name, extra in (("JSON plain", {"TRACEPROF_COMPRESS": "none"}),
                        ("JSON zstd-1", {"TRACEPROF_COMPRESS": "zstd", "TRACEPROF_ZSTD_LEVEL": "1"})):
        rates, before = [], []
        for t in range(TRIALS):
            _, _, _, base = burst_run(1, 2100000, 15000, None, traced=False)
            w, _, _, cpu = burst_run(1, 2100000, 15000, extra)
            rates.append(w / max(cpu - base, 1e-6))
            if BEFORE:  # interleaved trial by trial
                w, _, _, cpu = burst_run(1, 2100000, 15000, extra, lib=BEFORE)
                before.append(w / max(cpu - base, 1e-6))
        row(13, "writer, %s: events per added CPU-second" % name, "%.2f M/s" % (med(rates) / 1e6),
            spread([r / 1e6 for r in rates], "%.2f"))
        if before:
            r = [x / y for x, y in zip(rates, before)]
            row(13, "  before (BENCH_BEFORE_LIB), same trials", "%.2f M/s" % (med(before) / 1e6),
                spread([x / 1e6 for x in before], "%.2f"))
            row(13, "  this / before (per trial)", "%.3f" % med(r), spread(r, "%.3f"))


def bench_job_read():
    ranks = "100" if QUICK else "1000"
    try:
        p = run([sys.executable, os.path.join(HERE, "job_read.py"), ranks, "1"], timeout=3600)
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        row(14, "job reading", "FAILED", "", "", str(e)[:60])
        return
    for line in p.stdout.splitlines():
        if line.strip():
            row(14, line.rstrip())


def bench_top():
    try:
        p = run([sys.executable, os.path.join(HERE, "top_read.py"), "100" if QUICK else "1000"],
                timeout=600)
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        row(15, "top", "FAILED", "", "", str(e)[:60])
        return
    for line in p.stdout.splitlines():
        if line.strip():
            row(15, line.rstrip())
