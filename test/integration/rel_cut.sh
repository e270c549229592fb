# The job that dies keeps its trace (issue 44): a C program dies in the
# middle of a window, by SIGKILL or SIGTERM from outside (no handler), by
# abort() or by a NULL dereference.  The library has streamed the window to
# its hidden temporary file every half second; `traceprof recover` (plain
# LD_PRELOAD) and `traceprof run` (by itself) finish it into a cut trace:
# one file, named after the last step it holds, whose footer says it was
# cut, and which holds every step that ended more than a second before the
# death with its 20 events, as the trace checker and `summary` read it.
# Plain files, and one case of each compression.  Without the streaming
# the writer's 1 MiB buffer holds the whole window (20 events a step: about
# 500 steps' worth) and the temporary file is empty; without recover it
# stays hidden.  rel_cut_pftrace.sh runs it again with TP_CUT_FORMAT=perfetto
# (.pftrace files, read with Perfetto's schema by protoc where it is here).
. "$TP_TOP/test/lib/common.sh"
prog="$BUILD/test/prog_die"
[ -x "$prog" ] || die "$prog not built"
"$PYTHON" - "$prog" <<'PY'
import os, signal, subprocess, sys, time
sys.path.insert(0, os.path.join(os.environ["TP_TOP"], "test", "lib"))
import rel, tracecheck

prog = sys.argv[1]
tp = os.path.join(os.environ["BUILD"], "traceprof")
fails = []
def check(cond, msg):
    print(("ok   " if cond else "FAIL ") + msg)
    if not cond:
        fails.append(msg)

def env(folder, preload, compress):
    e = {k: v for k, v in os.environ.items() if not k.startswith("TRACEPROF_")}
    e.pop("LD_PRELOAD", None)
    if preload:
        e["LD_PRELOAD"] = os.environ["TP_PRELOAD"]
    e.update({"TRACEPROF_FOLDER": folder, "TRACEPROF_SCHEDULE": "wait=1,active=100000",
              "TRACEPROF_COMPRESS": compress, "TRACEPROF_FORMAT": FORMAT})
    # A sanitizer's own SIGSEGV handler would turn the NULL dereference
    # into its exit status (1 under ASan, 66 under TSan; docs/development.md).
    san = {"asan": "ASAN_OPTIONS", "tsan": "TSAN_OPTIONS"}.get(os.environ.get("TP_SANITIZER"))
    if san:
        e[san] = e.get(san, "") + ":handle_segv=0"
    return e

# (name, program mode, steps before dying, signal sent from outside or None,
#  expected status, compression)
CASES = (("SIGKILL", "loop", 0, signal.SIGKILL, -signal.SIGKILL, "none"),
         ("SIGTERM", "loop", 0, signal.SIGTERM, -signal.SIGTERM, "none"),
         ("abort", "abort", 250, None, -signal.SIGABRT, "none"),
         ("NULL dereference", "segv", 250, None, -signal.SIGSEGV, "none"),
         ("SIGKILL zstd", "loop", 0, signal.SIGKILL, -signal.SIGKILL, "zstd"),
         ("abort gzip", "abort", 250, None, -signal.SIGABRT, "gzip"))
FORMAT = os.environ.get("TP_CUT_FORMAT", "json")
if FORMAT == "perfetto":
    CASES = CASES[:4] + CASES[5:]  # SIGTERM is the same death as SIGKILL to the file
EVENTS = 20
for how in ("LD_PRELOAD", "traceprof run"):
    for name, mode, steps, sig, status, compress in CASES:
        if FORMAT == "perfetto" and how != "LD_PRELOAD" and name != "SIGKILL":
            continue  # the launcher runs the same recover: one case of it (time)
        label = "%s, %s" % (name, how)
        folder = "%s_%s_%s" % (mode + (sig.name if sig else ""), compress, how.split()[-1])
        cmd = [prog, mode, str(steps), str(EVENTS)]
        if how != "LD_PRELOAD":
            cmd = [tp, "run", "--folder", folder, "--schedule", "wait=1,active=100000", "--"] + cmd
        p = subprocess.Popen(cmd, env=env(folder, how == "LD_PRELOAD", compress), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        ended = {}
        death = None
        pid = None
        t0 = time.monotonic()
        for line in p.stdout:
            w = line.decode().split()
            if w[0] == "pid":
                pid = int(w[1])
            elif w[0] == "ended":
                ended[int(w[1])] = int(w[2])
            elif w[0] == "dying":
                death = int(w[1])
            if sig and time.monotonic() - t0 > 3.0:
                death = time.monotonic_ns()
                os.kill(pid, sig)
                break
        rest, err = p.communicate(timeout=120)
        err = err.decode()
        check(p.returncode == status, "%s: exit status %d (got %d; %s)" % (label, status, p.returncode, err[-300:]))
        if how == "LD_PRELOAD":
            r = subprocess.run([tp, "recover", folder], capture_output=True, timeout=120)
            err = r.stderr.decode()
            check(r.returncode == 0, "%s: recover exits 0 (%s)" % (label, err[-300:]))
        check("cut" in err and "saved" in err, "%s: the report says the window was cut: %r" % (label, err[-400:]))
        if how == "traceprof run" and sig:
            check("by %s" % sig.name in err, "%s: the report names the signal" % label)
        files = rel.trace_files(folder)
        check(len(files) == 1 and not rel.temp_files(folder),
              "%s: one trace file, no temporary file (%s, %s)" % (label, files, rel.temp_files(folder)))
        if not files:
            continue
        t = rel.load_trace(files[0])
        probs = tracecheck.check_trace(t, pftrace=FORMAT == "perfetto")
        check(not probs, "%s: the trace checker passes it (%s)" % (label, probs[:3]))
        footer = t.get("traceprof", {})
        check(isinstance(footer.get("cut"), dict), "%s: the footer says it was cut" % label)
        evs = t["traceEvents"]
        got = {int(e["name"].split("#")[1]) for e in evs if e.get("name", "").startswith("ProfilerStep#")}
        # Every step that ended more than a second before the death, from
        # the window's first (step 1).
        want = sorted(s for s, at in ended.items() if s >= 1 and at < death - 1000000000)
        check(len(want) >= 50, "%s: the program ran %d steps before the last second" % (label, len(want)))
        missing = [s for s in want if s not in got]
        check(not missing, "%s: every step ended a second before the death is there (missing %s of %d)"
              % (label, missing[:5], len(want)))
        check(os.path.basename(files[0]).startswith("rank0.step%d." % max(got or [0])),
              "%s: named after the last step it holds (%s)" % (label, os.path.basename(files[0])))
        launches = sum(1 for e in evs if e.get("name") == "launch")
        check(launches >= EVENTS * len(want), "%s: their events are there (%d launches for %d steps)"
              % (label, launches, len(want)))
        s = subprocess.run([tp, "summary", files[0]], capture_output=True, timeout=120)
        check(s.returncode == 0 and b"work" in s.stdout, "%s: summary reads it (%s)" % (label, s.stderr[-200:]))
        m = subprocess.run([tp, "merge", "-o", folder + "/merged" + (".pftrace" if FORMAT == "perfetto" else ".json"),
                            files[0]], capture_output=True, timeout=120)
        check(m.returncode == 0 and m.stderr.count(b"a cut window") == 1,
              "%s: merge reads it and says it is cut, once (%s)" % (label, m.stderr[-300:]))
sys.exit(1 if fails else 0)
PY
