# traceprof run's report names every cut window of its job (issue 44), also
# one that a running rank's library finished before the launcher could: a
# job of two ranks under `traceprof run` (a shell starting both), rank 1
# killed by SIGKILL mid-window, rank 0 still running and opening the trace
# folder only after that (its window begins 4 s in), so that its library
# finishes rank 1's temporary file (collector/cut.c) and the launcher finds
# no temporary file left.  The report must still say "rank 1 (pid N):
# window steps a-b cut ...; saved N events in FILE", with the steps and
# events of the finished file, and name who finished it.  Before, the line
# came only from the launcher's own recover, which had nothing left to do.
. "$TP_TOP/test/lib/common.sh"
prog="$BUILD/test/prog_die"
[ -x "$prog" ] || die "$prog not built"
"$PYTHON" - "$prog" <<'PY'
import os, re, signal, subprocess, sys
sys.path.insert(0, os.path.join(os.environ["TP_TOP"], "test", "lib"))
import rel

prog = sys.argv[1]
tp = os.path.join(os.environ["BUILD"], "traceprof")
check = rel.Checks()
folder = "ranks"
job = ('RANK=1 WORLD_SIZE=2 "$0" loop 0 20 & '
       'RANK=0 WORLD_SIZE=2 TRACEPROF_SCHEDULE=wait=400,active=2 "$0" exit 450 20 >/dev/null; wait')
p = subprocess.Popen([tp, "run", "--folder", folder, "--schedule", "wait=1,active=100000", "--",
                      "sh", "-c", job, prog], env=rel.die_env(folder, False),
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
pid, ended, death = rel.run_die(p, signal.SIGKILL, after=2.5)
out, err = p.communicate(timeout=120)
err = err.decode()
check(p.returncode == 0, "the job ends with rank 0's status 0 (%d; %s)" % (p.returncode, err[-300:]))
check("traceprof: finished" in err and "(pid %d)" % pid in err,
      "rank 0's library finished rank 1's cut window: %r" % err[-600:])
check(not rel.temp_files(folder), "no temporary file is left (%s)" % rel.temp_files(folder))
cut = [f for f in rel.trace_files(folder) if os.path.basename(f).startswith("rank1.")]
check(len(cut) == 1, "one cut trace of rank 1 (%s)" % rel.trace_files(folder))
m = re.search(r"traceprof: rank 1 \(pid %d\): window steps (\d+)-(\d+) cut [^;]*; saved (\d+) events in (\S+) "
              % pid, err)
check(m is not None, "the report says rank 1's window was cut: %r" % err[-800:])
if m and len(cut) == 1:
    t = rel.load_trace(cut[0])
    steps = t["traceprof"]["steps"]
    check([int(m.group(1)), int(m.group(2))] == steps and int(m.group(3)) == t["traceprof"]["events_written"]
          and m.group(4) == cut[0], "with the file's steps, events and name (%s; %s %s)"
          % (m.group(0), steps, t["traceprof"]["events_written"]))
    check(len(rel.steps_before(ended, death)) >= 50 and steps[1] >= max(rel.steps_before(ended, death)),
          "the file holds the steps ended a second before the death (%s)" % steps)
    check(err.count("rank 1 (pid %d): window" % pid) == 1, "said once")
check.done()
PY
