# The next run recovers (issue 44): a plain LD_PRELOAD run killed by SIGKILL
# in the middle of a window leaves its hidden temporary file; the next
# plain LD_PRELOAD run into the same folder finishes it on its flush thread
# when it first opens the folder (collector/cut.c), with no `traceprof
# recover`: one cut trace named after the last step it holds, every step
# that ended a second before the death there with its events, a footer
# saying it was cut, read by the trace checker and `summary`; the second
# run's own window is saved as usual and its output is unchanged.  A
# compressed cut file with no whole frame (its process died before its
# first flush: cut here to 100 bytes) is left to `traceprof recover`, named
# in one line (the compressed and Perfetto ones the library finishes:
# rel_cut_next_codecs.sh).
. "$TP_TOP/test/lib/common.sh"
prog="$BUILD/test/prog_die"
[ -x "$prog" ] || die "$prog not built"
"$PYTHON" - "$prog" <<'PY'
import fcntl, json, os, signal, subprocess, sys, time
sys.path.insert(0, os.path.join(os.environ["TP_TOP"], "test", "lib"))
import rel, tracecheck

prog = sys.argv[1]
tp = os.path.join(os.environ["BUILD"], "traceprof")
check = rel.Checks()

def env(folder, compress, schedule):
    return rel.die_env(folder, True, {"TRACEPROF_SCHEDULE": schedule, "TRACEPROF_COMPRESS": compress})

EVENTS = 20
for compress in ("none", "zstd"):
    folder = "next_" + compress
    p = subprocess.Popen([prog, "loop", "0", str(EVENTS)], env=env(folder, compress, "wait=1,active=100000"),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    def locked(pid):
        # The live writer holds its file's lock (format/sink.c).
        with open(rel.temp_files(folder)[0], "rb") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held = False
            except BlockingIOError:
                held = True
        check(held, "%s: the live writer holds its temporary file's lock" % compress)
    pid, ended, death = rel.run_die(p, signal.SIGKILL, at_kill=locked)
    p.communicate(timeout=60)
    check(p.returncode == -signal.SIGKILL, "%s: the first run was killed" % compress)
    temps = rel.temp_files(folder)
    check(len(temps) == 1 and not rel.trace_files(folder), "%s: it left one temporary file (%s)" % (compress, temps))
    if compress != "none":
        os.truncate(temps[0], 100)
    if compress == "none":
        # Two deaths the writer can leave: inside an event's write (a
        # last line cut short, here naming a step that must not count), and
        # inside the window's save (the writer's end begun).  The second is
        # a copy under the pid of a process that has ended.
        with open(temps[0], "rb") as f:
            body = f.read()
        with open(temps[0], "ab") as f:
            f.write(b',\n{"ph":"X","name":"ProfilerStep#99999","ts":1')
        gone = subprocess.Popen(["true"])
        gone.wait()
        other = os.path.join(folder, ".rank0.step1.trace.json.tmp.%d.0" % gone.pid)
        with open(other, "wb") as f:
            f.write(body.replace(b'"pid": %d' % pid, b'"pid": %d' % gone.pid, 1)
                    + b'\n  ],\n  "traceprof": {"version": "0.')
        # A pid alive again, in a process started after the file's last
        # write (pid reuse): gone.  A pid alive in a process started before
        # it (this test's own): alive, left alone.
        sleeper = subprocess.Popen(["sleep", "60"])
        reused = os.path.join(folder, ".rank0.step1.trace.json.tmp.%d.0" % sleeper.pid)
        with open(reused, "wb") as f:
            f.write(body.replace(b'"pid": %d' % pid, b'"pid": %d' % sleeper.pid, 1))
        os.utime(reused, (time.time() - 10, time.time() - 10))
        alive = os.path.join(folder, ".rank0.step1.trace.json.tmp.%d.0" % os.getpid())
        with open(alive, "wb") as f:
            f.write(body.replace(b'"pid": %d' % pid, b'"pid": %d' % os.getpid(), 1))
        # A pid gone, but the file's lock held (its writer lives in another
        # pid namespace, as the library's sink holds it): left alone.
        gone2 = subprocess.Popen(["true"])
        gone2.wait()
        locked = os.path.join(folder, ".rank0.step1.trace.json.tmp.%d.0" % gone2.pid)
        with open(locked, "wb") as f:
            f.write(body.replace(b'"pid": %d' % pid, b'"pid": %d' % gone2.pid, 1))
        holder = open(locked, "rb")
        fcntl.flock(holder, fcntl.LOCK_SH)
    # The next run: 20 steps, a window of steps 1-2, a normal end.  A file
    # whose header the library does not read is named only once 2 s old
    # (collector/cut.c: another host's live file is that fresh).
    if compress != "none":
        time.sleep(2.5)
    # (20 steps of 10 ms: the flush thread, which alone scans the folder,
    # opens the window's file long before the exit.)
    r = subprocess.run([prog, "exit", "20", str(EVENTS)], env=env(folder, compress, "wait=1,active=2,repeat=1"),
                       capture_output=True, timeout=120)
    out, err = r.stdout.decode(), r.stderr.decode()
    check(r.returncode == 0, "%s: the next run exits 0 (%s)" % (compress, err[-300:]))
    check(out.count("ended") == 20, "%s: the next run's output is its own (%r)" % (compress, out[-200:]))
    mine = [f for f in rel.trace_files(folder) if ".step2." in os.path.basename(f)]
    check(len(mine) == 1, "%s: the next run saved its own window (%s)" % (compress, rel.trace_files(folder)))
    if compress != "none":
        check(rel.temp_files(folder) == temps, "%s: the cut file with no whole frame is left for recover (%s)"
              % (compress, rel.temp_files(folder)))
        check("traceprof recover" in err and os.path.basename(temps[0]) in err,
              "%s: one line names it and the command: %r" % (compress, err[-400:]))
        continue
    sleeper.kill()
    sleeper.wait()
    holder.close()
    check(rel.temp_files(folder) == sorted([alive, locked]),
          "%s: only the live writers' temporary files are left (%s)" % (compress, rel.temp_files(folder)))
    check(err.count("finished") == 3 and "cut window of a process that died (pid %d)" % pid in err
          and "(pid %d)" % sleeper.pid in err,
          "%s: one line each says it was finished: %r" % (compress, err[-800:]))
    cut = [f for f in rel.trace_files(folder) if f not in mine]
    check(len(cut) == 3, "%s: three cut traces (%s)" % (compress, cut))
    if len(cut) != 3:
        continue
    # Which one takes the name and which ".1", ".2" is the folder's order.
    ts = [rel.load_trace(f) for f in cut]
    k = [i for i, x in enumerate(ts) if "pid %d)" % pid in x["traceprof"]["cut"]["reason"]][0]
    t = ts[k]
    names = sorted(os.path.basename(f) for f in cut)
    check(names[:2] == [names[2].replace(".json", ".1.json"), names[2].replace(".json", ".2.json")],
          "%s: the others take free names (%s)" % (compress, names))
    for t2 in ts[:k] + ts[k + 1:]:
        check(t2["traceprof"]["events_written"] == len(t2["traceEvents"]) - 2 == len(t["traceEvents"]) - 2
              and not tracecheck.check_trace(t2),
              "%s: the copies keep the same events (%d; the killed one, its cut line left out, %d)"
              % (compress, len(t2["traceEvents"]), len(t["traceEvents"])))
    got = rel.check_cut_steps(check, compress, t, ended, death, EVENTS, pid)
    evs = t["traceEvents"]
    check(99999 not in got and names[2] == "rank0.step%d.trace.json" % max(got or [0]),
          "%s: named after the last step it holds (%s)" % (compress, names))
    check(t["traceprof"].get("events_written") == len(evs) - 2,
          "%s: the footer counts the events kept (%s of %d)" % (compress, t["traceprof"].get("events_written"), len(evs) - 2))
    s = subprocess.run([tp, "summary", cut[k]], capture_output=True, timeout=120)
    check(s.returncode == 0 and b"work" in s.stdout and b"a cut window" in s.stderr,
          "%s: summary reads it and says it is cut (%s)" % (compress, s.stderr[-200:]))
check.done()
PY
