# Issue 30, minor: a program linked with -ltraceprof before -lcudart under
# -Wl,--as-needed loses libcudart (traceprof's wrappers satisfy its names at
# link time), so no runtime is loaded and every call fails.  traceprof cannot
# know which runtime the program was built for, so it loads none; it must
# say what happened and how to link, in one `traceprof:` line.  Before the
# fix the only lines were one per function ("no definition in the caller's
# scope ..."), which did not name the link.  A link that keeps libcudart
# as the line advises works and records.
. "$TP_TOP/test/lib/common.sh"
SI="$BUILD/standin"
[ -e "$SI/libcudart.so.13" ] || die "stand-ins not built ($SI); run make check"
[ -z "${TP_SANITIZER:-}" ] || skip "a program linked with the sanitized library needs the sanitizer's runtime first; this test links it itself"
cat >app.c <<'C'
#include <stdio.h>
int cudaGetDeviceCount(int *n);
int cudaDeviceSynchronize(void);
int main(void)
{
	int n = -1;
	int rc = cudaGetDeviceCount(&n);
	int rc2 = cudaDeviceSynchronize();
	printf("rc=%d count=%d rc2=%d\n", rc, n, rc2);
	return 0;
}
C
CCX="${CC:-cc}"
$CCX -o dropped app.c -Wl,--as-needed -L"$BUILD" -ltraceprof -L"$SI" -lcudart -Wl,-rpath,"$BUILD:$SI" ||
	die "cannot link the test program"
if readelf -d dropped | grep -q 'libcudart'; then
	skip "this linker kept libcudart under --as-needed"
fi
rm -rf "$TP_TMP/t"
TRACEPROF_FOLDER="$TP_TMP/t" ./dropped >dropped.out 2>dropped.err || die "the program failed (rc $?): $(cat dropped.err)"
cat dropped.out
n=$(grep -c '^traceprof:' dropped.err || true)
[ "$n" -eq 1 ] || die "expected one traceprof: line, got $n: $(cat dropped.err)"
grep -q -- "--no-as-needed" dropped.err && grep -q "libcudart" dropped.err ||
	die "the line does not say how to link: $(cat dropped.err)"

# What the line advises.
$CCX -o kept app.c -Wl,--as-needed -Wl,--no-as-needed -L"$BUILD" -ltraceprof -L"$SI" -lcudart -Wl,-rpath,"$BUILD:$SI" ||
	die "cannot link the test program"
rm -rf "$TP_TMP/t"
TRACEPROF_FOLDER="$TP_TMP/t" TRACEPROF_CUDA_CALLS=all ./kept >kept.out 2>kept.err || die "the program failed (rc $?): $(cat kept.err)"
grep -qx "rc=0 count=1 rc2=0" kept.out || die "linked with --no-as-needed: wrong results: $(cat kept.out kept.err)"
"$PYTHON" - "$TP_TMP/t" "$TP_TOP/test/lib" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
from cudacheck import load, one
one(load(sys.argv[1]), "cudaGetDeviceCount", result=0)
PY
echo "PASS"
