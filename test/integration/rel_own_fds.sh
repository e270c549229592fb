# Issue 17 item 1: a program that closes every inherited descriptor (a
# daemon's close_range(3, ~0U, 0)) at start and again half-way, then opens
# its own data files, keeps them: traceprof never writes into a descriptor
# number the program closed and reused, never closes one of the program's,
# and still writes complete traces (it reopens its own files).
. "$TP_TOP/test/lib/common.sh"
unset TRACEPROF_LIVE # as by default: the live file is on
prog="$BUILD/test/prog_rel_own"
[ -x "$prog" ] || skip "$prog not built"

check_data() { # folder
	for i in 1 2 3; do
		got=$(cat "$1/data$i.txt")
		[ "$got" = "program data $i" ] || die "data$i.txt changed: $(head -c 200 "$1/data$i.txt" | od -c | head -3)"
	done
}
# No schedule: one window open across the close (its file is written to
# while the program's files sit on the old numbers).  A schedule: windows
# saved (files closed) after the program reopened.
for sched in "" "active=3"; do
	for compress in none zstd; do
		d="$TP_TMP/run-${sched:-whole}-$compress"
		mkdir -p "$d"
		out=$(env ${sched:+TRACEPROF_SCHEDULE=$sched} TRACEPROF_COMPRESS=$compress \
			TRACEPROF_FOLDER="$d/tr" LD_PRELOAD="$TP_PRELOAD" "$prog" fds 20 "$d" 2>"$d/err") ||
			die "exit $?: $out $(cat "$d/err")"
		[ "$out" = ok ] || die "program saw traceprof ($sched $compress): $out"
		check_data "$d"
		ls "$d/tr"/* >/dev/null || die "no trace ($sched $compress)"
		[ -z "$(find "$d" -name '.*tmp*')" ] || die "temporary files left in $d"
		if [ "$compress" = none ]; then
			check_trace "$d"/tr/* >/dev/null || die "invalid trace ($sched)"
		fi
	done
done
# Upload commands running across the program's close_range: their status
# pipes' read ends are traceprof's, high and checked; the program's files
# opened on low numbers are never read or closed by traceprof (the pipes
# the program closed cost their commands' statuses, counted and logged).
d="$TP_TMP/run-onsave"
mkdir -p "$d"
out=$(env TRACEPROF_SCHEDULE=active=2 TRACEPROF_ON_SAVE='sleep 0.05' TRACEPROF_FOLDER="$d/tr" \
	LD_PRELOAD="$TP_PRELOAD" "$prog" fds 20 "$d" 2>"$d/err") || die "on-save: exit $?: $out $(cat "$d/err")"
[ "$out" = ok ] || die "program saw traceprof (on-save): $out"
check_data "$d"
[ "$(ls "$d/tr" | wc -l)" -ge 5 ] || die "on-save: $(ls "$d/tr" | wc -l) traces"
# Every step recorded: the file holds all 20 steps' events, less those
# counted as dropped (a slow flush thread, e.g. under a sanitizer).
"$PYTHON" - "$TP_TMP/run-whole-none/tr" <<'PY'
import glob, os, sys
sys.path.insert(0, os.path.join(os.environ["TP_TOP"], "test", "lib"))
import rel
files = rel.trace_files(sys.argv[1])
assert len(files) == 1, files
d = rel.load_trace(files[0])
n = sum(1 for e in d["traceEvents"] if e.get("name") == "work")
dropped = d["traceprof"]["events_dropped"]
assert n <= 20 * 2000 and 20 * 2000 - n <= dropped, (n, dropped)
print(n, "markers written across the program's close_range,", dropped, "records dropped")
PY
echo ok
