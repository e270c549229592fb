# Issue 30, item 6: a CUDA interposer (test/standin/shim.c: it defines
# cudaGetDeviceCount, forwards with dlsym(RTLD_NEXT), adds 100 to the count
# and prints its number of calls at exit) preloaded before or after
# traceprof: every call must reach what it reaches without traceprof, and be
# recorded.
#
# Shim first (LD_PRELOAD=libshim.so:libtraceprof.so, as
# LD_PRELOAD="$LD_PRELOAD:.../libtraceprof.so" makes it): before the fix
# traceprof answered the shim's forward with the shim's own definition:
# infinite recursion, SIGSEGV.
#
# traceprof first (libtraceprof.so:libshim.so): without traceprof a
# library's relocation searches the global scope (where the preloaded shim
# is) before its own local scope, honouring symbol versions.  Before the fix
# traceprof sent a plugin dlopen'ed RTLD_LOCAL straight to the runtime of its
# own scope, past the shim ("count=1", "shim: 0 calls" where the program
# alone prints "count=101", "shim: 1 calls"), and sent a program linked with
# libcudart.so.13 to a shim versioned libcudart.so.12 (libshim12.so), which
# the program's versioned reference never binds ("count=101" against 1).
#
# The programs: test/scope/reload.c's (a plugin linked with the stand-in
# runtime, loaded RTLD_LOCAL; the runtime preloaded after the shim so that
# the shim's RTLD_NEXT finds it, or only in the plugin's local scope, where
# the shim finds nothing and answers 999), and test/standin/shim_app.c
# (linked with the stand-in runtime).
. "$TP_TOP/test/lib/common.sh"
SC="$BUILD/standin/scope"
SHIM="$BUILD/standin/libshim.so"
SHIM12="$BUILD/standin/libshim12.so"
APP="$BUILD/standin/shim_app"
[ -x "$SC/reload_app" ] && [ -e "$SHIM" ] && [ -e "$SHIM12" ] && [ -x "$APP" ] ||
	die "shim programs not built; run make check"
[ -z "${TP_SANITIZER:-}" ] || skip "the sanitizer's runtime must be first in LD_PRELOAD; this test orders it itself"

RT="$SC/reload_a/libcudart.so.13"
PLUGIN=("$SC/reload_app" "$SC/reload_a/libplugin.so")
fails=0
# case NAME PRELOAD-WITHOUT-TRACEPROF PRELOAD-WITH-TRACEPROF EXPECTED-LINE PROGRAM...
case_() {
	local name=$1 plain_pre=$2 traced_pre=$3 want=$4
	shift 4
	LD_PRELOAD="$plain_pre" "$@" >plain 2>&1 || die "$name: failed without traceprof: $(cat plain)"
	grep -q -- "$want" plain || die "$name: baseline lacks '$want': $(cat plain)"
	rm -rf "$TP_TMP/t"
	TRACEPROF_FOLDER="$TP_TMP/t" TRACEPROF_CUPTI=off LD_PRELOAD="$traced_pre" "$@" >traced 2>err ||
		die "$name: LD_PRELOAD=$traced_pre: failed with traceprof (rc $?): $(cat traced err)"
	if ! diff <(sed 's/; base=.*//' plain) <(sed 's/; base=.*//' traced) >d; then
		echo "$name: LD_PRELOAD=$traced_pre: results differ from LD_PRELOAD=$plain_pre (< without, > with traceprof):"
		cat d
		fails=$((fails + 1))
		return
	fi
	n=$("$PYTHON" -c '
import glob, json, sys
print(sum(1 for f in glob.glob(sys.argv[1] + "/*.json") for e in json.load(open(f))["traceEvents"]
          if e.get("ph") == "X" and e.get("name") == "cudaGetDeviceCount"))' "$TP_TMP/t")
	[ "$n" -ge 1 ] || die "$name: LD_PRELOAD=$traced_pre: cudaGetDeviceCount not recorded"
	echo "$name: same results as without traceprof ($(grep '^shim:' plain)), cudaGetDeviceCount recorded $n times"
}

# A plugin dlopen'ed RTLD_LOCAL that links the runtime.
case_ "plugin, shim first" "$SHIM:$RT" "$SHIM:$TP_LIB:$RT" "plugin rc=0 count=101 " "${PLUGIN[@]}"
case_ "plugin, traceprof first" "$SHIM:$RT" "$TP_LIB:$SHIM:$RT" "plugin rc=0 count=101 " "${PLUGIN[@]}"
case_ "plugin, traceprof first, runtime local only" "$SHIM" "$TP_LIB:$SHIM" "plugin rc=999000 " "${PLUGIN[@]}"
case_ "plugin, traceprof first, shim of another major" "$SHIM12:$RT" "$TP_LIB:$SHIM12:$RT" "plugin rc=0 count=1 " "${PLUGIN[@]}"
# A program linked with the runtime.
case_ "linked, shim first" "$SHIM" "$SHIM:$TP_LIB" "rc=0 count=101" "$APP"
case_ "linked, traceprof first" "$SHIM" "$TP_LIB:$SHIM" "rc=0 count=101" "$APP"
case_ "linked, traceprof first, shim of another major" "$SHIM12" "$TP_LIB:$SHIM12" "rc=0 count=1$" "$APP"
[ "$fails" = 0 ] || die "$fails of 7 cases reach another definition than without traceprof"
echo "PASS"
