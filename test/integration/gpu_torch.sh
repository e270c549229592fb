# A PyTorch training loop on a real GPU under `traceprof run`
# (test/programs/torch_train.py: steps from the Python hook, forward and
# backward markers).  Skips where PyTorch or a GPU is missing.  Checks that:
#   - the losses printed do not change under traceprof;
#   - the schedule gives its two files, each with its steps' markers, and
#     every GPU event in them pairs with one host call (test/lib/gpucheck.py:
#     kernels with launches, copies with memcpys, on the host's clock,
#     inside their step); every step launches the same number of kernels;
#   - torch.profiler started inside the traced process still gets its GPU
#     records (the same count as without traceprof), and traceprof says
#     that it yielded CUPTI, keeping the GPU events recorded before.
. "$TP_TOP/test/lib/common.sh"
[ "${TP_SANITIZER:-}" = "" ] || skip "PyTorch under $TP_SANITIZER is not tested"
TORCH_PY=$(python_where "import torch")
TORCH_PY=${TORCH_PY:-$PYTHON}
why=$("$TORCH_PY" -c '
try:
    import torch
except Exception as e:
    print("PyTorch not installed (%s)" % e)
else:
    if not torch.cuda.is_available():
        print("no GPU for PyTorch (torch %s)" % torch.__version__)
' 2>&1)
[ -z "$why" ] || skip "$why"
prog="$TP_TOP/test/programs/torch_train.py"
export PYTHONPATH="$TP_TOP/python${PYTHONPATH:+:$PYTHONPATH}"
STEPS=10

plain=$("$TORCH_PY" "$prog" $STEPS) || die "the program failed without traceprof: $plain"
out=$("$BUILD/traceprof" run --folder "$PWD/tr" --schedule wait=1,warmup=1,active=2,repeat=2 \
	-- "$TORCH_PY" "$prog" $STEPS 2>err.txt) || die "the program failed under traceprof: $(cat err.txt)"
[ "$(echo "$out" | grep '^losses')" = "$plain" ] || die "losses changed: '$plain' -> '$out'"
check_trace tr/*.json >/dev/null || die "trace check failed"

plain=$("$TORCH_PY" "$prog" 6 --profiler "$PWD/torch-plain.json") ||
	die "torch.profiler without traceprof failed: $plain"
out=$("$BUILD/traceprof" run --folder "$PWD/tp" -- "$TORCH_PY" "$prog" 6 --profiler "$PWD/torch-tp.json" \
	2>err-prof.txt) || die "torch.profiler under traceprof failed: $(cat err-prof.txt)"
[ "$(echo "$out" | grep -v '^traceprof')" = "$plain" ] ||
	die "torch.profiler's results changed under traceprof: '$plain' -> '$out'"
grep -q 'another CUPTI client' err-prof.txt || die "no message about torch.profiler: $(cat err-prof.txt)"
check_trace tp/*.json >/dev/null || die "trace check failed (profiler run)"

"$PYTHON" - "$TP_TOP/test/lib" <<'PY'
import glob, json, sys
sys.path.insert(0, sys.argv[1])
from gpucheck import check_gpu_window, fail

files = sorted(glob.glob("tr/*.json"))
names = [f.split("/")[-1] for f in files]
if names != ["rank0.step3.trace.json", "rank0.step7.trace.json"]:
    fail("files %r" % names)
per_step = set()
for f, steps in zip(files, (range(2, 4), range(6, 8))):
    d = json.load(open(f))
    print("%s: %s" % (f, check_gpu_window(d, f, steps, {})))
    ev = d["traceEvents"]
    for m in ("forward", "backward"):
        n = sum(1 for e in ev if e.get("ph") == "X" and e.get("name") == m)
        if n != 2:
            fail("%s: %d %s markers, want 2" % (f, n, m))
    for s in steps:
        st = [e for e in ev if e.get("name") == "ProfilerStep#%d" % s][0]
        k = [e for e in ev if e.get("cat") == "kernel" and e["args"].get("correlation") and
             st["ts"] <= min(h["ts"] for h in ev if h.get("cat") in ("cuda_runtime", "cuda_driver")
                             and h.get("args", {}).get("correlation") == e["args"]["correlation"])
             <= st["ts"] + st["dur"]]
        per_step.add(len(k))
if len(per_step) != 1 or 0 in per_step:
    fail("kernels per step: %r" % sorted(per_step))
print("kernels per step: %d" % per_step.pop())

# torch.profiler inside the traced process: traceprof yields at its start.
d = json.load(open(glob.glob("tp/*.json")[0]))
gpu = d["traceprof"]["gpu"]
if not gpu["cupti"].startswith("yielded at step"):
    fail("profiler run: cupti %r" % gpu["cupti"])
kernels = [e for e in d["traceEvents"] if e.get("cat") == "kernel"]
if not kernels:
    fail("profiler run: no GPU events before the yield")
print("profiler run: %s; %d kernels before it" % (gpu["cupti"], len(kernels)))
PY
