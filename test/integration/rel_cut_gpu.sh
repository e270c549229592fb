# The job that dies keeps its trace, GPU side (issue 44 item 5): a program on
# the stand-in driver and the stand-in CUPTI (test/standin; one made-up
# kernel per launch, handed over when traceprof asks CUPTI to flush) makes
# 20 launches a step and dies in the middle of a long window, by SIGKILL
# from outside, by abort() or by a NULL dereference.  The cut file (after
# `traceprof recover`, and under `traceprof run`) holds, for every step that
# ended more than a second before the death, each of its launches with a
# correlation number, the kernel of that number, and the ac2g arrow from the
# launch to the kernel: the flush thread writes the GPU records CUPTI has
# handed over into the temporary file at each drain, as it does the host
# events, not only when the window ends (docs/guarantees.md).  Plain JSON,
# and one case of Perfetto's format (.pftrace, read by test/lib/rel.py).
. "$TP_TOP/test/lib/common.sh"
SI="$BUILD/standin"
[ -e "$SI/libcupti.so.13" ] && [ -e "$SI/libcuda.so.1" ] || die "stand-ins not built ($SI); run make check"
prog="$BUILD/test/prog_gpu_die"
[ -x "$prog" ] || die "$prog not built"
export LD_LIBRARY_PATH="$SI${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
"$PYTHON" - "$prog" "$SI/libcupti.so.13" <<'PY'
import os, signal, subprocess, sys
sys.path.insert(0, os.path.join(os.environ["TP_TOP"], "test", "lib"))
import rel

prog, cupti = sys.argv[1], sys.argv[2]
tp = os.path.join(os.environ["BUILD"], "traceprof")
check = rel.Checks()

def env(folder, preload, fmt):
    # The stand-in CUPTI preloaded, so that traceprof finds it loaded, as in
    # a PyTorch process; traceprof run puts its library before it.
    return rel.die_env(folder, preload, {"TRACEPROF_FORMAT": fmt}, cupti=cupti)

KERNELS = 20
# (name, program mode, steps before dying, signal sent from outside or None,
#  expected status, TRACEPROF_FORMAT)
CASES = (("SIGKILL", "loop", 0, signal.SIGKILL, -signal.SIGKILL, "json"),
         ("abort", "abort", 250, None, -signal.SIGABRT, "json"),
         ("NULL dereference", "segv", 250, None, -signal.SIGSEGV, "json"),
         ("SIGKILL perfetto", "loop", 0, signal.SIGKILL, -signal.SIGKILL, "perfetto"))
for how in ("LD_PRELOAD", "traceprof run"):
    for name, mode, steps, sig, status, fmt in CASES:
        if how != "LD_PRELOAD" and name != "SIGKILL":
            continue  # the launcher runs the same recover: one case of it (time)
        label = "%s, %s" % (name, how)
        folder = "gpu_%s_%s_%s" % (mode, fmt, how.split()[-1])
        cmd = [prog, mode, str(steps), str(KERNELS)]
        if how != "LD_PRELOAD":
            cmd = [tp, "run", "--folder", folder, "--schedule", "wait=1,active=100000", "--"] + cmd
        p = subprocess.Popen(cmd, env=env(folder, how == "LD_PRELOAD", fmt), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        pid, ended, death = rel.run_die(p, sig)
        rest, err = p.communicate(timeout=120)
        err = err.decode()
        check(p.returncode == status, "%s: exit status %d (got %d; %s %s)"
              % (label, status, p.returncode, rest[-200:], err[-300:]))
        if how == "LD_PRELOAD":
            r = subprocess.run([tp, "recover", folder], capture_output=True, timeout=120)
            err = r.stderr.decode()
            check(r.returncode == 0, "%s: recover exits 0 (%s)" % (label, err[-300:]))
        check("cut" in err and "saved" in err, "%s: the report says the window was cut: %r" % (label, err[-400:]))
        files = rel.trace_files(folder)
        check(len(files) == 1 and not rel.temp_files(folder),
              "%s: one trace file, no temporary file (%s, %s)" % (label, files, rel.temp_files(folder)))
        if not files or death is None:
            continue
        t = rel.load_trace(files[0])
        spans = rel.check_cut_steps(check, label, t, ended, death, pftrace=fmt == "perfetto")
        evs = t["traceEvents"]
        # Every step that ended more than a second before the death, from
        # the window's first (step 1).
        want = rel.steps_before(ended, death)
        launches = [e for e in evs if e.get("ph") == "X" and e.get("name") == "cuLaunchKernel"]
        if fmt == "perfetto":
            # test/lib/rel.py reads no args or flows from a .pftrace: each
            # step's kernels by time (the stand-in starts one 1 us after its
            # launch begins, inside the step).
            ks = [e["ts"] for e in evs if e.get("ph") == "X" and e.get("cat") == "kernel"]
            short = []
            for s in want:
                if s in spans:
                    a, b = spans[s]["ts"], spans[s]["ts"] + spans[s]["dur"]
                    n = (sum(1 for l in launches if a <= l["ts"] <= b), sum(1 for k in ks if a <= k <= b))
                    if n != (KERNELS, KERNELS):
                        short.append((s, n))
            check(not short, "%s: %d launches and %d kernels in each of those steps (not in %s)"
                  % (label, KERNELS, KERNELS, short[:5]))
            continue
        kernels = rel.kernels_by_correlation(evs)
        flows = {}
        for e in evs:
            if e.get("cat") == "ac2g":
                flows.setdefault(e["id"], {})[e["ph"]] = e
        starts = {(f["s"]["tid"], f["s"]["ts"]) for f in flows.values() if "s" in f and "f" in f}
        counted = paired = arrows = 0
        short = []
        for s in want:
            if s not in spans:
                continue
            a, b = spans[s]["ts"], spans[s]["ts"] + spans[s]["dur"]
            mine = [l for l in launches if a <= l["ts"] <= b]
            if len(mine) != KERNELS:
                short.append((s, len(mine)))
            counted += len(mine)
            for l in mine:
                ks = kernels.get(l["args"].get("correlation"), [])
                paired += len(ks) == 1 and ks[0]["name"] == "standin_kernel"
                arrows += (l["tid"], l["ts"]) in starts
        check(not short, "%s: %d launches in each step (not in %s)" % (label, KERNELS, short[:5]))
        check(counted == KERNELS * len(want) and paired == counted,
              "%s: a kernel for every launch of those steps (%d of %d launches, %d made)"
              % (label, paired, counted, KERNELS * len(want)))
        check(arrows == counted, "%s: an arrow from each of those launches to its kernel (%d of %d)"
              % (label, arrows, counted))
        gpu = t.get("traceprof", {}).get("gpu")
        check(gpu is None or gpu.get("cupti") == "active", "%s: CUPTI was active (%s)" % (label, gpu))
check.done()
PY
