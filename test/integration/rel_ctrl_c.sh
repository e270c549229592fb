# Ctrl-C on a Python script that does not catch KeyboardInterrupt (issue 44
# item 3): CPython prints the traceback, finalizes, then sends itself SIGINT
# with the default action restored (kill(getpid(), SIGINT)), so that its exit
# status says so, and exit handlers never run.  The library saves the open
# window whole before that kill (preload/init.c), with no handler of its own:
# the status stays -SIGINT and the trace holds every step the script ended.
# Also: a script that sends itself SIGKILL keeps its window; one that catches
# its KeyboardInterrupt goes on recording (nothing was saved early); and the
# same Ctrl-C under `traceprof run`, to the whole process group as a
# terminal sends it.
. "$TP_TOP/test/lib/common.sh"
cat >script.py <<'PY'
import ctypes, os, signal, sys, time
lib = ctypes.CDLL(None)
step, start, finish = lib.traceprof_step, lib.traceprof_marker_start, lib.traceprof_marker_finish
mode = sys.argv[1]
def one(i):
    start(b"work")
    time.sleep(0.002)
    finish(b"work")
    step()
    print("step", i, flush=True)
i = 0
if mode == "caught":
    for i in range(1, 6):
        one(i)
    try:
        os.kill(os.getpid(), signal.SIGINT)  # Python's own handler: raises here
        time.sleep(5)
    except KeyboardInterrupt:
        print("caught", flush=True)
    for i in range(6, 11):
        one(i)
    sys.exit(0)
while True:
    i += 1
    one(i)
    if mode == "sigkill" and i == 8:
        os.kill(os.getpid(), signal.SIGKILL)
PY
"$PYTHON" - <<'PY'
import os, signal, subprocess, sys, time
sys.path.insert(0, os.path.join(os.environ["TP_TOP"], "test", "lib"))
import rel

fails = []
def check(cond, msg):
    print(("ok   " if cond else "FAIL ") + msg)
    if not cond:
        fails.append(msg)

def env(folder, preload=True):
    e = {k: v for k, v in os.environ.items()
         if not k.startswith("TRACEPROF_") or k == "TRACEPROF_FORMAT"}
    e.pop("LD_PRELOAD", None)
    if preload:
        e["LD_PRELOAD"] = os.environ["TP_PRELOAD"]
    e.update({"TRACEPROF_FOLDER": folder, "TRACEPROF_SCHEDULE": "wait=1,active=100000"})
    return e

def wait_steps(p, n):
    """Reads the script's stdout until it has ended step n; returns the lines."""
    lines = []
    deadline = time.time() + 60
    while time.time() < deadline:
        line = p.stdout.readline().decode()
        if not line:
            break
        lines.append(line)
        if line.startswith("step ") and int(line.split()[1]) >= n:
            break
    return lines

def ended_steps(out):
    return [int(l.split()[1]) for l in out.splitlines() if l.startswith("step ")]

def check_trace(name, folder, steps_ended, first=2):
    tr = rel.load_all(folder)
    check(len(tr) == 1, "%s: one trace file (%s)" % (name, sorted(tr)))
    check(not rel.temp_files(folder), "%s: no temporary file left (%s)" % (name, rel.temp_files(folder)))
    for t in tr.values():
        evs = t["traceEvents"]
        got = sorted(int(e["name"].split("#")[1]) for e in evs
                     if e.get("name", "").startswith("ProfilerStep#"))
        # The window records from step 1 (wait=1); every step the script
        # ended is in it (the last one may have started after the save).
        want = list(range(first, max(steps_ended) + 1))
        check(all(s in got for s in want),
              "%s: the trace has every ended step %s (has %s)" % (name, want[-3:], got[-3:]))
        work = sum(1 for e in evs if e.get("name") == "work")
        check(work >= len(want), "%s: a 'work' marker per step (%d for %d)" % (name, work, len(want)))
        check(t["traceprof"].get("events_dropped", 0) == 0, "%s: nothing dropped" % name)

# ---- Ctrl-C: the process group gets SIGINT, as from a terminal ----------
for name, cmd, preload in (
        ("LD_PRELOAD", [sys.executable, "script.py", "loop"], True),
        ("traceprof run", [os.path.join(os.environ["BUILD"], "traceprof"), "run",
                           "--folder", "run_ctrl_c", "--schedule", "wait=1,active=100000",
                           "--", sys.executable, "script.py", "loop"], False)):
    folder = "ctrl_c" if preload else "run_ctrl_c"
    p = subprocess.Popen(cmd, env=env(folder, preload), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True,
                         preexec_fn=None)
    out = "".join(wait_steps(p, 12))
    os.killpg(p.pid, signal.SIGINT)
    rest, err = p.communicate(timeout=60)
    out += rest.decode()
    err = err.decode()
    # traceprof run ends itself by the child's signal, as a shell reports it.
    check(p.returncode == -signal.SIGINT, "%s: exit status -2 (got %d)" % (name, p.returncode))
    check("KeyboardInterrupt" in err, "%s: the program's own traceback" % name)
    check_trace(name + " Ctrl-C", folder, ended_steps(out))

# ---- SIGKILL sent to itself -------------------------------------------------
p = subprocess.run([sys.executable, "script.py", "sigkill"], env=env("sigkill"),
                   capture_output=True, timeout=60)
check(p.returncode == -signal.SIGKILL, "sigkill: exit status -9 (got %d)" % p.returncode)
check_trace("sigkill", "sigkill", ended_steps(p.stdout.decode()))

# ---- a caught KeyboardInterrupt: the program goes on, so does the window --
p = subprocess.run([sys.executable, "script.py", "caught"], env=env("caught"),
                   capture_output=True, timeout=60)
out = p.stdout.decode()
check(p.returncode == 0 and "caught" in out, "caught: exit 0 after its own handler (%d)" % p.returncode)
check_trace("caught", "caught", ended_steps(out))
sys.exit(1 if fails else 0)
PY
