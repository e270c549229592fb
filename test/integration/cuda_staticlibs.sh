# The toolkit's real cuBLAS, cuDNN and NCCL: each links a static CUDA runtime
# that reaches the driver by dlopen("libcuda.so.1"), dlsym on that handle and
# cuGetProcAddress_v2.  test/cuda/static_libs.c calls their entry points with
# the stub driver as libcuda.so.1 and with no driver:
#   - every status, message and the exit code are the same as without traceprof;
#   - with the stub, each library's driver calls are recorded (one
#     cuDriverGetVersion per static runtime, cuGetProcAddress_v2,
#     cuGetExportTable), all with the stub's 34;
#   - with no driver nothing reaches CUDA; NCCL's NVTX range around
#     ncclCommInitAll is recorded all the same;
#   - NCCL's bundled copy of NVTX's payload extension (an older
#     compatibility id than the toolkit's: 0x0103 in NCCL 2.28) reaches
#     traceprof's InitializeInjectionNvtxExtension, which takes its enum
#     registration (the reduction ops).  Without a GPU NCCL registers no
#     schema and pushes ncclCommInitAll without a payload, so no payload
#     field can be asserted here (test/integration/nvtx_payload.sh decodes
#     NCCL-like payloads).
. "$TP_TOP/test/lib/common.sh"
CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
STUB="$CUDA_HOME/lib64/stubs/libcuda.so"
[ -e "$STUB" ] || skip "no stub driver at $STUB"
for h in cublas_v2.h cudnn.h nccl.h; do
	[ -e "$CUDA_HOME/include/$h" ] || skip "no $h in $CUDA_HOME/include"
done
if env -u LD_LIBRARY_PATH "$PYTHON" -c 'import ctypes; ctypes.CDLL("libcuda.so.1")' 2>/dev/null; then
	skip "this machine has a real libcuda.so.1: the stub and no-driver runs cannot be made"
fi
${CC:-cc} -o static_libs "$TP_TOP/test/cuda/static_libs.c" -I"$CUDA_HOME/include" -L"$CUDA_HOME/lib64" \
	-lcublas -lcudnn -lnccl -Wl,-rpath,"$CUDA_HOME/lib64" || die "cannot build test/cuda/static_libs.c"
mkdir drv
ln -s "$STUB" drv/libcuda.so.1
for d in stub none; do
	ldp=""
	[ $d = none ] || ldp="$TP_TMP/drv"
	set +e
	LD_LIBRARY_PATH="$ldp" ./static_libs >"p_$d.out" 2>&1
	echo "exit $?" >>"p_$d.out"
	LD_LIBRARY_PATH="$ldp" TRACEPROF_FOLDER="$TP_TMP/t_$d" traced ./static_libs >"t_$d.out" 2>&1
	echo "exit $?" >>"t_$d.out"
	set -e
	diff "p_$d.out" "t_$d.out" || die "$d: the program's output changed under traceprof"
	grep -q '^cublasCreate: 1 ' "p_$d.out" && grep -q '^cudnnCreate: 1001 ' "p_$d.out" &&
		grep -q '^ncclCommInitAll: 1 ' "p_$d.out" || die "$d: unexpected answers: $(cat "p_$d.out")"
done
"$PYTHON" - "$TP_TMP/t_stub" "$TP_TOP/test/lib" "$TP_TMP/t_none" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
from cudacheck import load, api, one, fail
# No driver: no CUDA call, but NCCL's own NVTX range around ncclCommInitAll
# (NCCL marks it even when it fails before reaching a GPU).
ev = load(sys.argv[3])
if api(ev):
    fail("no driver: CUDA calls recorded: %r" % api(ev)[:3])
if not [e for e in ev if e.get("name") == "ncclCommInitAll" and e.get("args", {}).get("domain") == "NCCL"]:
    fail("no driver: NCCL's ncclCommInitAll range missing")
import glob, json
pl = [json.load(open(f))["traceprof"].get("nvtx_payloads") for f in glob.glob(sys.argv[3] + "/*.json")]
if not pl or not all(p and p["enums"] >= 1 for p in pl):
    fail("no driver: NCCL's payload enum registration not accepted: %r" % pl)
ev = load(sys.argv[1])
n = len(api(ev, "cuDriverGetVersion"))
if n != 3:
    fail("%d cuDriverGetVersion calls, expected 3 (cuBLAS, cuDNN, NCCL)" % n)
one(ev, "cuGetProcAddress_v2", result=34)
one(ev, "cuGetExportTable", result=34)
for e in api(ev):
    if e["cat"] != "cuda_driver" or e["args"]["result"] != 34:
        fail("unexpected call %r" % e)
print("cuBLAS, cuDNN, NCCL: same answers; driver calls of 3 static runtimes recorded")
PY
