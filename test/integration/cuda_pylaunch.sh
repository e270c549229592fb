# Issue 32, item 3: kernel launches that really return, through numba-cuda
# and Triton (the cudalibs venv that `scripts/install-deps --with-optional`
# makes), over the test stand-in driver (build/standin/libcuda.so.1 from
# test/standin/fake_cuda.c and fake_cuda_launch.c, NOT NVIDIA's driver) on a
# machine without a GPU.  test/programs/cuda_pylaunch.py compiles and
# launches one kernel with each:
#   - numba-cuda: NVVM compiles the kernel, cuda.core loads it
#     (cuLibraryLoadData, cuLibraryGetKernel) and launches it with
#     cuLaunchKernelEx on a stream it created;
#   - Triton: gcc builds its utilities and launcher modules (-lcuda: the
#     stand-in, through TRITON_LIBCUDA_PATH), its ptxas compiles the kernel,
#     load_binary loads it (cuModuleLoadData, cuModuleGetFunction), and the
#     launcher calls cuLaunchKernelEx, which it found with dlsym on its own
#     handle of libcuda.so.1, on the default stream.
# Each run's output is the same with and without traceprof, and the launch
# is recorded with the kernel's name (from the stand-in's cuFuncGetName /
# cuKernelGetName), grid, block, shared memory and stream.
. "$TP_TOP/test/lib/common.sh"
[ "${TP_SANITIZER:-}" = "" ] || skip "the Python CUDA libraries under $TP_SANITIZER are not tested"
need_venv cudalibs "import numba.cuda, triton" "numba-cuda or Triton missing"
SI="$BUILD/standin"
[ -e "$SI/libcuda.so.1" ] || die "stand-ins not built ($SI); run make check"
PROBE="$TP_TOP/test/programs/cuda_pylaunch.py"

for lib in numba triton; do
	set +e
	# The traced run first, with an empty Triton cache: it compiles the
	# kernel and builds Triton's modules (gcc, ptxas: children that record
	# nothing).  The run without traceprof then finds them in the cache
	# (half the test's time); numba-cuda compiles in both.
	env TRITON_CACHE_DIR="$TP_TMP/tc_$lib" TRITON_LIBCUDA_PATH="$SI" TRITON_DEFAULT_FP_FUSION=1 \
		LD_LIBRARY_PATH="$SI" TRACEPROF_FOLDER="$TP_TMP/t_$lib" TRACEPROF_CUPTI=off \
		LD_PRELOAD="$TP_PRELOAD" "$py" "$PROBE" $lib >"t_$lib.out" 2>&1
	echo "exit $?" >>"t_$lib.out"
	env TRITON_CACHE_DIR="$TP_TMP/tc_$lib" TRITON_LIBCUDA_PATH="$SI" TRITON_DEFAULT_FP_FUSION=1 \
		LD_LIBRARY_PATH="$SI" "$py" "$PROBE" $lib >"p_$lib.out" 2>&1
	echo "exit $?" >>"p_$lib.out"
	set -e
	grep -qx "$lib launch returned" "p_$lib.out" ||
		die "$lib: the launch over the stand-in failed without traceprof: $(tail -5 "p_$lib.out")"
	diff "p_$lib.out" "t_$lib.out" || die "$lib: the output changed under traceprof"
	echo "$lib: the launch returned, the same output with and without traceprof"
done

"$PYTHON" - "$TP_TMP" "$TP_TOP/test/lib" <<'PY'
import glob, os, sys
sys.path.insert(0, sys.argv[2])
from cudacheck import load, api, one, fail
tmp = sys.argv[1]
for lib in ("numba", "triton"):
    n = len(glob.glob(os.path.join(tmp, "t_" + lib, "*.json")))
    if n != 1:
        fail("%s: %d trace files, expected 1 (the Python process; its children record nothing)" % (lib, n))
# numba-cuda: the kernel's mangled name holds the Python function's name; the
# stream is the one it created and synchronized.
ev = load(os.path.join(tmp, "t_numba"))
one(ev, "cuLibraryLoadData", result=0)
one(ev, "cuLibraryGetKernel", result=0)
sync = api(ev, "cuStreamSynchronize")
if len(sync) != 1:
    fail("numba: %d stream synchronizations recorded" % len(sync))
stream = sync[0]["args"]["stream handle"]
if stream in (None, "0x0"):
    fail("numba: synchronized the default stream: %r" % sync[0]["args"])
launch = one(ev, "cuLaunchKernelEx", result=0, grid=[4, 2, 1], block=[128, 1, 1],
             **{"shared memory": 0, "stream handle": stream})
if len(launch) != 1 or "scale" not in launch[0]["args"].get("kernel", ""):
    fail("numba: launch not named after the kernel: %r" % [e["args"] for e in launch])
# Triton: load_binary's module and function, the launch on the default stream.
ev = load(os.path.join(tmp, "t_triton"))
one(ev, "cuModuleLoadData", result=0)
one(ev, "cuModuleGetFunction", result=0)
one(ev, "cuLaunchKernelEx", result=0, kernel="add_one", grid=[3, 2, 1], block=[128, 1, 1],
    **{"shared memory": 0, "stream handle": "0x0"})
print("numba-cuda and Triton launches recorded with kernel, grid, block and stream")
PY
echo PASS
