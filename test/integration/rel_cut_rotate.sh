# Rotation counts a cut window like any other (issue 44): a process with
# TRACEPROF_NUM_TRACES_TO_KEEP=2 and windows of 100 steps (10 ms each) dies
# by abort() in the middle of its 5th window.  Its own rotation had kept 2 whole windows; finishing the
# cut one (traceprof recover, or traceprof run --keep 2 by itself) deletes
# the older of them, as the process would have at that window's save: the
# newest whole window and the cut one remain.  A file of another process
# (another pid in its header) in the same folder stays.
. "$TP_TOP/test/lib/common.sh"
prog="$BUILD/test/prog_die"
[ -x "$prog" ] || die "$prog not built"
"$PYTHON" - "$prog" <<'PY'
import os, re, signal, subprocess, sys
sys.path.insert(0, os.path.join(os.environ["TP_TOP"], "test", "lib"))
import rel

prog = sys.argv[1]
tp = os.path.join(os.environ["BUILD"], "traceprof")
fails = []
def check(cond, msg):
    print(("ok   " if cond else "FAIL ") + msg, flush=True)
    if not cond:
        fails.append(msg)

SCHED = "wait=0,active=100"
# rel_cut_rotate_pftrace.sh: the same with .pftrace windows (without the
# earlier run's planted window: its pid is rewritten in the JSON's text).
FORMAT = os.environ.get("TP_CUT_FORMAT", "json")
EXT = ".pftrace" if FORMAT == "perfetto" else ".json"
PLANT = FORMAT != "perfetto"
for how in ("LD_PRELOAD", "traceprof run"):
    folder = os.path.abspath("tr_" + how.split()[-1])
    e = {k: v for k, v in os.environ.items() if not k.startswith("TRACEPROF_")}
    e.pop("LD_PRELOAD", None)
    e["TRACEPROF_FORMAT"] = FORMAT
    cmd = [prog, "abort", "450", "5"]
    if how == "LD_PRELOAD":
        e.update({"LD_PRELOAD": os.environ["TP_PRELOAD"], "TRACEPROF_FOLDER": folder,
                  "TRACEPROF_SCHEDULE": SCHED, "TRACEPROF_NUM_TRACES_TO_KEEP": "2"})
    else:
        cmd = [tp, "run", "--folder", folder, "--schedule", SCHED, "--keep", "2", "--"] + cmd
        # Another process's window in the folder, from an earlier run.
        os.makedirs(folder)
    if how != "LD_PRELOAD" and PLANT:
        src = rel.trace_files(os.path.abspath("tr_LD_PRELOAD"))
        text = open([f for f in src if "step399." in f][0]).read()
        text = text.replace('"pid": ', '"pid": 1', 1)
        assert '"pid": 1' in text
        open(os.path.join(folder, "rank0.step9.trace.json"), "w").write(text)
    p = subprocess.run(cmd, env=e, capture_output=True, timeout=120)
    err = p.stderr.decode()
    check(p.returncode == -signal.SIGABRT, "%s: exit status (got %d; %s)" % (how, p.returncode, err[-300:]))
    names = sorted(os.path.basename(f) for f in rel.trace_files(folder))
    print("   before recover:" if how == "LD_PRELOAD" else "   after:", names)
    if how == "LD_PRELOAD":
        r = subprocess.run([tp, "recover", folder], capture_output=True, timeout=120)
        err = r.stderr.decode()
        check(r.returncode == 0, "%s: recover exits 0 (%s)" % (how, err[-300:]))
    names = sorted(os.path.basename(f) for f in rel.trace_files(folder))
    cut = [n for n in names if re.match(r"rank0\.step4\d\d\.trace" + re.escape(EXT) + "$", n)]
    want = ["rank0.step399.trace" + EXT] + cut + ([] if how == "LD_PRELOAD" or not PLANT
                                                  else ["rank0.step9.trace.json"])
    check(len(cut) == 1 and names == sorted(want) and not rel.temp_files(folder),
          "%s: the newest whole window and the cut one remain (%s; %s)" % (how, names, err[-500:]))
    check("rotation: deleted" in err and "step299." in err,
          "%s: one line says the older window was deleted (%s)" % (how, err[-400:]))
    if cut:
        check(isinstance(rel.load_trace(os.path.join(folder, cut[0]))["traceprof"].get("cut"), dict),
              "%s: %s is the cut window" % (how, cut[0]))
sys.exit(1 if fails else 0)
PY
