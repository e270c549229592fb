# Issue 30, item 6: a CUDA interposer preloaded before traceprof
# (LD_PRELOAD=libshim.so:libtraceprof.so, the shim forwarding with
# dlsym(RTLD_NEXT)) must reach the next definition after it, as without
# traceprof, and the call must be recorded.  Before the fix
# traceprof answered the shim with the shim's own definition: infinite
# recursion, SIGSEGV.  The program is test/scope/reload.c's, its plugin
# linked with the stand-in runtime (1 device; the shim adds 100), which is
# preloaded after the shim so that it is in the global scope the shim's
# RTLD_NEXT searches.
. "$TP_TOP/test/lib/common.sh"
SC="$BUILD/standin/scope"
SHIM="$BUILD/standin/libshim.so"
[ -x "$SC/reload_app" ] && [ -e "$SHIM" ] || die "shim programs not built; run make check"
[ -z "${TP_SANITIZER:-}" ] || skip "the sanitizer's runtime must be first in LD_PRELOAD; this test orders it itself"

RT="$SC/reload_a/libcudart.so.13"
LD_PRELOAD="$SHIM:$RT" "$SC/reload_app" "$SC/reload_a/libplugin.so" >plain 2>&1 || die "failed without traceprof: $(cat plain)"
grep -q "plugin rc=0 count=101 " plain || die "baseline: the shim did not run: $(cat plain)"
# The shim before traceprof, as LD_PRELOAD="$LD_PRELOAD:.../libtraceprof.so"
# makes it.  (traceprof before the shim is not tested here: a plugin whose
# own scope holds the runtime is sent there directly, past the shim; see
# docs/cuda-load-paths.md.)
for order in "$SHIM:$TP_LIB:$RT"; do
	rm -rf "$TP_TMP/t"
	TRACEPROF_FOLDER="$TP_TMP/t" TRACEPROF_CUPTI=off LD_PRELOAD="$order" "$SC/reload_app" "$SC/reload_a/libplugin.so" \
		>traced 2>err || die "LD_PRELOAD=$order: failed with traceprof (rc $?): $(cat traced err)"
	diff <(sed 's/; base=.*//' plain) <(sed 's/; base=.*//' traced) || die "LD_PRELOAD=$order: results changed"
	n=$("$PYTHON" -c '
import glob, json, sys
print(sum(1 for f in glob.glob(sys.argv[1] + "/*.json") for e in json.load(open(f))["traceEvents"]
          if e.get("ph") == "X" and e.get("name") == "cudaGetDeviceCount"))' "$TP_TMP/t")
	[ "$n" -ge 1 ] || die "LD_PRELOAD=$order: cudaGetDeviceCount not recorded"
	echo "LD_PRELOAD=$order: same results, cudaGetDeviceCount recorded $n times"
done
echo "PASS"
