# The next run finishes compressed cut windows (issue 44): a plain
# LD_PRELOAD run writing .json.gz or .json.zst is killed by SIGKILL in the
# middle of a window; the next plain LD_PRELOAD run into the same folder
# finishes its temporary file on its flush thread (collector/cut_codec.c):
# it keeps the whole frames (gzip members) the writer ended at each 0.5 s
# flush, as they are, drops a frame cut short (here one appended by hand,
# naming a step that must not count), and appends one frame with the
# closing text and a footer saying it was cut.  The finished file must pass
# `gzip -t` / `zstd -t`, read whole with Python's gzip and the zstd
# command, pass the trace checker and `summary` (which says "cut"), hold
# every step that ended a second before the death with its events, and be
# named after its last step.  Before the frames and cut_codec.c the file
# was left hidden, named in one line for `traceprof recover`.
. "$TP_TOP/test/lib/common.sh"
prog="$BUILD/test/prog_die"
[ -x "$prog" ] || die "$prog not built"
command -v zstd >/dev/null || skip "no zstd command"
command -v gzip >/dev/null || skip "no gzip command"
"$PYTHON" - "$prog" <<'PY'
import gzip, os, signal, subprocess, sys
sys.path.insert(0, os.path.join(os.environ["TP_TOP"], "test", "lib"))
import rel

prog = sys.argv[1]
tp = os.path.join(os.environ["BUILD"], "traceprof")
check = rel.Checks()
EVENTS = 20

def compress(codec, data):
    if codec == "gzip":
        return gzip.compress(data)
    return subprocess.run(["zstd", "-q", "-c", "--check"], input=data, capture_output=True,
                          check=True).stdout

for codec, ext, tool in (("gzip", ".json.gz", "gzip"), ("zstd", ".json.zst", "zstd")):
    folder = "next_" + codec
    env = lambda sched: rel.die_env(folder, True, {"TRACEPROF_COMPRESS": codec,
                                                   "TRACEPROF_SCHEDULE": sched})
    p = subprocess.Popen([prog, "loop", "0", str(EVENTS)], env=env("wait=1,active=100000"),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    pid, ended, death = rel.run_die(p, signal.SIGKILL)
    p.communicate(timeout=60)
    check(p.returncode == -signal.SIGKILL, "%s: the first run was killed" % codec)
    temps = rel.temp_files(folder)
    check(len(temps) == 1 and not rel.trace_files(folder), "%s: it left one temporary file (%s)" % (codec, temps))
    if len(temps) != 1:
        continue
    with open(temps[0], "rb") as f:
        orig = f.read()
    # A frame cut short, as a death inside a write leaves it: half of one
    # holding a step that must not count.
    bad = compress(codec, b',\n{"ph":"X","name":"ProfilerStep#99999","ts":1,"dur":1,"pid":1,"tid":1}' * 50)
    with open(temps[0], "ab") as f:
        f.write(bad[:len(bad) // 2])
    r = subprocess.run([prog, "exit", "20", str(EVENTS)], env=env("wait=1,active=2,repeat=1"),
                       capture_output=True, timeout=120)
    out, err = r.stdout.decode(), r.stderr.decode()
    check(r.returncode == 0, "%s: the next run exits 0 (%s)" % (codec, err[-300:]))
    check(out.count("ended") == 20, "%s: the next run's output is its own (%r)" % (codec, out[-200:]))
    files = rel.trace_files(folder)
    mine = [f for f in files if ".step2." in os.path.basename(f)]
    cut = [f for f in files if f not in mine]
    check(len(mine) == 1, "%s: the next run saved its own window (%s)" % (codec, files))
    check(not rel.temp_files(folder), "%s: no temporary file is left (%s)" % (codec, rel.temp_files(folder)))
    check(err.count("finished") == 1 and "cut window of an earlier run (pid %d)" % pid in err
          and "traceprof recover" not in err, "%s: one line says it was finished: %r" % (codec, err[-600:]))
    check(len(cut) == 1 and cut[0].endswith(ext), "%s: one cut trace, %s (%s)" % (codec, ext, cut))
    if len(cut) != 1:
        continue
    t_ok = subprocess.run([tool, "-t", cut[0]], capture_output=True)
    check(t_ok.returncode == 0, "%s: %s -t passes it (%s)" % (codec, tool, t_ok.stderr[-200:]))
    with open(cut[0], "rb") as f:
        new = f.read()
    # The whole frames are kept as they were: no copy, no compression.
    same = len(os.path.commonprefix([orig, new]))
    check(same >= len(orig) * 9 // 10, "%s: the file's frames are kept as written (%d of %d bytes)"
          % (codec, same, len(orig)))
    try:
        t = rel.load_trace(cut[0])  # Python's gzip, or the zstd command
    except (ValueError, OSError, subprocess.CalledProcessError) as e:
        check(False, "%s: it reads whole (%s)" % (codec, e))
        continue
    got = rel.check_cut_steps(check, codec, t, ended, death, EVENTS, pid)
    evs = t["traceEvents"]
    check(99999 not in got and os.path.basename(cut[0]) == "rank0.step%d.trace%s" % (max(got or [0]), ext),
          "%s: named after the last step it holds (%s)" % (codec, os.path.basename(cut[0])))
    check(t.get("traceName") == os.path.basename(cut[0])[:-len(ext) + 5],
          "%s: its trace name is its name without the codec (%s)" % (codec, t.get("traceName")))
    check(t["traceprof"].get("events_written") == len(evs) - 2,
          "%s: the footer counts the events kept (%s of %d)" % (codec, t["traceprof"].get("events_written"), len(evs) - 2))
    s = subprocess.run([tp, "summary", cut[0]], capture_output=True, timeout=120)
    check(s.returncode == 0 and b"work" in s.stdout and b"a cut window" in s.stderr,
          "%s: summary reads it and says it is cut (%s)" % (codec, s.stderr[-200:]))
check.done()
PY
