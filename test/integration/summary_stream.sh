#!/usr/bin/env bash
# Issue 35 item 2: `traceprof summary` reads one file's events as a stream,
# in memory independent of the file's size (python/traceprof/traces/rowacc.py).
#   - Peak resident memory of `summary --from-events` grows by less than
#     24 MiB from a 10 MB to a 40 MB generated trace (test/lib/gentrace.py;
#     the in-memory reading before grew 49 MiB, from 53 to 102), read event
#     by event and by pyarrow (--json-reader python, arrow);
#   - the table printed equals the in-memory reading's (test/lib/sumref.py)
#     on the 10 MB file (its complete events sorted in runs spilled to
#     temporary files and merged), on the same events in the library's own
#     order (a parent after its children) and shuffled, compressed .gz and
#     .zst, on a torch-style trace (test/data/summary-trace.json), and on
#     real traces of the library, JSON and Perfetto (the demo's training
#     loop and the NVTX program's nested ranges on two threads).
. "$TP_TOP/test/lib/common.sh"
T="$TP_TOP/python/traceprof"
G="$TP_TOP/test/lib/gentrace.py"
R="$TP_TOP/test/lib/sumref.py"

# Peak resident memory (MiB) of a command, its output thrown away.
peak() {
	"$PYTHON" -c '
import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)
if r.returncode:
    sys.exit("%s failed" % " ".join(sys.argv[1:]))
print(int(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024))' "$@"
}
"$PYTHON" "$G" small.json --mb 10 --gpu 2>/dev/null || die "gentrace 10 MB failed"
"$PYTHON" "$G" big.json --mb 40 --gpu 2>/dev/null || die "gentrace 40 MB failed"
# Both readings: event by event, and pyarrow's (--json-reader arrow, where
# the Python has it; auto takes it from 32 MB: one reading for both files).
arrow=$(python_where 'import pyarrow, numpy')
for how in python ${arrow:+arrow}; do
	py=$PYTHON
	[ $how = python ] || py=$arrow
	m1=$(peak "$py" "$T" summary --from-events --json-reader $how small.json) ||
		die "summary small.json failed"
	m2=$(peak "$py" "$T" summary --from-events --json-reader $how big.json) ||
		die "summary big.json failed"
	echo "peak RSS of summary --from-events --json-reader $how: 10 MB file $m1 MiB, 40 MB file $m2 MiB"
	[ $((m2 - m1)) -lt 24 ] ||
		die "summary's memory grows with the file ($how): $m1 MiB for 10 MB, $m2 MiB for 40 MB"
done

# The same table as the in-memory reading.
same() { # FILE BY...
	local f=$1 by
	shift
	for by in "$@"; do
		"$PYTHON" "$T" summary "$f" --from-events --by $by --csv --top 0 >new.csv 2>new.err ||
			die "summary $f --by $by failed: $(cat new.err)"
		"$PYTHON" "$R" "$f" $by >old.csv 2>old.err || die "sumref $f $by failed: $(cat old.err)"
		cmp -s new.csv old.csv || {
			diff old.csv new.csv | head -10
			die "summary $f --by $by: the streaming reading differs from the in-memory one"
		}
		[ "$(wc -l <new.csv)" -gt 1 ] || die "summary $f --by $by: no rows"
	done
}
same small.json all
# The library's order (each thread's complete events by their end) and a
# shuffle, as a bare event array, 2 MB.
"$PYTHON" "$G" mid.json --mb 2 --gpu 2>/dev/null || die "gentrace 2 MB failed"
"$PYTHON" - <<'PY' || die "reordering failed"
import json, random
with open("mid.json") as f:
    ev = json.load(f)["traceEvents"]
by_end = sorted(ev, key=lambda e: e.get("ts", 0) + e.get("dur", 0))
random.Random(1).shuffle(ev)
json.dump(by_end, open("byend.json", "w"))
json.dump({"traceEvents": ev}, open("shuffled.json", "w"))
PY
same byend.json all api kernel step
same shuffled.json all marker
gzip -k shuffled.json
same shuffled.json.gz all
if command -v zstd >/dev/null; then
	zstd -q shuffled.json -o shuffled.json.zst
	same shuffled.json.zst all
fi
cp "$TP_TOP/test/data/summary-trace.json" torch.json
same torch.json all api kernel marker step
n=0
if [ -x "$BUILD/test/prog_demo_train" ] && [ -x "$BUILD/test/prog_nvtx_ranges" ] &&
	[ -e "$BUILD/standin/libcudart.so.13" ]; then
	for fmt in json perfetto; do
		TRACEPROF_FORMAT=$fmt TRACEPROF_FOLDER=demo-$fmt LD_LIBRARY_PATH="$BUILD/standin" \
			traced "$BUILD/test/prog_demo_train" 6 1 >run.out 2>&1 ||
			die "demo ($fmt) failed: $(cat run.out)"
		TRACEPROF_FORMAT=$fmt TRACEPROF_FOLDER=nv-$fmt traced "$BUILD/test/prog_nvtx_ranges" 3 \
			>run.out 2>&1 || die "prog_nvtx_ranges ($fmt) failed: $(cat run.out)"
		for f in demo-$fmt/*; do same "$f" all api marker step; n=$((n + 1)); done
		for f in nv-$fmt/*; do same "$f" all marker; n=$((n + 1)); done
	done
	[ $n -ge 4 ] || die "only $n real traces written"
else
	echo "note: no demo programs or stand-in runtime built; real traces not compared"
fi
echo "ok: streaming summary equals the in-memory one (generated, reordered, compressed, torch-style, $n real traces)"
