# The real NVIDIA runtime: test/cuda/saxpy.cu compiled by nvcc with the
# default static cudart and with -cudart shared, run with the toolkit's stub
# driver as libcuda.so.1 (every call fails with 34, CUDA_ERROR_STUB_LIBRARY).
# The trace must show the driver calls the runtime made through dlsym and
# cuGetProcAddress (both builds) and the runtime calls with the kernel's name
# (shared build), with their real return codes, and the program's output and
# exit code must not change.
. "$TP_TOP/test/lib/common.sh"
CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
NVCC="$CUDA_HOME/bin/nvcc"
[ -x "$NVCC" ] || skip "nvcc not found at $NVCC (set CUDA_HOME)"
STUB="$CUDA_HOME/lib64/stubs/libcuda.so"
[ -e "$STUB" ] || skip "no stub driver at $STUB"

mkdir drv
ln -s "$STUB" drv/libcuda.so.1
"$NVCC" -o saxpy_static "$TP_TOP/test/cuda/saxpy.cu" || die "nvcc (static cudart) failed"
"$NVCC" -cudart shared -o saxpy_shared "$TP_TOP/test/cuda/saxpy.cu" \
	-Xlinker -rpath -Xlinker "$CUDA_HOME/lib64" || die "nvcc (shared cudart) failed"

for b in static shared; do
	set +e
	LD_LIBRARY_PATH="$TP_TMP/drv" "./saxpy_$b" >plain_$b.out 2>&1
	rc_plain=$?
	TRACEPROF_FOLDER="$TP_TMP/t_$b" LD_LIBRARY_PATH="$TP_TMP/drv" traced "./saxpy_$b" >traced_$b.out 2>&1
	rc_traced=$?
	set -e
	[ $rc_plain = $rc_traced ] || die "$b: exit code $rc_plain without traceprof, $rc_traced with"
	diff plain_$b.out traced_$b.out || die "$b: output changed under traceprof"
	grep -q 'cudaMalloc: 34' plain_$b.out || die "$b: expected the stub driver's error 34"
done
# Every intercepted call (TRACEPROF_CUDA_CALLS=all): nvcc's launch plumbing
# and the shared runtime's own driver calls too.
TRACEPROF_FOLDER="$TP_TMP/t_all" TRACEPROF_CUDA_CALLS=all LD_LIBRARY_PATH="$TP_TMP/drv" traced ./saxpy_shared \
	>traced_all.out 2>&1 || true
diff plain_shared.out traced_all.out || die "all calls: output changed under traceprof"

"$PYTHON" - "$TP_TMP" "$TP_TOP/test/lib" <<'PY'
import os, sys
sys.path.insert(0, sys.argv[2])
from cudacheck import load, api, one, fail
for b in ("static", "all"):
    ev = load(os.path.join(sys.argv[1], "t_" + b))
    # The runtime's own way to the driver: the static runtime cannot be
    # interposed, so its driver calls are the program's outer calls; the
    # shared runtime's are shown with TRACEPROF_CUDA_CALLS=all.
    one(ev, "cuGetProcAddress_v2", result=34)
    one(ev, "cuDriverGetVersion", result=34)
    one(ev, "cuGetExportTable", result=34)
    for e in api(ev, cat="cuda_driver"):
        if e["args"]["result"] != 34:
            fail("%s: driver call %s returned %r, not 34" % (b, e["name"], e["args"]["result"]))
    if b == "static" and api(ev, cat="cuda_runtime"):
        # A static runtime lives inside the executable: nothing to interpose.
        fail("static build: unexpected runtime events %r" % api(ev, cat="cuda_runtime")[:3])
# By default (TRACEPROF_CUDA_CALLS=outer) the shared build's trace holds what
# the program called: the runtime calls, not the driver calls made inside
# them, and not nvcc's launch plumbing (issue 22).
plumbing = ("__cudaPushCallConfiguration", "__cudaPopCallConfiguration", "__cudaGetKernel")
ev = load(os.path.join(sys.argv[1], "t_shared"))
if api(ev, cat="cuda_driver"):
    fail("shared build: the runtime's own driver calls recorded: %r" % api(ev, cat="cuda_driver")[:3])
if [e for e in api(ev) if e["name"] in plumbing]:
    fail("shared build: nvcc's launch plumbing recorded")
for n in plumbing:
    one(load(os.path.join(sys.argv[1], "t_all")), n)
name = "saxpy(int, float, float const*, float*)"
# Registration is plumbing too: only with TRACEPROF_CUDA_CALLS=all.
if [e for e in api(ev) if e["name"].startswith(("__cudaRegister", "__cudaUnregister"))]:
    fail("shared build: nvcc's registration calls recorded by default")
one(load(os.path.join(sys.argv[1], "t_all")), "__cudaRegisterFunction", kernel=name)
one(ev, "__cudaLaunchKernel", result=34, kernel=name, grid=[4096, 1, 1], block=[256, 1, 1])
one(ev, "cudaMalloc", result=34, bytes=4194304)
one(ev, "cudaMemcpy", result=34, bytes=4194304, kind="HtoD")
one(ev, "cudaDeviceSynchronize", result=34)
one(ev, "cudaFree", result=34)
print("nvcc traces OK")
PY
