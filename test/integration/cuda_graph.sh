# Stream capture left alone (test/standin/standin_graph.c): ten launches
# captured in global mode, with pauses during which traceprof's flush thread
# runs every 10 ms, then the graph instantiated and launched.
#   - over the test stand-in driver, which counts every call that global
#     capture mode forbids while the capture is open (any call from another
#     thread): none comes from traceprof, the capture ends with a graph, and
#     every return code is the same as without traceprof (before the fix, the
#     flush thread's cuFuncGetName broke the capture: 901);
#   - over the toolkit's stub driver: the same error codes;
#   - the captured launches are recorded as the host calls they are, and the
#     kernel launched after the capture is named.
. "$TP_TOP/test/lib/common.sh"
SI="$BUILD/standin"
[ -x "$SI/standin_graph" ] || die "stand-ins not built ($SI); run make check"
run() {
	local tag=$1 ldp=$2
	set +e
	LD_LIBRARY_PATH="$ldp" "$SI/standin_graph" >"p_$tag.out" 2>"p_$tag.err"
	echo "exit $?" >>"p_$tag.out"
	TRACEPROF_FOLDER="$TP_TMP/t_$tag" TRACEPROF_FLUSH_MS=10 TRACEPROF_CUPTI=off LD_LIBRARY_PATH="$ldp" \
		traced "$SI/standin_graph" >"t_$tag.out" 2>"t_$tag.err"
	echo "exit $?" >>"t_$tag.out"
	set -e
	diff "p_$tag.out" "t_$tag.out" || die "$tag: return codes changed under traceprof"
}
run standin "$SI"
grep -qx 'cuStreamEndCapture=0' p_standin.out && grep -qx 'calls that broke the capture=0 ' t_standin.out ||
	die "stand-in: unexpected output: $(cat t_standin.out)"
STUB="${CUDA_HOME:-/usr/local/cuda}/lib64/stubs/libcuda.so"
if [ -e "$STUB" ]; then
	mkdir drv
	ln -s "$STUB" drv/libcuda.so.1
	run stub "$TP_TMP/drv"
	grep -qx 'cuStreamBeginCapture=34' p_stub.out || die "stub: expected error 34: $(cat p_stub.out)"
fi
"$PYTHON" - "$TP_TMP/t_standin" "$TP_TOP/test/lib" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
from cudacheck import load, api, one, fail
ev = load(sys.argv[1])
one(ev, "cuStreamBeginCapture_v2", result=0)
one(ev, "cuStreamEndCapture", result=0)
one(ev, "cuGraphLaunch", result=0)
n = len(api(ev, "cuLaunchKernel"))
if n != 12:
    fail("%d cuLaunchKernel events, expected 12" % n)
# Demangled where the process has a demangler (libstdc++; the sanitizers'
# runtimes bring one).
last = [e for e in api(ev, "cuLaunchKernel") if e["args"]["grid"] == [3, 1, 1]]
if not last or last[0]["args"].get("kernel") not in ("_Z9saxpy_drvfPf", "saxpy_drv(float, float*)"):
    fail("the launch after the capture is not named: %r" % last)
gpu = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
if gpu:
    fail("GPU work shown without CUPTI: %r" % gpu[:2])
print("capture untouched: no call from traceprof while it was open")
PY
