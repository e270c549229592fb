# The success paths against the test stand-ins (build/standin: a fake
# libcudart.so.13 and libcuda.so.1): kernel names from __cudaRegisterFunction
# and cuFuncGetName, decoded args, the GPU memory counter, cuGetProcAddress's
# variant handling (per-thread flags, legacy versions, NULL pointers, itself),
# and a program that dlopens the runtime and dlsyms cuda* names.
. "$TP_TOP/test/lib/common.sh"
SI="$BUILD/standin"
[ -x "$SI/standin_app" ] || die "stand-ins not built ($SI); run make check"
export LD_LIBRARY_PATH="$SI${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

"$SI/standin_app" >plain.out 2>plain.err || die "stand-in program failed without traceprof"
# Every call (TRACEPROF_CUDA_CALLS=all): the runtime's own driver calls too.
TRACEPROF_FOLDER="$TP_TMP/t1" TRACEPROF_CUDA_CALLS=all traced "$SI/standin_app" >traced.out 2>traced.err ||
	die "stand-in program failed with traceprof: $(cat traced.err)"
diff plain.out traced.out || die "the program's output changed under traceprof"
grep -qx "errno-after-first-call=4242" traced.out && grep -qx "errno-after-call=77" traced.out || die "errno changed by the wrappers: $(grep errno traced.out)"
grep -q 'variant=cuMemcpyHtoD_v2_ptds' traced.out || die "per-thread variant not kept"
grep -q 'pa(cuCtxSynchronize)=0 null=1' traced.out || die "a NULL pfn was replaced"
grep -q 'pa(cuGetProcAddress)=0 self=1' traced.out || die "cuGetProcAddress did not return itself"
# symbolStatus exactly as the driver fills it; cuGetExportTable untouched.
grep -qx 'pa(cuProfilerStart)=0 status=0' traced.out &&
	grep -qx 'pa(cuProfilerStart, 3000)=500 status=2 null=1' traced.out &&
	grep -qx 'pa(cuBogus) status=1' traced.out || die "symbolStatus not as the driver filled it: $(grep status= traced.out)"
grep -qx 'cuGetExportTable=0 same=1' traced.out && grep -qx 'cuGetExportTable(unknown)=500 null=1' traced.out ||
	die "cuGetExportTable not passed through: $(grep cuGetExportTable traced.out)"
grep -q 'libtraceprof.so' traced.err || die "the driver pointer handed out is not traceprof's wrapper"

"$PYTHON" - "$TP_TMP/t1" "$TP_TOP/test/lib" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
from cudacheck import load, api, one, fail
ev = load(sys.argv[1])
name = "saxpy(int, float, float*, float*)"
# <<<...>>> as nvcc expands it, and a direct cudaLaunchKernel.
one(ev, "__cudaLaunchKernel", result=0, kernel=name, grid=[4, 2, 1], block=[128, 1, 1],
    **{"shared memory": 256, "stream handle": "0x5000"})
one(ev, "cudaLaunchKernel", result=0, kernel=name, grid=[70000, 3, 2], block=[32, 4, 2])
one(ev, "__cudaRegisterFunction", kernel=name)
# The driver path: name from cuFuncGetName, per-thread variant traced as such.
one(ev, "cuLaunchKernel_ptsz", result=0, kernel="saxpy_drv(float, float*)", grid=[8, 1, 1],
    block=[64, 2, 1], **{"shared memory": 512})
for e in api(ev):
    if e["cat"] != ("cuda_driver" if e["name"].startswith("cu") and not e["name"].startswith("cuda")
                    else "cuda_runtime"):
        fail("wrong category: %r" % e)
    if "result" not in e["args"]:
        fail("no result: %r" % e)
    # Holistic Trace Analysis takes any event with an args.stream other
    # than -1 for a GPU event, and pairs CPU and GPU events by
    # args.correlation: host calls carry neither ("stream handle" instead;
    # "correlation" only while CUPTI records).
    for k in ("stream", "correlation"):
        if k in e["args"]:
            fail("host API event with %r: %r" % (k, e))
# Args of copies, sets, allocations.
one(ev, "cudaMalloc", result=0, bytes=1048576, ptr="0x7f0000000000")
one(ev, "cuMemAlloc_v2", result=0, bytes=1048576)  # the runtime's own driver call
one(ev, "cudaMallocAsync", bytes=8192, **{"stream handle": "0x5000"}, pool="default", **{"async": True})
one(ev, "cudaMemcpy", bytes=4096, kind="HtoD", **{"async": False})
one(ev, "cudaMemcpyAsync", bytes=512, kind="DtoH", **{"stream handle": "0x5000"}, **{"async": True})
one(ev, "cudaMemset", bytes=100, value=7)
one(ev, "cudaStreamSynchronize", **{"stream handle": "0x5000"})
one(ev, "cudaFree", ptr="0x7f0000000000")
one(ev, "cudaDeviceSynchronize", result=0)
# cuGetProcAddress: exact variants, legacy ABI, NULL left alone, itself.
one(ev, "cuGetProcAddress_v2", symbol="cuMemcpyHtoD_v2_ptds", flags=2, outcome=1)
one(ev, "cuGetProcAddress_v2", symbol="cuMemcpyHtoD_v2", flags=0, outcome=1)
one(ev, "cuGetProcAddress_v2", symbol="cuMemAlloc", cudaVersion=3000, outcome=1)
one(ev, "cuGetProcAddress_v2", symbol="cuGetProcAddress_v2", outcome=1)
one(ev, "cuGetProcAddress_v2", result=0, outcome=2)  # NULL pfn
one(ev, "cuGetProcAddress_v2", result=500, outcome=0)
one(ev, "cuMemcpyHtoD_v2_ptds", bytes=64, kind="HtoD")
one(ev, "cuMemAlloc", bytes=64, ptr="0x1000")  # legacy variant
# GPU memory: 1 MiB, + 8 KiB async, back down after both frees, + 64 (legacy).
mem = [e["args"]["bytes"] for e in ev if e.get("ph") == "C" and e["name"] == "GPU memory"]
if not mem or max(mem) != 1048576 + 8192 or 0 not in mem or mem[-1] != 64:
    fail("GPU memory counter: %r" % mem)
print("stand-in trace OK: %d CUDA events" % len(api(ev)))
PY

# By default (TRACEPROF_CUDA_CALLS=outer): what the program called.  The
# driver calls the program makes itself stay (cuGetProcAddress, the per-thread
# copy); those the stand-in runtime makes inside cudaMalloc (cuMemAlloc_v2)
# and nvcc's launch plumbing go (issue 22).
TRACEPROF_FOLDER="$TP_TMP/t1o" traced "$SI/standin_app" >traced_o.out 2>traced_o.err ||
	die "stand-in program failed with traceprof (outer calls): $(cat traced_o.err)"
diff plain.out traced_o.out || die "the program's output changed under traceprof (outer calls)"
"$PYTHON" - "$TP_TMP/t1o" "$TP_TOP/test/lib" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
from cudacheck import load, api, one, fail
ev = load(sys.argv[1])
one(ev, "cudaMalloc", result=0, bytes=1048576)
one(ev, "__cudaLaunchKernel", result=0)
one(ev, "cuMemcpyHtoD_v2_ptds", bytes=64, kind="HtoD")
one(ev, "cuGetProcAddress_v2", symbol="cuMemcpyHtoD_v2_ptds", flags=2, outcome=1)
for n in ("cuMemAlloc_v2", "__cudaPushCallConfiguration", "__cudaPopCallConfiguration"):
    if api(ev, n):
        fail("%s recorded by default" % n)
print("outer calls only: %d CUDA events" % len(api(ev)))
PY

# A program that loads the runtime itself and looks functions up by name.
"$SI/standin_dlopen" "$SI/libcudart.so.13" >plain2.out || die "dlopen program failed"
TRACEPROF_FOLDER="$TP_TMP/t2" TRACEPROF_CUDA_CALLS=all traced "$SI/standin_dlopen" "$SI/libcudart.so.13" >traced2.out ||
	die "dlopen program failed with traceprof"
diff plain2.out traced2.out || die "dlopen program's output changed"
"$PYTHON" - "$TP_TMP/t2" "$TP_TOP/test/lib" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
from cudacheck import load, one
ev = load(sys.argv[1])
one(ev, "cudaMalloc", result=0, bytes=4096)
one(ev, "cudaFree", result=0)
one(ev, "cuMemAlloc_v2", result=0, bytes=4096)
print("dlopen'ed runtime traced")
PY

# The dlsym hook keeps the caller: dlsym(RTLD_NEXT) from libl1 must find
# libl2's probe (the object after the caller), not libl1's own (the object
# after traceprof); and dlsym(RTLD_DEFAULT, "cuInit") stays NULL when no
# driver is loaded, even though traceprof exports a cuInit wrapper, as does
# cuptiActivityRegisterCallbacks when no libcupti is loaded.
cat >l1.c <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
int probe(void) { return 1; }
int probe_next(void)
{
	int (*f)(void) = (int (*)(void))dlsym(RTLD_NEXT, "probe");
	return f ? f() : -1;
}
C
echo 'int probe(void) { return 2; }' >l2.c
cat >next.c <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
int probe_next(void);
int main(void)
{
	printf("next=%d cuInit=%s cupti=%s\n", probe_next(), dlsym(RTLD_DEFAULT, "cuInit") ? "found" : "null",
	       dlsym(RTLD_DEFAULT, "cuptiActivityRegisterCallbacks") ? "found" : "null");
	return 0;
}
C
cc -shared -fPIC -o libl1.so l1.c -ldl && cc -shared -fPIC -o libl2.so l2.c &&
	cc -o next next.c -L. -Wl,--no-as-needed -ll1 -ll2 -ldl -Wl,-rpath,"$TP_TMP" || die "cannot build the RTLD_NEXT probe"
LD_LIBRARY_PATH= ./next >next_plain.out
LD_LIBRARY_PATH= TRACEPROF_FOLDER="$TP_TMP/t3" traced ./next >next_traced.out
grep -qx 'next=2 cuInit=null cupti=null' next_plain.out || die "probe baseline: $(cat next_plain.out)"
diff next_plain.out next_traced.out || die "dlsym(RTLD_NEXT/RTLD_DEFAULT) changed under traceprof"
echo "dlsym keeps the caller"

# A program that ends before the flush thread's first pass (1 s here): its
# records are converted when it exits, and the driver stops answering at exit
# (the stand-in, like the CUDA runtime, tears down in an exit handler set
# before traceprof's).  traceprof's own handler, set at the first successful
# cuInit and so run first, has them converted while the driver still names
# the kernels.
out=$(TRACEPROF_FOLDER="$TP_TMP/t4" TRACEPROF_FLUSH_MS=1000 TRACEPROF_CUPTI=off \
	traced "$BUILD/test/prog_cuda_calls" launch 3) || die "short program failed: $out"
[ "$out" = "cuInit=0 get=0 launches=3 failed=0" ] || die "short program: $out"
"$PYTHON" - "$TP_TMP/t4" "$TP_TOP/test/lib" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
from cudacheck import load, api, fail
# Mangled in a C program; demangled where the process has __cxa_demangle
# (a sanitizer runtime brings one).
names = [e["args"].get("kernel") for e in api(load(sys.argv[1]), "cuLaunchKernel")]
if len(names) != 3 or not set(names) <= {"_Z9saxpy_drvfPf", "saxpy_drv(float, float*)"}:
    fail("launches at exit not named: %r" % names)
print("named before the driver's teardown")
PY
