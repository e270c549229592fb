#!/usr/bin/env bash
# Issue 43 item 5: `summary --from-events` parses a file in the writer's
# one-event-per-line layout with pyarrow's JSON reader and computes its table
# from the columns (traces/lines.py, traces/rowcols.py); other files, and a
# Python without pyarrow, read event by event (--json-reader python).  On
# real traces of the library (the demo's training loop on the stand-in
# runtime, two ranks, plain and .gz; the NVTX program's nested ranges on two
# threads) and a generated one, every --by prints the same bytes both ways
# (--json-reader arrow: pyarrow whatever the size; auto takes it from 32 MB),
# and the columnar reading is the one taken (not a silent fall back);
# --by rank over the job too.
. "$TP_TOP/test/lib/common.sh"
T="$TP_TOP/python/traceprof"
need_venv torch 'import pyarrow, numpy' "no pyarrow or numpy"
[ -x "$BUILD/test/prog_demo_train" ] || die "prog_demo_train not built"
[ -x "$BUILD/test/prog_nvtx_ranges" ] || die "prog_nvtx_ranges not built"
[ -e "$BUILD/standin/libcudart.so.13" ] || skip "no stand-in runtime built ($BUILD/standin)"

for r in 0 1; do
	RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r TRACEPROF_FOLDER=job LD_LIBRARY_PATH="$BUILD/standin" \
		traced "$BUILD/test/prog_demo_train" 6 1 >run.out 2>&1 || die "demo rank $r failed: $(cat run.out)"
done
TRACEPROF_COMPRESS=gzip TRACEPROF_FOLDER=gz LD_LIBRARY_PATH="$BUILD/standin" \
	traced "$BUILD/test/prog_demo_train" 6 1 >run.out 2>&1 || die "demo (gzip) failed: $(cat run.out)"
TRACEPROF_FOLDER=nv traced "$BUILD/test/prog_nvtx_ranges" 3 >run.out 2>&1 ||
	die "prog_nvtx_ranges failed: $(cat run.out)"
"$py" "$TP_TOP/test/lib/gentrace.py" gen.json --mb 2 --gpu 2>/dev/null || die "gentrace failed"

# taken FILE BY: whether summary's columnar reading reads FILE.
taken() {
	"$py" - "$TP_TOP/python" "$1" "$2" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from traceprof.cli import summary
a = type("A", (), {"json_reader": "arrow", "by": sys.argv[3], "file": sys.argv[2]})()
got = summary._from_columns(a, {})
sys.exit(0 if got is not None else 1)
PY
}

n=0
for f in job/* gz/* nv/* gen.json; do
	for by in all api kernel marker step; do
		rc_new=0 rc_old=0
		"$py" "$T" summary "$f" --from-events --by $by --csv --top 0 --json-reader arrow \
			>new.csv 2>new.err || rc_new=$?
		"$py" "$T" summary "$f" --from-events --by $by --csv --top 0 --json-reader python \
			>old.csv 2>old.err || rc_old=$?
		! grep -q Traceback new.err || die "$f --by $by: a traceback: $(cat new.err)"
		[ $rc_new = $rc_old ] || die "$f --by $by: exit $rc_new, per event $rc_old: $(cat new.err)"
		cmp -s new.csv old.csv || {
			diff old.csv new.csv | head -10
			die "$f --by $by: the columnar table differs from the per-event one"
		}
		cmp -s new.err old.err || die "$f --by $by: other messages: $(cat new.err) / $(cat old.err)"
		[ $rc_old != 0 ] || [ "$(wc -l <old.csv)" -gt 1 ] || die "$f --by $by: no rows"
		taken "$f" $by || die "$f --by $by: not read by the columnar reading"
		n=$((n + 1))
	done
done
"$py" "$T" summary job --by rank --from-events --csv --top 0 >new.csv 2>new.err ||
	die "--by rank failed: $(cat new.err)"
"$py" "$T" summary job --by rank --from-events --csv --top 0 --json-reader python >old.csv 2>old.err ||
	die "--by rank (per event) failed: $(cat old.err)"
cmp -s new.csv old.csv || die "--by rank: the readings differ: $(diff old.csv new.csv | head -5)"
echo "ok: $n summaries of real and generated traces, columnar and per event, byte-identical"
