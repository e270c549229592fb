# TRACEPROF_STEP=nvtx:NAME drives the schedule of a program that never calls
# traceprof_step(): each start of a range named train_step (or matching the
# prefix train*) is a new step, and the range falls in the new step.
. "$TP_TOP/test/lib/common.sh"
prog="$BUILD/test/prog_nvtx_ranges"
[ -x "$prog" ] || skip "prog_nvtx_ranges not built (no CUDA toolkit headers?)"
for src in "nvtx:train_step" "nvtx:train*"; do
	rm -rf out
	out=$(TRACEPROF_STEP="$src" TRACEPROF_SCHEDULE="wait=1,warmup=1,active=2,repeat=1" \
		TRACEPROF_FOLDER=out traced "$prog" 6) || die "$src: run failed"
	[ "$out" = "done" ] || die "$src: output changed: $out"
	"$PYTHON" - "$src" <<'PY'
import glob, json, os, sys
files = sorted(glob.glob("out/*.json"))
# Step 0 is before the first train_step; iteration k starts step k+1:
# wait (step 0), warmup (1), record 2-3 = iterations 1 and 2.
assert [os.path.basename(f) for f in files] == ["rank0.step3.trace.json"], (sys.argv[1], files)
d = json.load(open(files[0]))
assert d["traceprof"]["steps"] == [2, 3], d["traceprof"]["steps"]
names = [e["name"] for e in d["traceEvents"] if e.get("ph") == "X"]
iters = sorted(n for n in names if n.startswith("iter_"))
assert iters == ["iter_1", "iter_2"], (sys.argv[1], iters)
ps = sorted(n for n in names if n.startswith("ProfilerStep#"))
assert ps == ["ProfilerStep#2", "ProfilerStep#3"], ps
assert names.count("train_step") == 2, names
# The range that made the step is the step's first event on its thread and
# lies inside the step, and each iteration's ranges lie inside its range:
# order and containment only, no wall-clock slack (a loaded machine may
# delay any call by any time).  Times in integer ns; the end of a range is
# ts + dur, each printed rounded to the ns, so ends may differ by 1 ns.
ev = d["traceEvents"]
def ns(x):
    return round(float(x) * 1000)
def span(e):
    return ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])
def inside(inner, outer):
    return outer[0] <= inner[0] and inner[1] <= outer[1] + 1
prev_end = None
for k in (2, 3):
    step = [e for e in ev if e.get("name") == f"ProfilerStep#{k}"]
    assert len(step) == 1, (k, step)
    step = step[0]
    s = span(step)
    ranges = [e for e in ev if e.get("name") == "train_step" and inside(span(e), s)]
    assert len(ranges) == 1, (sys.argv[1], k, step, ranges)
    r = ranges[0]
    assert r["tid"] == step["tid"], (k, r, step)
    # Nothing on the step's thread starts inside the step before the range.
    before = [e for e in ev if e.get("tid") == step["tid"] and e is not step and e is not r
              and "ts" in e and e.get("ph") in ("X", "i")
              and s[0] <= ns(e["ts"]) < ns(r["ts"])]
    assert not before, (k, r, before)
    # The iteration the range wraps (iteration k-1) is inside it.
    it = [e for e in ev if e.get("name") == f"iter_{k - 1}"]
    assert len(it) == 1 and inside(span(it[0]), span(r)), (k, it, r)
    # Steps and their ranges come in order.
    if prev_end is not None:
        assert prev_end <= ns(r["ts"]), (k, prev_end, r)
    prev_end = span(r)[1]
print("ok", sys.argv[1])
PY
done
