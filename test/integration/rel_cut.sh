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
import os, signal, subprocess, sys
sys.path.insert(0, os.path.join(os.environ["TP_TOP"], "test", "lib"))
import rel

prog = sys.argv[1]
tp = os.path.join(os.environ["BUILD"], "traceprof")
check = rel.Checks()

def env(folder, preload, compress):
    return rel.die_env(folder, preload, {"TRACEPROF_COMPRESS": compress, "TRACEPROF_FORMAT": FORMAT})

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
        pid, ended, death = rel.run_die(p, sig)
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
        # Every step that ended more than a second before the death, from
        # the window's first (step 1), with its events.
        got = rel.check_cut_steps(check, label, t, ended, death, EVENTS, pftrace=FORMAT == "perfetto")
        check(os.path.basename(files[0]).startswith("rank0.step%d." % max(got or [0])),
              "%s: named after the last step it holds (%s)" % (label, os.path.basename(files[0])))
        s = subprocess.run([tp, "summary", files[0]], capture_output=True, timeout=120)
        check(s.returncode == 0 and b"work" in s.stdout, "%s: summary reads it (%s)" % (label, s.stderr[-200:]))
        m = subprocess.run([tp, "merge", "-o", folder + "/merged" + (".pftrace" if FORMAT == "perfetto" else ".json"),
                            files[0]], capture_output=True, timeout=120)
        check(m.returncode == 0 and m.stderr.count(b"a cut window") == 1,
              "%s: merge reads it and says it is cut, once (%s)" % (label, m.stderr[-300:]))
check.done()
PY
