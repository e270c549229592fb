# The job that dies keeps its trace, GPU side, for kernels launched from a
# runtime traceprof cannot interpose (issue 44 item 5; the runtime inside
# cuBLAS): CUPTI links such a kernel to the runtime call's own record, not
# to our driver call, and traceprof links that record to the call of ours on
# its thread that overlaps it most (collector/gpu_corr.c).  The stand-in
# CUPTI plays that runtime (FAKE_CUPTI_HIDDEN_RUNTIME: prog_gpu_die makes
# each launch inside fake_cupti_runtime_enter/exit), with 3 us launches
# (FAKE_CUDA_LAUNCH_US) so that the overlap outweighs the two clocks' skew.
# While busy loops keep every CPU taken (the flush thread and the program
# preempted at any point):
#  - killed by SIGKILL in the middle of a long window, the cut file (after
#    `traceprof recover`) holds, for each step that ended more than a second
#    before the death, every launch with the one kernel it made (the
#    stand-in starts it 1 us into the launch) and the arrow to it: those
#    kernels are written into the temporary file at a drain, not only at
#    the window's end;
#  - three runs that end normally link each of 3000 launches to its own
#    kernel, each kernel written once, none without its launch.
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
KERNELS = 20
HIDDEN = {"FAKE_CUPTI_HIDDEN_RUNTIME": "1", "FAKE_CUDA_LAUNCH_US": "3"}


def links(label, t, steps=None, spans=None):
    """Checks that each launch (of those steps, or all) has the one kernel
    it made and the arrow to it; returns how many launches were checked."""
    evs = t["traceEvents"]
    launches = [e for e in evs if e.get("ph") == "X" and e.get("name") == "cuLaunchKernel"]
    if steps is not None:
        within = [(spans[s]["ts"], spans[s]["ts"] + spans[s]["dur"]) for s in steps if s in spans]
        short = [(a, sum(1 for l in launches if a <= l["ts"] <= b)) for a, b in within]
        short = [x for x in short if x[1] != KERNELS]
        check(not short, "%s: %d launches in each step (not in %s)" % (label, KERNELS, short[:5]))
        launches = [l for l in launches if any(a <= l["ts"] <= b for a, b in within)]
    kernels = rel.kernels_by_correlation(evs)
    starts = {(f["tid"], f["ts"]) for f in evs if f.get("cat") == "ac2g" and f.get("ph") == "s"}
    bad = []
    for l in launches:
        ks = kernels.get(l["args"].get("correlation"), [])
        # Its own kernel: the only one of its number, started inside it.
        own = (len(ks) == 1 and ks[0]["name"] == "standin_kernel" and
               l["ts"] <= ks[0]["ts"] <= l["ts"] + l["dur"])
        if not own or (l["tid"], l["ts"]) not in starts:
            bad.append((l["ts"], l["args"].get("correlation"), [k["ts"] for k in ks]))
    check(launches and not bad, "%s: each of %d launches has its own kernel and arrow (not %d: %s)"
          % (label, len(launches), len(bad), bad[:4]))
    # A cut file's footer is recover's, without the GPU part.
    gpu = t.get("traceprof", {}).get("gpu")
    check(gpu is None or (gpu.get("cupti") == "active" and not gpu.get("gpu_events_lost")),
          "%s: CUPTI active, no GPU event lost (%s)" % (label, gpu))
    return kernels, launches


# Busy loops on every CPU, for the whole test.
hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range(os.cpu_count() or 2)]
try:
    label = "SIGKILL mid-window"
    folder = "gpu_hidden_kill"
    env = rel.die_env(folder, True, HIDDEN, cupti=cupti)
    p = subprocess.Popen([prog, "loop", "0", str(KERNELS)], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    pid, ended, death = rel.run_die(p, signal.SIGKILL)
    rest, err = p.communicate(timeout=120)
    check(p.returncode == -signal.SIGKILL, "%s: killed (status %d; %s %s)"
          % (label, p.returncode, rest[-200:], err[-300:]))
    r = subprocess.run([tp, "recover", folder], capture_output=True, timeout=120)
    check(r.returncode == 0, "%s: recover exits 0 (%s)" % (label, r.stderr.decode()[-300:]))
    files = rel.trace_files(folder)
    check(len(files) == 1, "%s: one trace file (%s)" % (label, files))
    if files and death is not None:
        t = rel.load_trace(files[0])
        spans = rel.check_cut_steps(check, label, t, ended, death)
        links(label, t, rel.steps_before(ended, death), spans)

    for run in range(3):
        label = "normal window %d" % (run + 1)
        folder = "gpu_hidden_exit%d" % run
        env = rel.die_env(folder, True, HIDDEN, cupti=cupti)
        p = subprocess.run([prog, "exit", "150", str(KERNELS)], env=env, capture_output=True,
                           timeout=120)
        check(p.returncode == 0, "%s: exits 0 (%s)" % (label, p.stderr.decode()[-300:]))
        files = rel.trace_files(folder)
        check(len(files) == 1, "%s: one trace file (%s)" % (label, files))
        if not files:
            continue
        t = rel.load_trace(files[0])
        kernels, launches = links(label, t)
        # Steps 1-150 (step 0 waits).
        check(len(launches) == 150 * KERNELS, "%s: %d launches (%d)" % (label, 150 * KERNELS,
                                                                       len(launches)))
        n = sum(len(v) for v in kernels.values())
        check(n == len(launches) and None not in kernels,
              "%s: one kernel per launch, none without one (%d kernels, %d unlinked)"
              % (label, n, len(kernels.get(None, []))))
finally:
    for h in hogs:
        h.kill()
        h.wait()
check.done()
PY
