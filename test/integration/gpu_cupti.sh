# The GPU timeline on a real GPU: test/cuda/gpu_steps.cu (copies, kernels on
# two streams, a CUDA graph, a memset, synchronizations, one
# traceprof_step() a step) built by nvcc with the shared and the static
# runtime, run with NVIDIA's driver and CUPTI.  Skips where no GPU answers
# cuInit (the stand-in tests cupti_standin and cuda_nvcc cover our side of the
# path there).  Checks that:
#   - the program's output and exit code do not change;
#   - every kernel, copy and memset the program caused is in the trace, none
#     dropped or lost, with a correlation shared with exactly one host call
#     of the right kind (HTA's pairing), and a flow from that call;
#   - GPU times sit on the host's clock: each GPU event lies inside the
#     ProfilerStep#N of the call that caused it, after that call started;
#     kernels of one stream do not overlap;
#   - under a schedule each file holds exactly its own steps' GPU events.
. "$TP_TOP/test/lib/common.sh"
CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
NVCC="$CUDA_HOME/bin/nvcc"
[ -x "$NVCC" ] || skip "nvcc not found at $NVCC (set CUDA_HOME)"
why=$("$PYTHON" - <<'PY'
import ctypes
try:
    cuda = ctypes.CDLL("libcuda.so.1")
except OSError as e:
    print("no NVIDIA driver (%s)" % e)
    raise SystemExit
r = cuda.cuInit(0)
n = ctypes.c_int(0)
if r != 0:
    print("no GPU: cuInit returned %d" % r)
elif cuda.cuDeviceGetCount(ctypes.byref(n)) != 0 or n.value == 0:
    print("no GPU: no device")
PY
)
[ -z "$why" ] || skip "$why"
[ "${TP_SANITIZER:-}" = "" ] || skip "CUPTI under $TP_SANITIZER is not tested"

"$NVCC" -O2 -I"$TP_TOP" -cudart shared -o steps_shared "$TP_TOP/test/cuda/gpu_steps.cu" \
	-Xlinker -rpath -Xlinker "$CUDA_HOME/lib64" || die "nvcc (shared cudart) failed"
"$NVCC" -O2 -I"$TP_TOP" -o steps_static "$TP_TOP/test/cuda/gpu_steps.cu" || die "nvcc (static cudart) failed"

STEPS=6
for b in shared static; do
	plain=$("./steps_$b" $STEPS) || die "$b: the program failed without traceprof: $plain"
	case "$plain" in nogpu:*) skip "$b: $plain" ;; esac
	out=$(TRACEPROF_FOLDER=all-$b traced "./steps_$b" $STEPS 2>err-all-$b.txt) ||
		die "$b: the program failed under traceprof: $(cat err-all-$b.txt)"
	[ "$out" = "$plain" ] || die "$b: output changed: '$plain' -> '$out'"
	grep -q '^traceprof:' err-all-$b.txt && die "$b: unexpected messages: $(cat err-all-$b.txt)"
	# Steps 2 and 3 record (wait=1, warmup=1, active=2).
	out=$(TRACEPROF_FOLDER=sched-$b TRACEPROF_SCHEDULE=wait=1,warmup=1,active=2,repeat=1 \
		traced "./steps_$b" $STEPS 2>err-sched-$b.txt) ||
		die "$b: scheduled: the program failed: $(cat err-sched-$b.txt)"
	[ "$out" = "$plain" ] || die "$b: scheduled: output changed: '$plain' -> '$out'"
	check_trace all-$b/*.json sched-$b/*.json >/dev/null || die "$b: trace check failed"
done

"$PYTHON" - "$STEPS" "$TP_TOP/test/lib" <<'PY'
import glob, json, sys
sys.path.insert(0, sys.argv[2])
from gpucheck import check_gpu_window

steps = int(sys.argv[1])
for b in ("shared", "static"):
    files = glob.glob("all-%s/*.json" % b)
    assert len(files) == 1, files
    d = json.load(open(files[0]))
    # Everything: 6 kernels, 2 copies, 1 memset a step, plus the first memset;
    # step 6 is the clean-up after the last traceprof_step(), saved at exit.
    got = check_gpu_window(d, b, range(steps + 1), {"kernel": 6 * steps, "gpu_memcpy": 2 * steps,
                                                 "gpu_memset": steps + 1}, shared=b == "shared")
    print("%s: %s" % (b, got))
    files = sorted(glob.glob("sched-%s/*.json" % b))
    assert [f.split("/")[-1] for f in files] == ["rank0.step3.trace.json"], files
    d = json.load(open(files[0]))
    got = check_gpu_window(d, b + " scheduled", range(2, 4),
                           {"kernel": 12, "gpu_memcpy": 4, "gpu_memset": 2}, shared=b == "shared")
    print("%s scheduled: %s" % (b, got))
PY
