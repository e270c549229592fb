# TRACEPROF_SAMPLE_MS: while a program burns CPU, the trace gets the host
# counters "CPU %", "Resident memory (MB)" and "Threads" (pid = process,
# tid 0) with plausible values: CPU % within [0, 100 * CPUs], resident memory
# within what /proc showed for the process while it ran, threads >= 1.  With
# TRACEPROF_SAMPLE_MS=0 there are none.
. "$TP_TOP/test/lib/common.sh"
prog="$BUILD/test/prog_stack_chain"
[ -x "$prog" ] || skip "$prog not built"

"$PYTHON" - "$TP_TMP" "$prog" <<'PY'
import glob, json, os, subprocess, sys, time
tmp, prog = sys.argv[1:3]
preload = os.environ["TP_PRELOAD"]  # test/lib/common.sh
ncpu = os.cpu_count() or 1

def run(folder, sample_ms):
    env = dict(os.environ, LD_PRELOAD=preload, TRACEPROF_FOLDER=os.path.join(tmp, folder),
               TRACEPROF_SAMPLE_MS=str(sample_ms))
    # 12 steps of 50 ms of CPU each; /proc watched meanwhile.
    p = subprocess.Popen([prog, "12", "50"], env=env, stdout=subprocess.PIPE)
    rss = []
    page = os.sysconf("SC_PAGE_SIZE")
    while p.poll() is None:
        try:
            with open("/proc/%d/statm" % p.pid) as f:
                rss.append(int(f.read().split()[1]) * page / 2**20)
        except (OSError, IndexError, ValueError):
            pass
        time.sleep(0.005)
    out = p.stdout.read().decode()
    assert p.returncode == 0 and out.strip() == "done", (p.returncode, out)
    files = glob.glob(os.path.join(tmp, folder, "*.json"))
    assert len(files) == 1, files
    with open(files[0]) as f:
        return json.load(f), p.pid, rss

d, pid, rss = run("on", 20)
names = ("CPU %", "Resident memory (MB)", "Threads")
ctr = {n: [e for e in d["traceEvents"] if e["ph"] == "C" and e["name"] == n] for n in names}
for n in names:
    assert len(ctr[n]) >= 5, (n, len(ctr[n]), "samples; expected about 30")
    for e in ctr[n]:
        assert e["pid"] == pid and e["tid"] == 0, e
        assert list(e["args"]) == ["value"] and isinstance(e["args"]["value"], (int, float)), e
cpu = [e["args"]["value"] for e in ctr["CPU %"]]
assert all(0 <= v <= 100 * ncpu + 25 for v in cpu), (cpu, ncpu)
assert max(cpu) > 5, ("a busy process shows CPU use", cpu)
mem = [e["args"]["value"] for e in ctr["Resident memory (MB)"]]
assert rss, "could not watch /proc"
lo, hi = min(rss), max(rss)
assert all(0.5 * lo - 1 <= v <= 1.5 * hi + 1 for v in mem), (mem, lo, hi)
thr = [e["args"]["value"] for e in ctr["Threads"]]
assert all(1 <= v <= 64 and v == int(v) for v in thr), thr
# Samples lie within the window: between the first and last step events.
steps = [e for e in d["traceEvents"] if e["name"].startswith("ProfilerStep#")]
t0 = min(e["ts"] for e in steps)
t1 = max(e["ts"] + e["dur"] for e in steps)
assert all(t0 - 1000 <= e["ts"] <= t1 + 1000 for n in names for e in ctr[n]), (t0, t1)
assert d["traceprof"]["configuration"]["TRACEPROF_SAMPLE_MS"] == "20"

off, _, _ = run("off", 0)
assert not any(e["ph"] == "C" and e["name"] in names for e in off["traceEvents"])
print("samples: %d; CPU %% %.0f..%.0f; resident %.1f..%.1f MB (/proc %.1f..%.1f); threads %s"
      % (len(cpu), min(cpu), max(cpu), min(mem), max(mem), lo, hi, sorted(set(thr))))
PY
