# Issue 30, minor: records lost because a signal handler recorded while the
# thread it interrupted was recording are not "buffers full".  A 20 us timer's
# handler records markers while the main thread records markers in a loop,
# into a ring far larger than the run: every drop is an interrupted write.
# The footer counts them in events_dropped_interrupted (of events_dropped),
# the library's warning names the cause, and no line tells to raise
# TRACEPROF_BUFFER_EVENTS; `traceprof run`'s summary line says the same.
. "$TP_TOP/test/lib/common.sh"
prog="$BUILD/test/prog_sig_timer"
T="$BUILD/traceprof"
[ -x "$prog" ] || die "$prog not built"
[ -x "$T" ] || die "$T not built"
[ "$TP_EXT" = json ] || skip "reads the JSON footer"
[ "${TP_SANITIZER:-}" != tsan ] || skip "TSan runs a signal handler at the next intercepted call, never inside a write"

for attempt in 1 2 3 4 5; do
	rm -rf tr
	"$T" run --folder "$PWD/tr" --buffer-events 4194304 -- "$prog" 4000 >out.txt 2>err.txt ||
		die "the run failed: $(cat err.txt)"
	counts=$("$PYTHON" - tr <<'PY'
import glob, json, sys
t = json.load(open(glob.glob(sys.argv[1] + "/*.json")[0]))["traceprof"]
print(t["events_dropped"], t.get("events_dropped_interrupted", "absent"))
PY
)
	set -- $counts
	dropped=$1 intr=$2
	[ "$dropped" = 0 ] || break
	echo "attempt $attempt: no write was interrupted"
done
[ "$dropped" != 0 ] || skip "no write interrupted in 5 runs"
echo "events_dropped $dropped, events_dropped_interrupted $intr"
cat err.txt
[ "$intr" = "$dropped" ] || die "footer: $dropped dropped, $intr of them interrupted writes (want all: the ring never filled)"
grep -q "buffers full\|raise TRACEPROF_BUFFER_EVENTS\|raise --buffer-events" err.txt &&
	die "an interrupted write reported as a full buffer"
grep -q "^traceprof: $dropped events were dropped in .*: a signal handler recorded while the thread it interrupted was recording" err.txt ||
	die "no library line naming the cause"
grep -q "^traceprof: $dropped events were dropped because a signal handler recorded" err.txt ||
	die "no summary line of traceprof run naming the cause"
echo ok
