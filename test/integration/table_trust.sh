#!/usr/bin/env bash
# Issue 43 item 1: a file's summary table (the footer's "aggregate") is used
# only when it provably belongs to the events beside it (its "covers":
# format/digest.h, traces/aggtable.py check()).  Real traces of the demo's
# training loop on the stand-in runtime, JSON (plain, zstd, gzip) and
# Perfetto (plain, zstd):
#   - the cases users found: a trace re-indented as json.dump(indent=2)
#     writes it (jq's layout) with calls removed, and two traces joined
#     with cat: summary reads the events and prints their counts, saying in
#     one line that it did not use the table, or fails in one line as
#     --from-events does;
#   - malformed tables (a row of the wrong arity, a huge number, a null
#     name, strings for numbers): one line, the events' table, no
#     traceback, in summary, summary --by step and --by rank;
#   - a window split into parts with a part missing: one line names the
#     parts missing, and the events are read (summary, --by rank);
#   - copies that leave the events and the footer intact (recompressed,
#     renamed, moved, a member and white space after the footer): the
#     table is kept and summary prints the events' table;
#   - the property test (test/lib/table_props.py, hypothesis; skipped
#     without it): random edits never yield a table that differs from what
#     the events give; edits that leave the events and the footer intact
#     always keep the table, equal to the events' (either count 0 fails); any choice of a window's parts with one missing is
#     refused in one line naming exactly the parts missing.
. "$TP_TOP/test/lib/common.sh"
T="$TP_TOP/python/traceprof"
[ -x "$BUILD/test/prog_demo_train" ] || die "prog_demo_train not built"
[ -e "$BUILD/standin/libcudart.so.13" ] || skip "no stand-in runtime built ($BUILD/standin)"

rec() { # FOLDER RANK ENV...
	local d=$1 r=$2
	shift 2
	env "$@" RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r TRACEPROF_FOLDER=$d LD_LIBRARY_PATH="$BUILD/standin" \
		LD_PRELOAD="$TP_PRELOAD" "$BUILD/test/prog_demo_train" 6 1 >run.out 2>&1 ||
		die "demo rank $r ($*) failed: $(cat run.out)"
}
for r in 0 1; do
	rec job $r TRACEPROF_FORMAT=json
	rec pf $r TRACEPROF_FORMAT=perfetto
done
rec zst 0 TRACEPROF_COMPRESS=zstd
rec gz 0 TRACEPROF_COMPRESS=gzip
rec pfz 0 TRACEPROF_FORMAT=perfetto TRACEPROF_COMPRESS=zstd
j0=$(ls job/rank0.*.json) j1=$(ls job/rank1.*.json)

notraceback() { ! grep -q Traceback "$1" || die "$2: a traceback: $(cat "$1")"; }
used_not() { # ERRFILE FILE WHY: the one line saying the table is not used
	[ "$(grep -c "^traceprof: $2: not using its summary table: $3" "$1")" = 1 ] ||
		die "$2: no line saying its table is not used ($3): $(cat "$1")"
}

# jq's layout, calls removed: the table counted them.
"$PYTHON" - "$j0" jq.json <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("name") != "cudaLaunchKernel"]
json.dump(doc, open(sys.argv[2], "w"), indent=2)
PY
"$PYTHON" "$T" summary jq.json --by api --csv --top 0 >fast.csv 2>err.txt || die "summary jq.json failed: $(cat err.txt)"
used_not err.txt jq.json "it covers [0-9]* bytes of events but the footer begins at byte"
! grep -q '^cudaLaunchKernel,' fast.csv || die "jq.json: the removed launches are counted: $(grep cudaLaunchKernel fast.csv)"
"$PYTHON" "$T" summary jq.json --by api --csv --top 0 --from-events >slow.csv 2>/dev/null
cmp -s fast.csv slow.csv || die "jq.json: summary does not print the events' table"
echo "ok: a re-indented, filtered trace is summarised from its events"

# Two traces joined: the second one's table was printed, exit 0.
for d in job pf; do
	a=$(ls $d/rank0.*) b=$(ls $d/rank1.*)
	case $d in job) j=joined.json ;; *) j=joined.pftrace ;; esac
	cat "$a" "$b" >$j
	rc=0
	"$PYTHON" "$T" summary $j --csv >fast.csv 2>err.txt || rc=$?
	notraceback err.txt $j
	if [ $d = job ]; then
		# The events fail: one line, theirs (the table's is not said).
		[ $rc = 1 ] || die "$j: summary exited $rc, not 1 as --from-events: $(cat err.txt)"
		[ "$(wc -l <err.txt)" = 1 ] && grep -q "extra data after the end of the trace" err.txt ||
			die "$j: not one line, the events' error: $(cat err.txt)"
	else
		used_not err.txt $j "it covers [0-9]* bytes of events but the footer begins at byte"
		"$PYTHON" "$T" summary $j --csv --from-events >slow.csv 2>/dev/null
		cmp -s fast.csv slow.csv || die "$j: summary does not print the events' table"
	fi
done
echo "ok: two joined traces are not summarised by the second one's table"

# Edits that leave the events and the footer intact keep the table, and it
# is the events' table, row for row (times to within the events' ns
# rounding): a .json.gz stored plain, a .json.zst
# as .json.gz, a .pftrace.zst as .pftrace.gz, renamed into another folder,
# and a member and white space after the footer.
mkdir -p "kept/a b" kept/c.json
gzip -dc gz/rank0.*.json.gz >kept/moved.json
zstd -dcq zst/rank0.*.json.zst | gzip -c >"kept/a b/other name.json.gz"
zstd -dcq pfz/rank0.*.pftrace.zst | gzip -c >kept/c.json/r.pftrace.gz
"$PYTHON" - "$j1" kept/tail.json <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
close = data.rindex(b"}")
open(sys.argv[2], "wb").write(data[:close] + b', "note": [1, "x"]\n' + data[close:] + b"\n \n")
PY
for f in kept/moved.json "kept/a b/other name.json.gz" kept/c.json/r.pftrace.gz kept/tail.json; do
	"$PYTHON" "$T" summary "$f" --by api --csv --top 0 >fast.csv 2>err.txt ||
		die "summary $f failed: $(cat err.txt)"
	! grep -q "not using its summary table" err.txt || die "$f: its table is not used: $(cat err.txt)"
	"$PYTHON" - "$TP_TOP/python" "$f" <<'PY' || die "$f: its table is not kept"
import sys
sys.path.insert(0, sys.argv[1])
from traceprof.traces import aggtable
tab, _, why = aggtable.check(sys.argv[2])
sys.exit(0 if tab is not None else "%s: refused: %s" % (sys.argv[2], why))
PY
	"$PYTHON" "$T" summary "$f" --by api --csv --top 0 --from-events >slow.csv 2>/dev/null
	# The table is exact to the ns, the events' durations rounded to it:
	# the same rows and counts, times within that rounding (sumcmp.py).
	"$PYTHON" "$TP_TOP/test/lib/sumcmp.py" fast.csv slow.csv >cmp.txt ||
		die "$f: the table kept is not the events' table: $(cat cmp.txt)"
	[ "$(wc -l <fast.csv)" -gt 2 ] || die "$f: an empty table: $(cat fast.csv)"
done
echo "ok: recompressed, renamed, moved and trailing-text copies keep their table, the events' one"

# Malformed tables (JSON: the table's text edited).
for bad in arity huge nullname strings; do
	mkdir -p bad-$bad
	f=bad-$bad/rank0.json
	"$PYTHON" - "$j0" $f $bad <<'PY' || die "cannot make the $bad table"
import re, sys
src, dst, bad = sys.argv[1:]
data = open(src, "rb").read()
at = data.rfind(b'"rows"')
head, tail = data[:at], data[at:]
m = re.search(rb'\["cudaMalloc","cuda_runtime",(\d+),(\d+)', tail)
assert m, tail[:300]
if bad == "arity":
    # [name, cat, calls]: the row's other numbers dropped.
    end = tail.index(b"]", m.end())
    tail = tail[:m.start()] + b'["cudaMalloc","cuda_runtime",' + m.group(1) + tail[end:]
else:
    new = {"huge": b'["cudaMalloc","cuda_runtime",' + m.group(1) + b",1" + b"0" * 400,
           "nullname": b'[null,"cuda_runtime",' + m.group(1) + b"," + m.group(2),
           "strings": b'["cudaMalloc","cuda_runtime","' + m.group(1) + b'","' + m.group(2) + b'"'}[bad]
    tail = tail[:m.start()] + new + tail[m.end():]
open(dst, "wb").write(head + tail)
PY
	for by in all step rank; do
		rc=0
		in=$f
		[ $by = rank ] && in=bad-$bad
		"$PYTHON" "$T" summary $in --by $by --csv >out.csv 2>err.txt || rc=$?
		notraceback err.txt "$bad --by $by"
		used_not err.txt "$f" "its table is malformed"
		[ $rc = 0 ] || die "$bad --by $by: exit $rc: $(cat err.txt)"
		"$PYTHON" "$T" summary $in --by $by --csv --from-events >slow.csv 2>/dev/null
		cmp -s out.csv slow.csv || die "$bad --by $by: not the events' table"
	done
done
echo "ok: malformed tables are reported in one line, and the events summarised"

# A window split into parts (TRACEPROF_MAX_FILE_MB) with a part missing:
# one line names it, and the events are read (each part's table is sound
# for its own file, but the window's is not all there).
parts=()
if [ -x "$BUILD/test/prog_steps" ]; then
	TRACEPROF_SAMPLE_MS=0 TRACEPROF_BUFFER_EVENTS=1048576 TRACEPROF_FOLDER=parts \
		TRACEPROF_MAX_FILE_MB=1 traced "$BUILD/test/prog_steps" 3 2 4000 >run.out 2>&1 ||
		die "prog_steps (split in parts) failed: $(cat run.out)"
	parts=(parts/*.part*.json)
	n=${#parts[@]}
	[ "$n" -ge 3 ] || die "prog_steps: no window split into 3 parts or more: $(ls parts)"
	mkdir miss
	cp parts/* miss/
	rm miss/*.part2.json
	p1=$(ls miss/*.part1.json)
	for in in miss "$p1"; do
		by=rank
		[ "$in" = miss ] || by=all
		"$PYTHON" "$T" summary "$in" --by $by --csv --top 0 >out.csv 2>err.txt ||
			die "summary $in --by $by failed: $(cat err.txt)"
		notraceback err.txt "$in"
		[ "$(grep -c '^traceprof: a window split into parts is incomplete (.*: parts\? [0-9, .]* of '$n' missing)' err.txt)" = 1 ] ||
			die "summary $in --by $by: no one line saying parts are missing: $(cat err.txt)"
		[ $by = all ] || grep -q ": part 2 of $n missing" err.txt ||
			die "summary $in: the line does not name part 2: $(cat err.txt)"
		"$PYTHON" "$T" summary "$in" --by $by --csv --top 0 --from-events >slow.csv 2>/dev/null
		cmp -s out.csv slow.csv || die "summary $in --by $by: not the events' table"
	done
	"$PYTHON" "$T" summary parts --by rank --csv >out.csv 2>err.txt ||
		die "summary parts --by rank failed: $(cat err.txt)"
	! grep -q "split into parts" err.txt || die "every part there, yet: $(cat err.txt)"
	echo "ok: a window with a part missing is said in one line, and its events read"
else
	echo "SKIP (part): $BUILD/test/prog_steps not built: no window split into parts"
fi

props=$(python_where 'import hypothesis')
if [ -n "$props" ]; then
	"$props" "$TP_TOP/test/lib/table_props.py" --examples "${TP_TABLE_EXAMPLES:-40}" \
		job/* pf/* zst/* gz/* pfz/* ${parts[@]+--parts "${parts[@]}"} ||
		die "the property test failed"
else
	echo "SKIP (part): no Python with hypothesis: the property test did not run"
fi
