# TRACEPROF_WITH_STACK=1 in a program whose 20 us interval timer's handler
# records markers (issue 17, item 14): it used to never finish (each capture
# in the handler outlasted the interval); it must finish, with every tick
# recorded and the captures skipped around the handler counted in the footer
# ("stack_captures_skipped") and the log.
. "$TP_TOP/test/lib/common.sh"
P="$BUILD/test/prog_sig_timer"
for mode in real posix; do
	start=$(date +%s)
	set +e
	out=$(TRACEPROF_WITH_STACK=1 TRACEPROF_SAMPLE_MS=0 TRACEPROF_LOG=info \
		TRACEPROF_FOLDER="$TP_TMP/$mode" timeout 60 env LD_PRELOAD="$TP_PRELOAD" \
		"$P" 2000 "$mode" 2>"$TP_TMP/$mode.err")
	rc=$?
	set -e
	[ $rc = 124 ] && die "$mode timer: did not finish in 60 s with stacks on (livelock)"
	[ $rc = 0 ] || { cat "$TP_TMP/$mode.err"; die "$mode timer: exit $rc"; }
	secs=$(( $(date +%s) - start ))
	echo "$mode timer: $out in ${secs}s"
	case "$out" in "ticks "*) ;; *) die "$mode timer: output '$out'" ;; esac
	grep -q "call stacks were not captured in or around signal handlers" "$TP_TMP/$mode.err" ||
		{ cat "$TP_TMP/$mode.err"; die "$mode timer: the skipped captures are not in the log"; }
	check_trace "$TP_TMP/$mode"/*.json
	"$PYTHON" - "$TP_TMP/$mode" "${out#ticks }" <<'PY'
import glob, json, sys
folder, ticks = sys.argv[1], int(sys.argv[2])
files = glob.glob(folder + "/*.json")
assert len(files) == 1, files
d = json.load(open(files[0]))
foot = d["traceprof"]
skipped = foot.get("stack_captures_skipped")
assert isinstance(skipped, int) and skipped > 0, "stack_captures_skipped: %r" % (skipped,)
n = sum(1 for e in d["traceEvents"] if e.get("name") == "tick")
dropped = foot["events_dropped"]
# Every tick is in the file or counted as dropped (a ring full between two
# flushes, or a handler that interrupted a write).
assert n + dropped >= ticks, "ticks %d, in the file %d, dropped %d" % (ticks, n, dropped)
print("ticks %d, recorded %d, stack captures skipped %d" % (ticks, n, skipped))
PY
done
echo "stack in signal handlers ok"
