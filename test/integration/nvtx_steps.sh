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
# The range that made the step starts with it.
ev = d["traceEvents"]
for k in (2, 3):
    step = [e for e in ev if e.get("name") == f"ProfilerStep#{k}"][0]
    # (the step's start is taken just before the range's own start)
    ts = [e for e in ev if e.get("name") == "train_step"
          and step["ts"] <= e["ts"] <= step["ts"] + min(step["dur"], 5000)]
    assert len(ts) == 1, (k, step)
print("ok", sys.argv[1])
PY
done
