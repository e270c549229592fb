# traceprof asks the driver for kernel names itself (cuFuncGetName,
# cuKernelGetName) when a launch names a kernel nobody registered.  With a
# runtime and no driver (the stand-in libcudart.so.13 alone, as a program on
# a machine without libcuda.so.1), those look-ups find nothing; that is
# traceprof's business, not the program's, so the line that says a program's
# call "returns an error without reaching CUDA" must not appear (issue 32:
# 8 such lines in one run).  The program's own launches still are recorded,
# and its output is unchanged.
. "$TP_TOP/test/lib/common.sh"
SI="$BUILD/standin"
[ -e "$SI/libcudart.so.13" ] || die "stand-ins not built ($SI); run make check"
mkdir rt
cp "$SI/libcudart.so.13" rt/
cat >app.c <<'C'
#include <stdio.h>
typedef struct { unsigned x, y, z; } dim3_t;
int cudaLaunchKernel(const void *f, dim3_t g, dim3_t b, void **args, size_t shm, void *stream);
static void k1(void) {}
static void k2(void) {}
static void k3(void) {}
int main(void)
{
	dim3_t g = { 2, 1, 1 }, b = { 32, 1, 1 };
	void (*ks[])(void) = { k1, k2, k3 };
	for (int i = 0; i < 3; i++)
		printf("launch %d: %d\n", i, cudaLaunchKernel((const void *)ks[i], g, b, 0, 0, 0));
	return 0;
}
C
${CC:-cc} -o app app.c -L rt -l:libcudart.so.13 -Wl,-rpath,"$TP_TMP/rt" || die "cannot build the program"
# No libcuda.so.1 anywhere the runtime or traceprof could find one.
if LD_LIBRARY_PATH= "$PYTHON" -c 'import ctypes; ctypes.CDLL("libcuda.so.1")' 2>/dev/null; then
	skip "this machine has a libcuda.so.1 in the default search path"
fi
LD_LIBRARY_PATH= ./app >plain.out 2>plain.err || die "program failed without traceprof"
TRACEPROF_FOLDER="$TP_TMP/t" LD_LIBRARY_PATH= traced ./app >traced.out 2>traced.err ||
	die "program failed with traceprof: $(cat traced.err)"
diff plain.out traced.out || die "output changed under traceprof"
if grep -q 'without reaching CUDA' traced.err; then
	die "traceprof's own kernel-name look-ups printed the program-call message: $(grep -c 'without reaching CUDA' traced.err) lines: $(head -2 traced.err)"
fi
"$PYTHON" - "$TP_TMP/t" "$TP_TOP/test/lib" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
from cudacheck import load, api, fail
ev = load(sys.argv[1])
n = len(api(ev, "cudaLaunchKernel"))
if n != 3:
    fail("%d cudaLaunchKernel events, expected 3" % n)
print("own look-ups quiet; 3 launches recorded")
PY
