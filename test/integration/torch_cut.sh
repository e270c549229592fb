# The PyTorch training loop that dies keeps its trace (issue 44, "Prove it"):
# an unmodified CPU training loop (test/programs/torch_die.py) under
# --step torch --pytorch ops dies in the middle of a window: SIGKILL and
# SIGTERM from outside (no handler), os.abort(), a NULL read
# (ctypes.string_at(0)), the kernel's OOM killer in a memory cgroup (where
# this machine lets the test make one; SKIP of that case otherwise), and
# Ctrl-C to its process group (no KeyboardInterrupt handler: the window is
# saved whole, not cut, and the status stays -2).  Each with plain
# LD_PRELOAD (+ PYTHONPATH to the pyboot) and `traceprof recover`, and
# under `traceprof run`.  After each: one trace, no temporary file; the
# trace checker and `summary` read it, and Holistic Trace Analysis and
# TensorBoard's profiler plugin (files named *.pt.trace.json for it) read
# each death's (with LD_PRELOAD + recover: under traceprof run the same
# code finishes the file); Perfetto's schema is for .pftrace only;
# its footer says it was cut (Ctrl-C: that it was not); it holds every step
# that ended more than a second before the death, each with as many
# cpu_op events as the same step of a run that ended normally.
. "$TP_TOP/test/lib/common.sh"
[ "${TP_SANITIZER:-}" = "" ] || skip "PyTorch under $TP_SANITIZER is not tested"
[ "$(uname -m)" = x86_64 ] || skip "--pytorch ops' observer is x86-64 only"
need_venv torch 'import torch' "torch does not import"
"$py" - "$py" "$TP_TOP/test/programs/torch_die.py" <<'PY'
import json, os, signal, subprocess, sys, time
sys.path.insert(0, os.path.join(os.environ["TP_TOP"], "test", "lib"))
import rel, tracecheck

py, prog = sys.argv[1], sys.argv[2]
tp = os.path.join(os.environ["BUILD"], "traceprof")
# TensorBoard's plugin reads *.pt.trace.json, its workers and spans from
# WORKER.SPAN (readers_tensorboard.sh).
NAME = "rank{rank}.{step}.pt.trace.json"
SCHED = "wait=1,active=100000"
fails = []
notes = []
def check(cond, msg):
    print(("ok   " if cond else "FAIL ") + msg, flush=True)
    if not cond:
        fails.append(msg)

def env(folder, preload):
    e = {k: v for k, v in os.environ.items() if not k.startswith("TRACEPROF_")}
    e.pop("LD_PRELOAD", None)
    e.pop("PYTHONPATH", None)
    if preload:
        e.update({"LD_PRELOAD": os.environ["TP_PRELOAD"], "TRACEPROF_FOLDER": folder,
                  "PYTHONPATH": os.path.join(os.environ["TP_TOP"], "python", "traceprof", "pyboot"),
                  "TRACEPROF_SCHEDULE": SCHED, "TRACEPROF_STEP": "torch",
                  "TRACEPROF_PYTORCH": "ops", "TRACEPROF_FILENAME": NAME})
    return e

def command(folder, how, mode, steps):
    cmd = [py, prog, mode, str(steps)]
    if how == "traceprof run":
        cmd = [tp, "run", "--folder", folder, "--schedule", SCHED, "--step", "torch",
               "--pytorch", "ops", "--filename", NAME, "--"] + cmd
    return cmd

def step_ops(t):
    """{step: number of cpu_op events inside it} of a trace object."""
    evs = [e for e in t["traceEvents"] if e.get("ph") == "X"]
    steps = [e for e in evs if e.get("name", "").startswith("ProfilerStep#")]
    ops = sorted((e["ts"], e["ts"] + e.get("dur", 0)) for e in evs if e.get("cat") == "cpu_op")
    out = {}
    for s in steps:
        a, b = s["ts"], s["ts"] + s["dur"]
        out[int(s["name"].split("#")[1])] = sum(1 for x, y in ops if a <= x and y <= b)
    return out

# A memory cgroup (v1 or v2) under this process's own, for the OOM kill.
def make_cgroup():
    for line in open("/proc/self/cgroup"):
        hid, ctl, path = line.rstrip("\n").split(":", 2)
        if ctl == "memory":
            base, limit = "/sys/fs/cgroup/memory" + path, "memory.limit_in_bytes"
        elif hid == "0" and ctl == "" and os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
            base, limit = "/sys/fs/cgroup" + path, "memory.max"
        else:
            continue
        d = os.path.join(base, "tp_torch_cut_%d" % os.getpid())
        try:
            os.mkdir(d)
            with open(os.path.join(d, limit), "w") as f:
                f.write(str(256 << 20))
            sw = os.path.join(d, "memory.memsw.limit_in_bytes")
            if os.path.exists(sw):
                with open(sw, "w") as f:
                    f.write(str(256 << 20))
            if os.path.exists(os.path.join(d, "memory.swap.max")):
                with open(os.path.join(d, "memory.swap.max"), "w") as f:
                    f.write("0")
            return d
        except OSError as e:
            notes.append("no memory cgroup at %s (%s)" % (d, e.strerror))
            try:
                os.rmdir(d)
            except OSError:
                pass
    return None

# The reference: a run that ends normally, its ops per step.
ref_folder = os.path.abspath("ref")
r = subprocess.run(command(ref_folder, "LD_PRELOAD", "loop", 12), env=env(ref_folder, True),
                   capture_output=True, timeout=300)
check(r.returncode == 0, "reference run (%s)" % r.stderr[-300:])
ref_files = rel.trace_files(ref_folder)
ref = step_ops(rel.load_trace(ref_files[0])) if len(ref_files) == 1 else {}
per_step = sorted(set(v for k, v in ref.items() if 2 <= k <= 10))
check(len(per_step) == 1 and per_step[0] > 10,
      "the reference's steps 2-10 hold the same number of ops (%s)" % ref)
PER_STEP = per_step[0] if per_step else -1

cgroup = make_cgroup()
# (name, mode, steps before dying, signal from outside, expected status, cut)
CASES = [("SIGKILL", "loop", 10 ** 6, signal.SIGKILL, -signal.SIGKILL, True),
         ("SIGTERM", "loop", 10 ** 6, signal.SIGTERM, -signal.SIGTERM, True),
         ("abort", "abort", 170, None, -signal.SIGABRT, True),
         ("NULL dereference", "segv", 170, None, -signal.SIGSEGV, True),
         ("Ctrl-C", "loop", 10 ** 6, signal.SIGINT, -signal.SIGINT, False),
         ("OOM kill", "oom", 170, None, -signal.SIGKILL, True)]
done = []  # (label, folder) for HTA and TensorBoard
for how in ("LD_PRELOAD", "traceprof run"):
    for name, mode, steps, sig, status, cut in CASES:
        label = "%s, %s" % (name, how)
        if mode == "oom" and not cgroup:
            print("SKIP %s: %s" % (label, "; ".join(notes)))
            continue
        folder = os.path.abspath("%s_%s" % (name.split()[0], how.split()[-1]))
        p = subprocess.Popen(command(folder, how, mode, steps), env=env(folder, how == "LD_PRELOAD"),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             start_new_session=True)
        ended, death, pid = {}, None, None
        t0 = None
        for line in p.stdout:
            w = line.decode().split()
            if w[0] == "pid":
                pid = int(w[1])
                if mode == "oom":
                    procs = os.path.join(cgroup, "cgroup.procs")
                    with open(procs, "w") as f:
                        f.write(str(pid))
            elif w[0] == "ended":
                ended[int(w[1])] = int(w[2])
                t0 = t0 or time.monotonic()
            elif w[0] == "dying":
                death = int(w[1])
            if sig and t0 and time.monotonic() - t0 > 2.5:
                death = time.monotonic_ns()
                if sig == signal.SIGINT:
                    os.killpg(p.pid, sig)  # as a terminal's Ctrl-C
                else:
                    os.kill(pid, sig)
                break
        rest, err = p.communicate(timeout=300)
        err = err.decode()
        if mode == "oom" and p.returncode == 3:
            print("SKIP %s: the memory cgroup did not limit the program (8 GiB allocated)" % label)
            continue
        check(p.returncode == status, "%s: exit status %d (got %d; %s)" % (label, status, p.returncode, err[-300:]))
        if how == "LD_PRELOAD":
            r = subprocess.run([tp, "recover", folder], capture_output=True, timeout=300)
            err = r.stderr.decode()
            check(r.returncode == 0, "%s: recover exits 0 (%s)" % (label, err[-300:]))
        if cut:
            check("cut" in err and "saved" in err, "%s: the report says the window was cut: %r" % (label, err[-400:]))
        else:
            check(" cut by " not in err and " cut when " not in err, "%s: no window was cut: %r" % (label, err[-400:]))
        files = rel.trace_files(folder)
        check(len(files) == 1 and not rel.temp_files(folder),
              "%s: one trace file, no temporary file (%s, %s)" % (label, files, rel.temp_files(folder)))
        if not files:
            continue
        t = rel.load_trace(files[0])
        probs = tracecheck.check_trace(t)
        check(not probs, "%s: the trace checker passes it (%s)" % (label, probs[:3]))
        footer = t.get("traceprof", {})
        check(isinstance(footer.get("cut"), dict) == cut,
              "%s: the footer says %s" % (label, "it was cut" if cut else "it was not cut"))
        got = step_ops(t)
        want = sorted(s for s, at in ended.items() if s >= 1 and at < death - 1000000000)
        check(len(want) >= 50, "%s: the program ran %d steps before the last second" % (label, len(want)))
        missing = [s for s in want if s not in got]
        check(not missing, "%s: every step ended a second before the death is there (missing %s of %d)"
              % (label, missing[:5], len(want)))
        wrong = [(s, got[s]) for s in want if s in got and got[s] != (ref[s] if s <= 10 else PER_STEP)]
        check(not wrong, "%s: each holds the ops the program ran (%d a step; wrong: %s)"
              % (label, PER_STEP, wrong[:5]))
        s = subprocess.run([tp, "summary", files[0]], capture_output=True, timeout=300)
        check(s.returncode == 0 and b"aten::" in s.stdout, "%s: summary reads it (%s)" % (label, s.stderr[-200:]))
        if how == "LD_PRELOAD":
            done.append((label, files[0]))
if cgroup:
    try:
        os.rmdir(cgroup)
    except OSError:
        pass

# The readers, each in one process over the files of every death (those of
# LD_PRELOAD + recover: traceprof run finishes them with the same code; the
# checker and summary read both).
with open("files.json", "w") as f:
    json.dump(done, f)
hta = subprocess.run([py, "-c", """
import json, logging, os, shutil, sys, warnings
warnings.simplefilter("ignore"); logging.disable(logging.WARNING)
try:
    from hta.trace_analysis import TraceAnalysis
except ImportError as e:
    print("SKIP HTA: %s" % e); sys.exit(0)
bad = 0
for i, (label, path) in enumerate(json.load(open("files.json"))):
    d = "hta%d" % i
    os.mkdir(d); shutil.copy(path, d)
    try:
        a = TraceAnalysis(trace_dir=d)
        steps = a.get_profiler_steps()
        df = a.t.get_trace(0)
        ops = int((df["cat"] == a.t.symbol_table.sym_index["cpu_op"]).sum())
        ok = len(steps) >= 50 and ops > 0
        print(("ok   " if ok else "FAIL ") + "%s: HTA reads %d steps, %d cpu_op" % (label, len(steps), ops))
        bad += not ok
    except Exception as e:
        print("FAIL %s: HTA raised %s: %s" % (label, type(e).__name__, str(e)[:300])); bad += 1
sys.exit(1 if bad else 0)
"""], env=dict(os.environ, HTA_DISABLE_NS_ROUNDING="1"), capture_output=True, timeout=600)
print(hta.stdout.decode().rstrip())
check(hta.returncode == 0, "HTA reads every trace (%s)" % hta.stderr[-300:])
tb = subprocess.run([py, "-c", """
import json, os, shutil, sys
try:
    from torch_tb_profiler.io.cache import Cache
    from torch_tb_profiler.profiler.loader import RunLoader
except ImportError as e:
    print("SKIP TensorBoard: %s" % e); sys.exit(0)
if __name__ == "__main__":
    bad = 0
    for i, (label, path) in enumerate(json.load(open("files.json"))):
        d = "tb%d" % i
        os.mkdir(d); shutil.copy(path, d)
        try:
            run = RunLoader("run%d" % i, d, Cache()).load()
            w = sorted(run.workers)
            assert w == ["rank0"], w
            p = run.get_profile(w[0], run.get_spans(w[0])[0])
            rows = {r["name"]: r for r in p.operation_table_by_name["data"]}
            ok = rows.get("aten::addmm", {}).get("calls", 0) > 0
            print(("ok   " if ok else "FAIL ") + "%s: TensorBoard's plugin reads it (views %s)"
                  % (label, [v.name for v in p.views]))
            bad += not ok
        except Exception as e:
            print("FAIL %s: the plugin raised %s: %s" % (label, type(e).__name__, str(e)[:300])); bad += 1
    sys.exit(1 if bad else 0)
"""], capture_output=True, timeout=600)
print(tb.stdout.decode().rstrip())
check(tb.returncode == 0, "TensorBoard's plugin reads every trace (%s)" % tb.stderr[-300:])
sys.exit(1 if fails else 0)
PY
