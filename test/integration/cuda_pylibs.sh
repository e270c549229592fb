# The Python CUDA libraries from PyPI, in the cudalibs venv that
# `scripts/install-deps --with-optional` makes: CuPy (cudart_static inside),
# cuda-python (every driver function through cuGetProcAddress_v2), numba-cuda,
# JAX with its CUDA 13 plugin (XLA dlopens everything RTLD_LOCAL) and Triton
# (ldconfig -p, then gcc ... -lcuda for its launcher module, loaded locally).
# Each one's availability probe (test/programs/cuda_pylibs.py) runs with the
# toolkit's stub driver as libcuda.so.1 and with no driver at all:
#   - the same answers, exceptions, warnings and exit code as without traceprof;
#   - the CUDA calls each made through its own load path are recorded;
#   - the children (ldconfig, gcc and its cc1/as/ld) run as without traceprof
#     (Triton's module still builds and loads) and, recording nothing, leave
#     no file: one trace file per run that recorded a call, none otherwise.
. "$TP_TOP/test/lib/common.sh"
[ "${TP_SANITIZER:-}" = "" ] || skip "the Python CUDA libraries under $TP_SANITIZER are not tested"
VPY="$(tp_venv_python cudalibs)" ||
	skip "no cudalibs venv (run scripts/install-deps --with-optional)"
CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
STUB="$CUDA_HOME/lib64/stubs/libcuda.so"
[ -e "$STUB" ] || skip "no stub driver at $STUB"
if env -u LD_LIBRARY_PATH "$PYTHON" -c 'import ctypes; ctypes.CDLL("libcuda.so.1")' 2>/dev/null; then
	skip "this machine has a real libcuda.so.1: the no-driver runs cannot be made"
fi
mkdir drv
ln -s "$STUB" drv/libcuda.so.1
PROBE="$TP_TOP/test/programs/cuda_pylibs.py"

for lib in cupy cuda-python numba jax triton; do
	for d in stub none; do
		ldp=""
		[ $d = none ] || ldp="$TP_TMP/drv"
		r="${lib}_$d"
		# JAX's plugin runtime shows itself by registering its kernels:
		# nvcc's plumbing, recorded only with TRACEPROF_CUDA_CALLS=all.
		calls=outer
		[ $lib != jax ] || calls=all
		set +e
		# A fresh Triton cache each time: both runs build the launcher.
		TRITON_CACHE_DIR="$TP_TMP/tc_p_$r" LD_LIBRARY_PATH="$ldp" "$VPY" "$PROBE" $lib >"p_$r.out" 2>&1
		echo "exit $?" >>"p_$r.out"
		TRITON_CACHE_DIR="$TP_TMP/tc_t_$r" LD_LIBRARY_PATH="$ldp" TRACEPROF_FOLDER="$TP_TMP/t_$r" \
			TRACEPROF_CUDA_CALLS=$calls traced "$VPY" "$PROBE" $lib >"t_$r.out" 2>&1
		echo "exit $?" >>"t_$r.out"
		set -e
		diff "p_$r.out" "t_$r.out" || die "$r: the probe's output changed under traceprof"
	done
done

# A kernel launch through cuda.bindings that returns: over the test stand-in
# driver (build/standin/libcuda.so.1, not NVIDIA's), with the default flags and
# with CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM=1 (cuGetProcAddress_v2 asked
# for the per-thread variants: cuLaunchKernel_ptsz).
SI="$BUILD/standin"
[ -e "$SI/libcuda.so.1" ] || die "stand-ins not built ($SI); run make check"
for v in default ptds; do
	pt=CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM=0
	[ $v = default ] || pt=CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM=1
	set +e
	env $pt LD_LIBRARY_PATH="$SI" "$VPY" "$PROBE" cuda-python-launch >"p_launch_$v.out" 2>&1
	echo "exit $?" >>"p_launch_$v.out"
	env $pt LD_LIBRARY_PATH="$SI" TRACEPROF_FOLDER="$TP_TMP/t_launch_$v" TRACEPROF_CUPTI=off \
		LD_PRELOAD="$TP_PRELOAD" "$VPY" "$PROBE" cuda-python-launch >"t_launch_$v.out" 2>&1
	echo "exit $?" >>"t_launch_$v.out"
	set -e
	diff "p_launch_$v.out" "t_launch_$v.out" || die "launch ($v): the output changed under traceprof"
	grep -qx "cuLaunchKernel <CUresult.CUDA_SUCCESS: 0>" "p_launch_$v.out" ||
		die "launch ($v): the stand-in launch failed: $(cat "p_launch_$v.out")"
done

# The answers themselves (so that a probe that stopped probing fails).
expect() { grep -qF -- "$2" "p_$1.out" || die "$1: expected '$2' without traceprof; got: $(cat "p_$1.out")"; }
expect cupy_stub "cupy.cuda.is_available() -> False"
expect cupy_stub "cudaErrorStubLibrary"
expect cupy_none "cudaErrorInsufficientDriver"
expect cuda-python_stub "cuInit(0) raised"
expect numba_none "numba.cuda.is_available() -> False"
expect jax_stub "jax.devices() -> ['cpu:0']"
expect triton_stub "libcuda_dirs() (runs ldconfig -p) -> 1"
expect triton_stub "CudaUtils() built -> True"
expect triton_none "AssertionError libcuda.so cannot found"

"$PYTHON" - "$TP_TMP" "$TP_TOP/test/lib" <<'PY'
import glob, os, sys
sys.path.insert(0, sys.argv[2])
from cudacheck import load, api, one, fail
tmp = sys.argv[1]
def files(r):
    return sorted(glob.glob(os.path.join(tmp, "t_" + r, "*.json")))
# Stub driver: what each library's own path to the driver made.
# CuPy's static runtime asks the driver for its version first.
one(load(os.path.join(tmp, "t_cupy_stub")), "cuDriverGetVersion", result=34)
# cuda-python and numba-cuda: dlsym(handle, "cuGetProcAddress_v2"), then
# every function through it.
for r in ("cuda-python_stub", "numba_stub"):
    ev = load(os.path.join(tmp, "t_" + r))
    n = len(api(ev, "cuGetProcAddress_v2"))
    if n < 100:
        fail("%s: %d cuGetProcAddress_v2 calls recorded, expected hundreds" % (r, n))
    one(ev, "cuGetProcAddress_v2", result=34, cudaVersion=13000)
# JAX: the plugin's runtime registers its kernels (recorded with
# TRACEPROF_CUDA_CALLS=all), then calls cuInit.
ev = load(os.path.join(tmp, "t_jax_stub"))
one(ev, "__cudaRegisterFunction")
one(ev, "cuInit", result=34)
# Triton: cuInit through ctypes on its own handle of libcuda.so.1.
ev = load(os.path.join(tmp, "t_triton_stub"))
one(ev, "cuInit", result=34)
# The launches, with the kernel's name (from cuFuncGetName), grid, block,
# shared memory and the stream cuda.bindings created.
for v, name in (("default", "cuLaunchKernel"), ("ptds", "cuLaunchKernel_ptsz")):
    ev = load(os.path.join(tmp, "t_launch_" + v))
    sync = api(ev, "cuStreamSynchronize")  # the stand-in has no _ptsz variant of it
    if len(sync) != 1:
        fail("launch (%s): %d stream synchronizations recorded" % (v, len(sync)))
    stream = sync[0]["args"]["stream handle"]
    one(ev, name, result=0, kernel="_Z9saxpy_drvfPf", grid=[4, 2, 1], block=[128, 1, 1],
        **{"shared memory": 256, "stream handle": stream})
# One file per process that recorded a call; none for the children or for
# runs that never reached CUDA.
for r in ("cupy_stub", "cuda-python_stub", "numba_stub", "jax_stub", "triton_stub"):
    if len(files(r)) != 1:
        fail("%s: %d trace files, expected 1 (the Python process): %r" % (r, len(files(r)), files(r)))
for r in ("cupy_none", "cuda-python_none", "triton_none"):
    if files(r):
        fail("%s: a process that recorded nothing wrote %r" % (r, files(r)))
print("Python CUDA libraries: same answers, calls recorded, no stray files")
PY
