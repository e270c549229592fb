# The next run finishes compressed and Perfetto cut windows (issue 44): a
# plain LD_PRELOAD run writing .json.gz, .json.zst, .pftrace or .pftrace.zst
# is killed by SIGKILL in the middle of a window; the next plain LD_PRELOAD
# run into the same folder finishes its temporary file on its flush thread
# (collector/cut_codec.c, cut_pf.c): it keeps the whole frames (gzip
# members) the writer ended at each 0.5 s flush, or the whole packets, as
# they are, drops a frame or packet cut short (here one appended by hand,
# naming a step that must not count), and appends the end: the closing text
# (JSON) or the trace-name and footer packets (Perfetto), with a footer
# saying it was cut.  The finished file must pass `gzip -t` / `zstd -t`,
# read whole (Python's gzip, the zstd command; a .pftrace with Perfetto's
# schema by protoc where it is here, test/lib/rel.py), pass the trace
# checker and `summary` (which says "cut"), hold every step that ended a
# second before the death with its events, be named after its last step,
# and count the same events and steps as `traceprof recover` does on a copy
# of the same file.  Before, each was left hidden, named in one line for
# `traceprof recover`.
. "$TP_TOP/test/lib/common.sh"
prog="$BUILD/test/prog_die"
[ -x "$prog" ] || die "$prog not built"
command -v zstd >/dev/null || skip "no zstd command"
command -v gzip >/dev/null || skip "no gzip command"
"$PYTHON" - "$prog" <<'PY'
import gzip, os, re, signal, subprocess, sys
sys.path.insert(0, os.path.join(os.environ["TP_TOP"], "test", "lib"))
import rel

prog = sys.argv[1]
tp = os.path.join(os.environ["BUILD"], "traceprof")
check = rel.Checks()
EVENTS = 20

def compress(codec, data):
    if codec == "gzip":
        return gzip.compress(data)
    if codec == "none":
        return data
    return subprocess.run(["zstd", "-q", "-c", "--check"], input=data, capture_output=True,
                          check=True).stdout

STEP_JSON = b',\n{"ph":"X","name":"ProfilerStep#99999","ts":1,"dur":1,"pid":1,"tid":1}' * 50
# A TracePacket begun, holding the same name, its length saying more.
STEP_PF = b"\x0a\xc8\x01" + b"\x5a\x40" + b"ProfilerStep#99999" * 4
CASES = (("gzip", "json", "gzip", ".json.gz", "gzip"), ("zstd", "json", "zstd", ".json.zst", "zstd"),
         ("pftrace", "perfetto", "none", ".pftrace", None),
         ("pftrace zstd", "perfetto", "zstd", ".pftrace.zst", "zstd"))
for label, fmt, comp, ext, tool in CASES:
    folder = "next_" + label.replace(" ", "_")
    def env(sched):
        return rel.die_env(folder, True, {"TRACEPROF_COMPRESS": comp, "TRACEPROF_FORMAT": fmt,
                                          "TRACEPROF_SCHEDULE": sched})
    p = subprocess.Popen([prog, "loop", "0", str(EVENTS)], env=env("wait=1,active=100000"),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    pid, ended, death = rel.run_die(p, signal.SIGKILL)
    p.communicate(timeout=60)
    check(p.returncode == -signal.SIGKILL, "%s: the first run was killed" % label)
    temps = rel.temp_files(folder)
    check(len(temps) == 1 and not rel.trace_files(folder), "%s: it left one temporary file (%s)" % (label, temps))
    if len(temps) != 1:
        continue
    with open(temps[0], "rb") as f:
        orig = f.read()
    # The same file for `traceprof recover`, in a folder of its own.
    os.makedirs(folder + "_recover")
    with open(os.path.join(folder + "_recover", os.path.basename(temps[0])), "wb") as f:
        f.write(orig)
    # A frame (packet) cut short, as a death inside a write leaves it: half
    # of one holding a step that must not count.
    bad = STEP_PF if comp == "none" else compress(comp, STEP_JSON)
    with open(temps[0], "ab") as f:
        f.write(bad[:len(bad) // 2] if comp != "none" else bad)
    r = subprocess.run([prog, "exit", "20", str(EVENTS)], env=env("wait=1,active=2,repeat=1"),
                       capture_output=True, timeout=120)
    out, err = r.stdout.decode(), r.stderr.decode()
    check(r.returncode == 0, "%s: the next run exits 0 (%s)" % (label, err[-300:]))
    check(out.count("ended") == 20, "%s: the next run's output is its own (%r)" % (label, out[-200:]))
    files = rel.trace_files(folder)
    mine = [f for f in files if ".step2." in os.path.basename(f)]
    cut = [f for f in files if f not in mine]
    check(len(mine) == 1, "%s: the next run saved its own window (%s)" % (label, files))
    check(not rel.temp_files(folder), "%s: no temporary file is left (%s)" % (label, rel.temp_files(folder)))
    check(err.count("finished") == 1 and "cut window of a process that died (pid %d)" % pid in err
          and "traceprof recover" not in err, "%s: one line says it was finished: %r" % (label, err[-600:]))
    check(len(cut) == 1 and cut[0].endswith(ext), "%s: one cut trace, %s (%s)" % (label, ext, cut))
    if len(cut) != 1:
        continue
    if tool:
        t_ok = subprocess.run([tool, "-t", cut[0]], capture_output=True)
        check(t_ok.returncode == 0, "%s: %s -t passes it (%s)" % (label, tool, t_ok.stderr[-200:]))
    with open(cut[0], "rb") as f:
        new = f.read()
    # The whole frames (packets) are kept as they were: no copy.
    same = len(os.path.commonprefix([orig, new]))
    check(same >= len(orig) * 9 // 10, "%s: the file's frames are kept as written (%d of %d bytes)"
          % (label, same, len(orig)))
    try:
        t = rel.load_trace(cut[0])  # Python's gzip, the zstd command, protoc
    except (ValueError, OSError, subprocess.CalledProcessError) as e:
        check(False, "%s: it reads whole (%s)" % (label, e))
        continue
    got = rel.check_cut_steps(check, label, t, ended, death, EVENTS, pid, pftrace=fmt == "perfetto")
    check(99999 not in got and os.path.basename(cut[0]) == "rank0.step%d.trace%s" % (max(got or [0]), ext),
          "%s: named after the last step it holds (%s)" % (label, os.path.basename(cut[0])))
    check(t.get("traceName") == re.sub(r"\.(gz|zst)$", "", os.path.basename(cut[0])),
          "%s: its trace name is its name without the codec (%s)" % (label, t.get("traceName")))
    footer = t["traceprof"]
    if fmt == "json":
        check(footer.get("events_written") == len(t["traceEvents"]) - 2,
              "%s: the footer counts the events kept (%s of %d)"
              % (label, footer.get("events_written"), len(t["traceEvents"]) - 2))
    else:
        # recover_pf.py reads the same packets: the same count and steps.
        rr = subprocess.run([tp, "recover", folder + "_recover"], capture_output=True, timeout=120)
        theirs = rel.trace_files(folder + "_recover")
        ok = rr.returncode == 0 and len(theirs) == 1
        ft = rel.load_trace(theirs[0])["traceprof"] if ok else {}
        check(ok and (ft.get("events_written"), ft.get("steps"), ft.get("part"), ft.get("parts"))
              == (footer.get("events_written"), footer.get("steps"), footer.get("part"), footer.get("parts")),
              "%s: the footer counts what recover counts (%s %s; recover: %s %s)"
              % (label, footer.get("events_written"), footer.get("steps"), ft.get("events_written"),
                 ft.get("steps")))
        check(sorted(footer["cut"]) == sorted(k for k in ft.get("cut", {}) if ft["cut"][k] is not None),
              "%s: its cut member has recover's members (%s)" % (label, sorted(footer["cut"])))
    s = subprocess.run([tp, "summary", cut[0]], capture_output=True, timeout=120)
    check(s.returncode == 0 and b"work" in s.stdout and b"a cut window" in s.stderr,
          "%s: summary reads it and says it is cut (%s)" % (label, s.stderr[-200:]))
check.done()
PY
