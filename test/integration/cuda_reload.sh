# Issue 30, items 5 and 9: a plugin linked with a CUDA runtime is loaded,
# called, dlclosed, and another (or the same) is loaded and called.  Each
# call must reach the runtime loaded now, not addresses kept from the
# unloaded one, and every call must be recorded.  Before the fix the second
# stand-in build, mapped where the first had been, was called at the first
# build's stale addresses (rc=1770356191 count=-1), and with the toolkit's
# real runtime reloaded 6 of 8 calls were recorded (the handle's pointers
# were handed out unwrapped, as if two runtimes were loaded).
# test/scope/reload.c is the program and the plugin.
. "$TP_TOP/test/lib/common.sh"
SC="$BUILD/standin/scope"
[ -x "$SC/reload_app" ] || die "reload programs not built ($SC); run make check"

# The calls recorded: "name result" per line, in order.
recorded() {
	"$PYTHON" - "$TP_TMP/$1" <<'PY'
import glob, json, sys
ev = []
for f in glob.glob(sys.argv[1] + "/*.json"):
    ev += [e for e in json.load(open(f))["traceEvents"]
           if e.get("ph") == "X" and e.get("cat", "").startswith("cuda")]
ev.sort(key=lambda e: e["ts"])
print("\n".join("%s %s" % (e["name"], e["args"].get("result")) for e in ev))
PY
}

# $1: a name; the rest: the plugins, in load order.
run_both() {
	local name=$1
	shift
	"$SC/reload_app" "$@" >"$name.plain" 2>&1 || die "$name: failed without traceprof: $(cat "$name.plain")"
	TRACEPROF_FOLDER="$TP_TMP/$name" TRACEPROF_CUPTI=off traced "$SC/reload_app" "$@" \
		>"$name.traced" 2>"$name.err" || die "$name: failed with traceprof: $(cat "$name.traced" "$name.err")"
	cat "$name.traced"
	# Where the runtime was mapped may differ (traceprof's own mappings).
	diff <(sed 's/; base=.*//' "$name.plain") <(sed 's/; base=.*//' "$name.traced") ||
		die "$name: the program's results changed under traceprof"
}

# 1. Two builds of the stand-in runtime whose functions lie at different
#    offsets (1 and 3 devices), the second mapped where the first was.
run_both standin "$SC/reload_a/libplugin.so" "$SC/reload_b/libplugin.so"
grep -q "load 2: .*base=same" standin.traced ||
	skip "the second runtime was not mapped at the first one's address: $(cat standin.plain)"
grep -q "load 2: plugin rc=0 count=3 .*handle rc=0 count=3" standin.plain || die "baseline: $(cat standin.plain)"
want=$(printf 'cudaGetDeviceCount 0\ncudaRuntimeGetVersion 0\n%.0s' 1 2 3 4)
[ "$(recorded standin)" = "$want" ] || die "stand-in: recorded calls differ: $(recorded standin)"

# 2. The same build loaded twice, then the two builds in the other order.
run_both again "$SC/reload_b/libplugin.so" "$SC/reload_b/libplugin.so" "$SC/reload_a/libplugin.so"
[ "$(recorded again | wc -l)" = 12 ] || die "stand-in twice: $(recorded again | wc -l) of 12 calls recorded"

# 3. The toolkit's real runtime dlclosed and loaded again (its calls fail
#    for want of a driver here, 35, with the real runtime's own code).
if [ -e "$SC/libplugin_real.so" ]; then
	run_both real "$SC/libplugin_real.so" "$SC/libplugin_real.so"
	n=$(recorded real | grep -c "^cuda" || true)
	[ "$n" = 8 ] || die "real runtime reloaded: $n of 8 runtime calls recorded: $(recorded real | tr '\n' ';')"
	[ "$(recorded real | grep -c '^cudaRuntimeGetVersion 0$')" = 4 ] || die "real runtime: $(recorded real | tr '\n' ';')"
else
	echo "no toolkit runtime at $CUDA_HOME/lib64: the real-runtime case is not run"
fi
echo "PASS"
