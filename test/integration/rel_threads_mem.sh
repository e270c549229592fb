# Memory per thread (issue 17, item 4): 1,000 short-lived threads, one after
# another, each recording 4 events.  Rings used to be resident whole (4 MiB)
# and kept until the window closed: 4.1 GB.  Now the peak resident memory
# (VmHWM, read by the program at its end) must stay <= 256 MB, and every
# event must be in the trace.
. "$TP_TOP/test/lib/common.sh"
P="$BUILD/test/prog_threads_mem"
limit_kb=$((256 * 1024))
if [ -n "${TP_SANITIZER:-}" ]; then
	# A sanitizer's own memory is not traceprof's: the limit is on top of
	# the same program's peak without the library.
	base=$("$P" 1000 4 | sed -n 's/^vmhwm_kb //p')
	limit_kb=$((limit_kb + base))
fi
out=$(TRACEPROF_FOLDER="$TP_TMP/t" traced "$P" 1000 4)
hwm=$(echo "$out" | sed -n 's/^vmhwm_kb //p')
[ -n "$hwm" ] || die "program output '$out'"
echo "peak resident: $((hwm / 1024)) MB (limit $((limit_kb / 1024)) MB)"
[ "$hwm" -le "$limit_kb" ] || die "1,000 sequential threads: peak resident $((hwm / 1024)) MB > $((limit_kb / 1024)) MB"
check_trace "$TP_TMP/t"/*.$TP_EXT
"$PYTHON" - "$TP_TMP/t" <<'PY'
import glob, os, sys
sys.path.insert(0, os.path.join(os.environ["TP_TOP"], "test", "lib"))
import rel
files = rel.trace_files(sys.argv[1])
assert len(files) == 1, files
d = rel.load_trace(files[0])
n = sum(1 for e in d["traceEvents"] if e.get("name") == "t" and e.get("ph") == "i")
tids = {e["tid"] for e in d["traceEvents"] if e.get("name") == "t"}
foot = d["traceprof"]
assert foot["events_dropped"] == 0 and foot["events_lost_after_thread_exit"] == 0, foot
assert n == 4000, "%d of 4000 events in the trace" % n
assert len(tids) >= 1, tids
print("4000 events from %d thread ids, 0 dropped" % len(tids))
PY
echo "threads memory ok"
