# Issue 30, item 7: two copies of traceprof in one process (an installed
# library in LD_PRELOAD with one from a build tree, LD_PRELOAD=A:B, or a
# copy the program dlopens).  Exactly one copy records, and says which in
# one `traceprof:` line; the others forward each call to the next real
# definition.  Before the fix both copies recorded: two traces for one
# process (and, earlier, each copy's wrappers called the other's forever).
. "$TP_TOP/test/lib/common.sh"
SI="$BUILD/standin"
[ -x "$SI/standin_app" ] || die "stand-ins not built ($SI); run make check"
[ -z "${TP_SANITIZER:-}" ] || skip "the sanitizer's runtime must be first in LD_PRELOAD; this test orders it itself"
export LD_LIBRARY_PATH="$SI${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p a b
cp "$TP_LIB" a/libtraceprof.so
cp "$TP_LIB" b/libtraceprof.so

"$SI/standin_app" >plain.out 2>plain.err || die "stand-in program failed without traceprof"
rm -rf "$TP_TMP/t"
TRACEPROF_FOLDER="$TP_TMP/t" LD_PRELOAD="$PWD/a/libtraceprof.so:$PWD/b/libtraceprof.so" \
	"$SI/standin_app" >traced.out 2>traced.err || die "failed with two copies (rc $?): $(tail -5 traced.err)"
diff plain.out traced.out || die "the program's output changed with two copies"
n=$(ls "$TP_TMP/t" | grep -c '\.json$' || true)
[ "$n" -eq 1 ] || die "two copies: $n trace files, expected 1: $(ls "$TP_TMP/t")"
grep -c "another copy of traceprof" traced.err | grep -qx 1 || die "no single line about the inert copy: $(cat traced.err)"
grep "another copy of traceprof" traced.err | grep -q "$PWD/a/libtraceprof.so" || die "the line does not name the active copy: $(cat traced.err)"
"$PYTHON" - "$TP_TMP/t" "$TP_TOP/test/lib" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
from cudacheck import load, one
ev = load(sys.argv[1])
one(ev, "cudaLaunchKernel", result=0)
PY
echo "LD_PRELOAD=A:B: one trace, one line"

# A preloaded copy and one the program dlopens (RTLD_LOCAL, as ctypes does)
# and calls through: the dlopened one stays inert.
rm -rf "$TP_TMP/t"
TRACEPROF_FOLDER="$TP_TMP/t" LD_PRELOAD="$PWD/a/libtraceprof.so" "$PYTHON" -c '
import ctypes, sys
ctypes.CDLL("libcudart.so.13", mode=ctypes.RTLD_GLOBAL)
b = ctypes.CDLL(sys.argv[1])
n = ctypes.c_int(-1)
print("rc=%d count=%d" % (b.cudaGetDeviceCount(ctypes.byref(n)), n.value))
' "$PWD/b/libtraceprof.so" >dl.out 2>dl.err || die "dlopened copy: failed (rc $?): $(tail -5 dl.err)"
grep -qx "rc=0 count=1" dl.out || die "dlopened copy: the call did not reach the runtime: $(cat dl.out dl.err)"
n=$(ls "$TP_TMP/t" | grep -c '\.json$' || true)
[ "$n" -eq 1 ] || die "dlopened copy: $n trace files, expected 1: $(ls "$TP_TMP/t")"
grep -c "another copy of traceprof" dl.err | grep -qx 1 || die "dlopened copy: no single line about the inert copy: $(cat dl.err)"
echo "dlopened copy: inert, one trace"

# TRACEPROF_FOLLOW_EXEC=0: children get neither copy, whatever its name.
cp "$TP_LIB" b/libtp-other.so
v=$(TRACEPROF_FOLLOW_EXEC=0 LD_PRELOAD="$TP_LIB:$PWD/b/libtp-other.so" "$PYTHON" -c 'import os; print(os.environ.get("LD_PRELOAD", ""))' 2>/dev/null)
[ -z "$v" ] || die "TRACEPROF_FOLLOW_EXEC=0: children would still preload: $v"

# `traceprof run` with another traceprof in the program's LD_PRELOAD, by a
# file name traceprof uses and by one it does not (found by the marker
# symbol): the command keeps its own library, drops the other, says so in
# one line, and the other never loads.
cp "$TP_LIB" b/libtp-installed.so
for other in "$PWD/a/libtraceprof.so" "$PWD/b/libtp-installed.so"; do
	rm -rf "$TP_TMP/t"
	LD_PRELOAD="$other" "$BUILD/traceprof" run --folder "$TP_TMP/t" -- "$SI/standin_app" >run.out 2>run.err ||
		die "traceprof run with $other preloaded: failed (rc $?): $(tail -5 run.err)"
	diff plain.out run.out || die "traceprof run with $other preloaded: the program's output changed"
	grep -c "another traceprof library ($other); using .*libtraceprof.so in its place" run.err | grep -qx 1 ||
		die "traceprof run with $other preloaded: no single line about it: $(cat run.err)"
	! grep -q "another copy of traceprof" run.err || die "traceprof run with $other preloaded: the other copy was loaded: $(cat run.err)"
	n=$(ls "$TP_TMP/t" | grep -c '\.json$' || true)
	[ "$n" -eq 1 ] || die "traceprof run with $other preloaded: $n trace files, expected 1"
	echo "traceprof run with $other preloaded: its own library only"
done
echo "PASS"
