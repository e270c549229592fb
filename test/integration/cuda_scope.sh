# Issue 16: a CUDA runtime or driver that lives in a library's local scope
# (dlopen RTLD_LOCAL: how CPython loads every extension module and ctypes
# library) and two runtimes of different majors in one process.  Each call
# must reach the definition its caller would reach without traceprof, return
# the same value, and be recorded with that value.  Before the fix the
# wrappers found no real function (RTLD_NEXT sees the global scope only) and
# returned 999.  Uses the toolkit's real libcudart.so.13 where there is one,
# and the test stand-ins (build/standin: runtimes of majors 12 and 13, the
# driver), all loaded by test/scope/scope_app.c or by Python's ctypes.
. "$TP_TOP/test/lib/common.sh"
SC="$BUILD/standin/scope"
[ -x "$SC/scope_app" ] || die "scope programs not built ($SC); run make check"

# Runs scope_app with the given libraries without and with traceprof; the
# output must be the same.  $1: a name for the run; the rest: libraries.
same_output() {
	local name=$1
	shift
	"$SC/scope_app" "$@" >"$name.plain" 2>"$name.plain.err" || die "$name: failed without traceprof: $(cat "$name.plain.err")"
	TRACEPROF_FOLDER="$TP_TMP/$name" TRACEPROF_CUPTI=off TRACEPROF_LOG=info traced "$SC/scope_app" "$@" \
		>"$name.traced" 2>"$name.traced.err" || die "$name: failed with traceprof: $(cat "$name.traced.err")"
	diff "$name.plain" "$name.traced" || die "$name: the program's results changed under traceprof"
	echo "$name: same results: $(tr '\n' ';' <"$name.plain")"
}

# The calls recorded: "name result" per line, sorted.
recorded() {
	"$PYTHON" - "$TP_TMP/$1" <<'PY'
import glob, json, sys
out = []
for f in glob.glob(sys.argv[1] + "/*.json"):
    for e in json.load(open(f))["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat", "").startswith("cuda"):
            out.append("%s %s" % (e["name"], e["args"].get("result")))
print("\n".join(sorted(out)))
PY
}

# 1. Two stand-in runtimes (majors 12 and 13), each in its own local scope:
# each library's calls reach its own runtime (the version tells which), in
# either load order, from the main thread and a second thread.
same_output two "$SC/libprobe12.so" "$SC/libprobe13.so"
grep -qx "libprobe12.so main rc=0 value=12000" two.traced && grep -qx "libprobe13.so thread rc=0 value=13000" two.traced ||
	die "a library reached the other runtime: $(cat two.traced)"
same_output two_rev "$SC/libprobe13.so" "$SC/libprobe12.so"
want=$(printf 'cudaGetDeviceCount 0\n%.0s' 1 2 3 4; printf 'cudaRuntimeGetVersion 0\n%.0s' 1 2 3 4)
[ "$(recorded two)" = "$want" ] || die "two runtimes: recorded calls differ: $(recorded two)"
grep -q "two CUDA runtime libraries in one process" two.traced.err || die "no note of the second runtime: $(cat two.traced.err)"

# 2. The stand-in driver in a local scope.
same_output drv "$SC/libprobe_drv.so"
[ "$(recorded drv)" = "$(printf 'cuDriverGetVersion 0\ncuDriverGetVersion 0\ncuInit 0\ncuInit 0')" ] ||
	die "driver: recorded calls differ: $(recorded drv)"

# The driver itself opened with ctypes (RTLD_LOCAL) and called through the
# pointers ctypes looks up on its handle, as numba does: the wrappers handed
# out by the dlsym hook are called from libffi, whose scope holds no driver.
cat >drv.py <<'PY'
import ctypes, sys
cuda = ctypes.CDLL(sys.argv[1])
v = ctypes.c_int(0)
print("cuInit=%d" % cuda.cuInit(0))
print("cuDriverGetVersion=%d v=%d" % (cuda.cuDriverGetVersion(ctypes.byref(v)), v.value))
PY
"$PYTHON" drv.py "$BUILD/standin/libcuda.so.1" >drvpy.plain
TRACEPROF_FOLDER="$TP_TMP/drvpy" TRACEPROF_CUPTI=off traced "$PYTHON" drv.py "$BUILD/standin/libcuda.so.1" \
	>drvpy.traced 2>drvpy.err || die "ctypes driver: failed with traceprof: $(cat drvpy.err)"
diff drvpy.plain drvpy.traced || die "ctypes driver: results changed under traceprof"
[ "$(recorded drvpy)" = "$(printf 'cuDriverGetVersion 0\ncuInit 0')" ] ||
	die "ctypes driver: calls not recorded: $(recorded drvpy)"
echo "ctypes driver: same results: $(tr '\n' ';' <drvpy.plain)"

# 3. The toolkit's real runtime in a local scope (its calls fail for want of
#    a driver here, with the real runtime's own code: 35 without a GPU).
if [ -e "$SC/libprobe_real.so" ]; then
	same_output real "$SC/libprobe_real.so"
	rc=$(sed -n 's/^libprobe_real.so main rc=\([0-9]*\).*/\1/p' real.plain)
	[ "$rc" != 999 ] || die "the real runtime itself returned 999"
	[ "$(recorded real | grep -c "^cudaGetDeviceCount $rc$")" = 2 ] ||
		die "real runtime: cudaGetDeviceCount not recorded with $rc: $(recorded real)"

	# The same through Python's ctypes (RTLD_LOCAL, as CPython loads it).
	cat >probe.py <<'PY'
import ctypes, sys, threading
lib = ctypes.CDLL(sys.argv[1])
v = ctypes.c_int(0)
out = ["main rc=%d value=%d" % (lib.tp_probe(ctypes.byref(v)), v.value)]
def run():
    w = ctypes.c_int(0)
    out.append("thread rc=%d value=%d" % (lib.tp_probe(ctypes.byref(w)), w.value))
t = threading.Thread(target=run)
t.start()
t.join()
print("\n".join(out))
PY
	"$PYTHON" probe.py "$SC/libprobe_real.so" >py.plain
	TRACEPROF_FOLDER="$TP_TMP/py" TRACEPROF_CUPTI=off traced "$PYTHON" probe.py "$SC/libprobe_real.so" >py.traced 2>py.err ||
		die "python: failed with traceprof: $(cat py.err)"
	diff py.plain py.traced || die "python ctypes: results changed under traceprof"
	[ "$(recorded py | grep -c "^cudaGetDeviceCount $rc$")" = 2 ] ||
		die "python ctypes: cudaGetDeviceCount not recorded with $rc: $(recorded py)"
	echo "python ctypes: same results: $(tr '\n' ';' <py.plain)"
else
	echo "no toolkit runtime at $CUDA_HOME/lib64: the real-runtime cases are not run"
fi

# 4. Constructors inside a dlopen keep their order: traceprof looks at the
#    objects a nested dlopen (from a constructor) added without running any
#    constructor of its own accord (a crash seen under PyTorch, in libGLX).
"$SC/scope_app" --init "$SC/libinit_top.so" >init.plain
TRACEPROF_FOLDER="$TP_TMP/init" traced "$SC/scope_app" --init "$SC/libinit_top.so" >init.traced 2>init.err ||
	die "init order: failed with traceprof: $(cat init.err)"
grep -qx "init_b saw init_a done: 1" init.plain || die "init order baseline: $(cat init.plain)"
diff init.plain init.traced || die "constructors ran out of order under traceprof"
echo "init order: same"

# 5. Looking up a driver function no library defines: NULL, and dlerror()
#    says what glibc says without traceprof (issue 17, item 13).
"$SC/scope_app" --dlerror cuInit >dl.plain
TRACEPROF_FOLDER="$TP_TMP/dl" traced "$SC/scope_app" --dlerror cuInit >dl.traced 2>dl.err
diff dl.plain dl.traced || die "dlsym/dlerror answers changed under traceprof"
echo "dlerror: same answers: $(tr '\n' ';' <dl.plain)"
echo "PASS"
