# TRACEPROF_STEP=call:FUNCTION:N: every N-th call of an intercepted CUDA
# function is a step, through the stand-in runtime (build/standin).  Needs
# the CUDA module's tp_cuda_api_id() and the tp_steps_on_api() call in every
# generated wrapper; skipped until both are in the build.
. "$TP_TOP/test/lib/common.sh"
SI="$BUILD/standin"
prog="$BUILD/test/prog_cuda_calls"
[ -e "$SI/libcudart.so.13" ] || skip "stand-ins not built ($SI)"
grep -q tp_steps_on_api "$BUILD/gen/cuda_wrappers.c" 2>/dev/null ||
	skip "the generated wrappers do not call tp_steps_on_api() yet"
grep -qs "tp_cuda_find" "$TP_TOP"/preload/steps.c ||
	skip "the CUDA module does not provide tp_cuda_api_id() yet"
export LD_LIBRARY_PATH="$SI${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
plain=$("$prog" count 12)
out=$(TRACEPROF_STEP=call:cudaGetDeviceCount:2 TRACEPROF_SCHEDULE="wait=1,warmup=1,active=2,repeat=1" \
	TRACEPROF_FOLDER=out traced "$prog" count 12) || die "traced run failed"
[ "$out" = "$plain" ] || die "output changed: $out vs $plain"
# An unknown function is one clear error naming the variable; the program runs.
TRACEPROF_STEP=call:cudaNoSuchFunction TRACEPROF_FOLDER=out2 traced "$prog" count 1 \
	>/dev/null 2>err.txt || die "run with an unknown call: function failed"
grep -q "TRACEPROF_STEP: 'call:cudaNoSuchFunction'" err.txt || die "no error: $(cat err.txt)"
"$PYTHON" - <<'PY'
import glob, json, os
files = sorted(glob.glob("out/*.json"))
assert [os.path.basename(f) for f in files] == ["rank0.step3.trace.json"], files
d = json.load(open(files[0]))
assert d["traceprof"]["steps"] == [2, 3], d["traceprof"]["steps"]
ps = sorted(e["name"] for e in d["traceEvents"] if e.get("name", "").startswith("ProfilerStep#"))
assert ps == ["ProfilerStep#2", "ProfilerStep#3"], ps
calls = [e for e in d["traceEvents"] if e.get("name") == "cudaGetDeviceCount"]
assert len(calls) == 4, len(calls)  # two calls per step
print("ok")
PY
