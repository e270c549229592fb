# CUPTI with the toolkit's real libcupti and the stub driver (its
# libcuda.so installed as libcuda.so.1): traceprof stays in host-only mode
# with exactly one warning (TRACEPROF_CUPTI=on: one error), none in auto mode
# (cuInit fails, so CUPTI is never loaded) or off, and the program's output
# and exit status never change.  cuInit reaches traceprof through its dlsym
# hook.
. "$TP_TOP/test/lib/common.sh"
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
stub="$CUDA_HOME/lib64/stubs/libcuda.so"
[ -e "$stub" ] || skip "no stub driver at $stub"
[ -e "$CUDA_HOME/lib64/libcupti.so" ] || skip "no libcupti in $CUDA_HOME/lib64"
mkdir -p lib && cp "$stub" lib/libcuda.so.1
export LD_LIBRARY_PATH="$TP_TMP/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
prog="$BUILD/test/prog_cuda_calls"
plain=$("$prog" cuinit); plain_rc=$?
[ "$plain" = "cuInit=34" ] || die "the stub driver's cuInit returned: $plain"
for mode in auto on off; do
	set +e
	out=$(TRACEPROF_CUPTI=$mode TRACEPROF_FOLDER=out-$mode traced "$prog" cuinit 2>err-$mode.txt)
	rc=$?
	set -e
	[ "$out" = "$plain" ] && [ $rc = $plain_rc ] || die "$mode: output/status changed: $out ($rc)"
	n=$(grep -c '^traceprof:' err-$mode.txt || true)
	g=$(grep -c 'GPU timeline' err-$mode.txt || true)
	case $mode in
	on) [ "$n" = 1 ] && [ "$g" = 1 ] || die "on: want one message, got: $(cat err-$mode.txt)" ;;
	*) [ "$n" = 0 ] || die "$mode: unexpected messages: $(cat err-$mode.txt)" ;;
	esac
done
"$PYTHON" - <<'PY'
import glob, json
def gpu(m):
    f = glob.glob(f"out-{m}/*.json")
    assert len(f) == 1, (m, f)
    return json.load(open(f[0]))["traceprof"]["gpu"]["cupti"]
assert gpu("auto").startswith("not loaded"), gpu("auto")
assert gpu("on").startswith("unavailable: "), gpu("on")
assert gpu("off") == "off", gpu("off")
print("ok", gpu("on"))
PY
