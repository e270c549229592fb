# Issue 17 item 7: TRACEPROF_NUM_TRACES_TO_KEEP counts windows, not files:
# with TRACEPROF_MAX_FILE_MB=1 each window is split into parts, and keep 1
# leaves every part of the newest window and none of the older ones.
. "$TP_TOP/test/lib/common.sh"
unset TRACEPROF_LIVE # as by default: the live file is on
prog="$BUILD/test/prog_steps"
[ -x "$prog" ] || skip "$prog not built"
out=$(TRACEPROF_SAMPLE_MS=0 TRACEPROF_BUFFER_EVENTS=1048576 TRACEPROF_MAX_FILE_MB=1 \
	TRACEPROF_SCHEDULE=active=2,repeat=2 TRACEPROF_NUM_TRACES_TO_KEEP=1 TRACEPROF_FOLDER="$TP_TMP/tr" \
	traced "$prog" 6 2 12000)
[ "$out" = done ] || die "program output '$out'"
"$PYTHON" - "$TP_TMP/tr" <<'PY'
import glob, os, sys
sys.path.insert(0, os.path.join(os.environ["TP_TOP"], "test", "lib"))
import rel
files = sorted(glob.glob(sys.argv[1] + "/*"))
assert files, "no trace left"
tps = [rel.load_trace(f)["traceprof"] for f in files]
steps = {tuple(t["steps"]) for t in tps}
assert steps == {(2, 3)}, ("only the newest window stays", steps, files)
n = tps[0]["parts"]
assert n >= 2, ("the window must be split for this test", files)
assert sorted(t["part"] for t in tps) == list(range(1, n + 1)), (
    "every part of the kept window stays", [os.path.basename(f) for f in files])
print("kept window steps 2-3, all", n, "parts")
PY
