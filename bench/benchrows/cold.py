"""bench/run's row 11: the launch path with cold caches (callgrind's
counts of the hot path and a calibration of what a cold line and a cold
branch cost on this machine)."""
import os
import re
import shutil
import subprocess

from .common import (BEFORE, BUILD, LIB, NOTES, QUICK, TRIALS, footers, kv, log, med, plain_env,
                     row, run, spread, tmpdir, traced_env)

# ---- 11: the launch path with cold caches (issue 22) -------------------------------------

def bench_cold_launch():
    prog = os.path.join(BUILD, "bench", "cold_launch")
    if not os.access(prog, os.X_OK):
        row(11, "cold launch", "SKIP", "", "", "%s not built" % prog)
        return
    idle = {"TRACEPROF_SCHEDULE": "skip_first=1000000000,active=1"}
    libs = [("", LIB)] + ([("before ", BEFORE)] if BEFORE else [])
    modes = [("plain", None, None)]
    for tag, lib in libs:
        modes += [(tag + "not recording", idle, lib), (tag + "outer", {}, lib)]
        if not tag:
            modes.append(("all", {"TRACEPROF_CUDA_CALLS": "all"}, lib))
    gaps = (0, 1, 2)
    vals = {(m, e): [] for m, _, _ in modes for e in gaps}
    probes = {"skip": None, 0: [], 2: []}  # gap -> one {(kind, n): ns} per trial
    for t in range(TRIALS):
        for e in gaps:
            # The driver-like gap takes ~100 us on a shared 2-core VM: fewer launches.
            n = ("4000" if QUICK else "10000") if e == 2 else ("20000" if QUICK else "40000")
            for m, extra, lib in modes:  # interleaved: a trial of each, in turn
                folder = tmpdir("cold")
                try:
                    env = plain_env() if extra is None else traced_env(folder, extra, lib)
                    out = kv(run([prog, "-n", n, "-e", str(e)], env=env).stdout)
                    if extra is not None and not m.endswith("not recording"):
                        written, dropped, _ = footers(folder)
                        if dropped:  # the flush thread fell behind (a loaded machine)
                            NOTES.append("row 11 %s gap %d: %d dropped (figure is partly the drop path's)"
                                         % (m, e, dropped))
                finally:
                    shutil.rmtree(folder, ignore_errors=True)
                vals[(m, e)].append(out["ns_per_launch"])
            log("cold launch trial %d gap %d done" % (t + 1, e))
        cold_probe_trial(prog, probes)
    names = {0: "tight loop", 1: "60 KiB code gap (-e 1)", 2: "driver-like gap (-e 2)"}
    for e in gaps:
        base = vals[("plain", e)]
        row(11, "launch (4 intercepted calls), %s, without traceprof" % names[e], "%.1f ns" % med(base),
            spread(base))
        for m, _, _ in modes[1:]:
            d = [w - b for w, b in zip(vals[(m, e)], base)]
            target, verdict = "", ""
            if m == "outer" and e == 2:
                target, verdict = "<= 60 ns", "met" if med(d) <= 60 else "MISSED"
            row(11, "  added per launch, %s" % m, "%.1f ns" % med(d), spread(d), target, verdict)
    for tag, _ in libs:
        tight = [w - b for w, b in zip(vals[(tag + "outer", 0)], vals[("plain", 0)])]
        cold = [w - b for w, b in zip(vals[(tag + "outer", 2)], vals[("plain", 2)])]
        if med(tight) > 0:
            r = med(cold) / med(tight)
            row(11, "  %sdriver-like / tight, outer (one recorded call)" % tag, "%.2fx" % r, "", "<= 2x",
                "met" if r <= 2 else "MISSED")
    slopes = cold_probe_rows(probes)
    counts = cold_misses(prog, libs)
    if slopes:
        cold_model_rows(slopes, counts, vals)


# The events cachegrind counts per launch in traceprof's own code on the
# recording thread: the exported wrappers (no debug information: "???") and
# the tp_short_/tp_rec_ functions, whatever file their inlined lines come from.
CG_EVENTS = ("Ir", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw", "Bi", "Bim")


def cg_hot_path(path, launches):
    ev, tot, fl, fn = None, {}, None, None
    for line in open(path):
        if line.startswith("events:"):
            ev = line.split()[1:]
        elif line.startswith("fl="):
            fl = line[3:].strip()
        elif line.startswith("fn="):
            fn = line[3:].strip()
        elif line[:1].isdigit() and ev and fn is not None:
            ours = fn.startswith(("tp_short_", "tp_rec_")) or (
                fl == "???" and fn.startswith(("__cuda", "cu")))
            if ours:
                for k, x in zip(ev, line.split()[1:]):
                    tot[k] = tot.get(k, 0) + int(x)
    return {k: tot.get(k, 0) / launches for k in CG_EVENTS}


# ---- 11: what a cold line and a cold branch cost here (calibration) ---------------------
#
# build/bench/cold_launch -c times small probes of known footprint
# (bench/prog/cold_probe.S) after the same driver-like gap as the launch, and
# tight: a probe of kind K and size N touches N more code lines, taken jumps,
# code pages, calls or data lines than the N = 0 probe of its kind.  The
# slope of the median against N (least squares over N) is what one more of
# them costs; one slope per trial, the row shows their median and range.

def cold_probe_trial(prog, probes):
    if probes["skip"]:
        return
    for e, n in ((2, "1200" if QUICK else "2000"), (0, "50000")):
        try:
            p = run([prog, "-c", "all", "-e", str(e), "-n", n], env=plain_env())
        except (RuntimeError, subprocess.TimeoutExpired) as ex:
            probes["skip"] = "cold_launch -c: %s" % str(ex)[:60]
            return
        got = {(k, int(x)): float(v) for k, x, v in
               re.findall(r"probe=(\w+) n=(\d+) ns=(\S+)", p.stdout)}
        if not got:
            probes["skip"] = "cold_launch -c printed no probe (built before it had -c?)"
            return
        probes[e].append(got)
    log("cold launch calibration probes done")


def slope(points):
    """Least-squares slope of [(n, ns)]."""
    mx = sum(n for n, _ in points) / len(points)
    my = sum(v for _, v in points) / len(points)
    den = sum((n - mx) ** 2 for n, _ in points)
    return sum((n - mx) * (v - my) for n, v in points) / den


# (key, what one more costs, how: a kind's slope, or a difference of two)
PROBE_FITS = (
    ("line", "a sequential code line (lines)", ("lines",)),
    ("jnext", "a taken jmp to the next line (jnext - lines)", ("jnext", "lines")),
    ("jump", "a taken jmp to a distinct line, same page (jumps)", ("jumps",)),
    ("page", "a code page more (jpages - jumps)", ("jpages", "jumps")),
    ("call", "a direct call+ret to a distinct line (calls)", ("calls",)),
    ("ind", "an indirect call, target in a register (ind - calls)", ("ind", "calls")),
    ("indd", "an indirect call+ret through a cold pointer (indd)", ("indd",)),
    ("data", "an independent data line, own page (data)", ("data",)),
    ("tsc", "a rdtsc among 8 cold loads (tsc)", ("tsc",)),
    ("chase", "a dependent data line, own page (chase)", ("chase",)),
    ("chasep", "a dependent data line, one page (chasep)", ("chasep",)),
)


def probe_slopes(trial):
    """{key: ns per one more} from one trial's {(kind, n): ns}."""
    def kind_slope(kind):
        return slope(sorted((n, v) for (k, n), v in trial.items() if k == kind))
    out = {}
    for key, _, kinds in PROBE_FITS:
        out[key] = kind_slope(kinds[0]) - (kind_slope(kinds[1]) if len(kinds) > 1 else 0)
    return out


def cold_probe_rows(probes):
    if probes["skip"] or not probes[2]:
        row(11, "calibration: cold line/branch costs", "SKIP", "", "",
            probes["skip"] or "no trial ran")
        return None
    cold = [probe_slopes(t) for t in probes[2]]
    warm = [probe_slopes(t) for t in probes[0]]
    row(11, "calibration (cold_launch -c, no traceprof): ns per one more ...", "after -e 2",
        "min-max", "", "tight loop")
    slopes = {}
    for key, what, _ in PROBE_FITS:
        c = [s[key] for s in cold]
        w = [s[key] for s in warm]
        slopes[key] = med(c)
        row(11, "  " + what, "%.1f ns" % med(c), spread(c), "", "%.1f ns" % med(w))
    # The data_N curve itself (the first cold line costs most, the others
    # overlap with it): the model's lower bound for the data lines.
    pts = sorted(set(n for k, n in probes[2][0] if k == "data"))
    curve = [(n, med([t[("data", n)] - t[("data", 0)] for t in probes[2]])) for n in pts]
    slopes["data_curve"] = curve
    row(11, "  N independent data lines (data_N - data_0)",
        ", ".join("%d: %.0f" % (n, v) for n, v in curve[1:]) + " ns")
    base = [t[("lines", 0)] for t in probes[2]]
    row(11, "  (the empty probe, rdtsc pair and call included)", "%.1f ns" % med(base), spread(base))
    return slopes


# Taken direct branches of a recorded launch in traceprof's code, counted in
# `objdump -d build/libtraceprof.so` (2026-11-23, issue 22): 2 in each of the
# 4 wrappers (into the recording tests; out to tp_short_ or to the quiet
# exit).  Cachegrind counts lines and indirect branches, not taken ones.
COLD_TAKEN_OUTER = 8
# The longest chain of dependent data loads on that path, from the same
# objdump: the GOT entry of the TLS offset, the TLS word (the thread's
# struct tp_thread pointer), the struct's producer line; the slot's stores
# after it do not hold up the timing's lfence.
COLD_CHAIN_OUTER = 3


def interp(curve, x):
    """curve [(n, v)] sorted by n, linearly interpolated (and extrapolated
    past its last point with its last slope) at x."""
    for (n0, v0), (n1, v1) in zip(curve, curve[1:]):
        if x <= n1 or (n1, v1) == curve[-1]:
            return v0 + (v1 - v0) * (x - n0) / (n1 - n0)
    return curve[-1][1]


def cold_model_rows(slopes, counts, vals):
    """The cold penalty of a recorded launch (driver-like minus tight,
    added by traceprof) against what the calibration predicts from the
    counted footprint: code lines at the cost of a line reached by a taken
    jump or a sequential one, the taken jumps, the indirect branches, and the
    data lines somewhere between all overlapping (the data_N curve) and all
    dependent (chase)."""
    for m in ("not recording", "outer"):
        c = counts.get(m)
        if not c:
            continue
        added = {e: [w - b for w, b in zip(vals[(m, e)], vals[("plain", e)])] for e in (0, 2)}
        measured = [a2 - a0 for a2, a0 in zip(added[2], added[0])]
        taken = COLD_TAKEN_OUTER if m == "outer" else 0
        lines = c["I1mr"]
        code = (taken * slopes["jump"] + max(lines - taken, 0) * slopes["line"] +
                c["Bi"] * slopes["ind"])
        dlines = c["D1mr"] + c["D1mw"]
        lo = code + interp(slopes["data_curve"], dlines)
        hi = code + dlines * slopes["chase"]
        # Between the two: the path's chain serialized, the other lines
        # overlapping with it (not recording: no chain, the lower bound).
        chain = min(COLD_CHAIN_OUTER if m == "outer" else 0, dlines)
        mid = code + chain * slopes["chase"] + (dlines - chain) * max(slopes["data"], 0)
        if not chain:
            mid = lo
        row(11, "  model, %s: cold - tight added per launch" % m, "%.0f ns measured" % med(measured),
            spread(measured, "%.0f"), "predicted %.0f-%.0f, chain %.0f" % (lo, hi, mid),
            "code %.0f (%.1f lines, %d taken, %.1f ind.), data %.1f lines" %
            (code, lines, taken, c["Bi"], dlines))


def cold_misses(prog, libs):
    """Rows of cachegrind's counts; returns this library's counts per
    launch after the driver-like gap, {"not recording": {...}, "outer":
    {...}}, for the model."""
    counts = {}
    if not shutil.which("valgrind"):
        row(11, "cachegrind misses per launch", "SKIP", "", "", "valgrind not installed")
        return counts
    # 32 KiB L1i, 48 KiB L1d, and a 1 MiB "LL" that stands for a core's L2.
    sim = ["--I1=32768,8,64", "--D1=49152,12,64", "--LL=1048576,16,64"]
    for tag, lib in libs:
        for m, extra in (("not recording", {"TRACEPROF_SCHEDULE": "skip_first=1000000000,active=1"}),
                         ("outer", {})):
            for e, n in ((0, "2000"), (2, "500")):
                folder = tmpdir("cg")
                try:
                    out = os.path.join(folder, "cg.out")
                    # A ring larger than the run: the flush thread is slow under valgrind.
                    env = traced_env(folder, dict(extra, TRACEPROF_BUFFER_EVENTS="262144"), lib)
                    p = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=yes",
                                        "--branch-sim=yes", "--cachegrind-out-file=" + out] + sim +
                                       [prog, "-w", "0", "-n", n, "-e", str(e)], env=env,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                       timeout=600)
                    if p.returncode != 0:
                        raise RuntimeError(p.stderr.strip()[-300:])
                    # -w 0 and n within one block: 3 warm blocks and the
                    # timed one, all counted.
                    launches = 4 * int(kv(p.stdout)["launches"])
                    c = cg_hot_path(out, launches)
                except (RuntimeError, subprocess.TimeoutExpired, KeyError, ValueError) as ex:
                    row(11, "cachegrind misses per launch", "SKIP", "", "", str(ex)[:60])
                    return counts
                finally:
                    shutil.rmtree(folder, ignore_errors=True)
                row(11, "  cachegrind, %s%s, %s: per launch" % (tag, m, "tight" if e == 0 else "driver-like"),
                    "%.0f instr" % c["Ir"],
                    "L1i %.1f, L1d %.1f+%.1f, L2 %.1f, ind. mispredicts %.1f" %
                    (c["I1mr"], c["D1mr"], c["D1mw"], c["ILmr"] + c["DLmr"] + c["DLmw"], c["Bim"]))
                if not tag and e == 2:
                    counts[m] = c
    return counts
