#!/usr/bin/env bash
# Issue 35 item 1: each file carries its own summary table (the footer's
# "aggregate", format/aggregate.c).  On real traces of the library (the
# demo's training loop on the stand-in runtime, 2 ranks, and the NVTX
# program's nested ranges and second thread), JSON and Perfetto:
#   - summary --by all|api|marker|step and --by rank print the same table from
#     the tables as from the events (--from-events), to within the JSON's
#     ns rounding (test/lib/sumcmp.py); --by rank also on two ranks of NCCL-like
#     NVTX ranges (prog_nvtx_payload), their time in collectives included;
#   - the tables are what is read: with the events region overwritten the
#     summary still prints, --from-events fails;
#   - a wrong table is caught by the comparison (a row's self time doubled).
. "$TP_TOP/test/lib/common.sh"
T="$TP_TOP/scripts/traceprof"
C="$TP_TOP/test/lib/sumcmp.py"
for p in prog_demo_train prog_nvtx_ranges; do
	[ -x "$BUILD/test/$p" ] || die "$p not built"
done
[ -e "$BUILD/standin/libcudart.so.13" ] || skip "no stand-in runtime built ($BUILD/standin)"

for fmt in json perfetto; do
	for r in 0 1; do
		RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r TRACEPROF_FORMAT=$fmt TRACEPROF_FOLDER=job-$fmt \
			LD_LIBRARY_PATH="$BUILD/standin" traced "$BUILD/test/prog_demo_train" 6 1 \
			>run.out 2>&1 || die "demo rank $r ($fmt) failed: $(cat run.out)"
	done
	TRACEPROF_FORMAT=$fmt TRACEPROF_FOLDER=nv-$fmt traced "$BUILD/test/prog_nvtx_ranges" 3 \
		>run.out 2>&1 || die "prog_nvtx_ranges ($fmt) failed: $(cat run.out)"
done

compare() { # FILE-OR-FOLDER BY
	"$PYTHON" "$T" summary "$1" --by "$2" --csv --top 0 >fast.csv 2>/dev/null ||
		die "summary $1 --by $2 failed"
	"$PYTHON" "$T" summary "$1" --by "$2" --csv --top 0 --from-events >slow.csv 2>/dev/null ||
		die "summary $1 --by $2 --from-events failed"
	"$PYTHON" "$C" fast.csv slow.csv || die "summary $1 --by $2: the tables and the events differ"
	[ "$(wc -l <fast.csv)" -gt 1 ] || die "summary $1 --by $2: no rows"
}
n=0
for fmt in json perfetto; do
	for f in job-$fmt/* nv-$fmt/*; do
		"$PYTHON" - "$f" <<'PY' || die "$f has no aggregate table"
import sys
sys.path.insert(0, __import__("os").environ["TP_TOP"] + "/scripts")
from traceprof.traces.aggtable import aggregate_of
a = aggregate_of(sys.argv[1])
assert a is not None and a[0]["rows"], a
PY
		for by in all api marker step; do
			case $f in nv-*) [ $by = api ] || [ $by = step ] && continue ;; esac
			compare "$f" $by
			n=$((n + 1))
		done
	done
	compare job-$fmt rank
	n=$((n + 1))
done
# --by rank's collectives (issue 42 item 4): NCCL's NVTX ranges
# (prog_nvtx_payload's ncclAllReduce, ncclSend, ...) in each rank's table
# and events, comm_us_per_step the same from both.
if [ -x "$BUILD/test/prog_nvtx_payload" ]; then
	for fmt in json perfetto; do
		for r in 0 1; do
			RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r TRACEPROF_FORMAT=$fmt TRACEPROF_FOLDER=nccl-$fmt \
				traced "$BUILD/test/prog_nvtx_payload" 3 >run.out 2>&1 ||
				die "prog_nvtx_payload rank $r ($fmt) failed: $(cat run.out)"
		done
		compare nccl-$fmt rank
		n=$((n + 1))
		cut -d, -f11 fast.csv | grep -qE '^[0-9]+\.[0-9]{3}$' ||
			die "nccl-$fmt: no time in collectives: $(cat fast.csv)"
	done
else
	echo "prog_nvtx_payload not built: --by rank's collectives not compared"
fi
echo "ok: $n tables equal from the aggregates and from the events"

# The tables are what is read: the events overwritten (same length) leave the
# summary intact and break the events' path.
for fmt in json perfetto; do
	f=$(ls job-$fmt/* | head -1)
	cp "$f" broken-$fmt
	"$PYTHON" - broken-$fmt <<'PY'
import os, sys
p = sys.argv[1]
size = os.path.getsize(p)
with open(p, "r+b") as f:
    f.seek(size // 3)
    f.write(b"\x00#" * (size // 10))
PY
	case $fmt in json) b=broken.json ;; *) b=broken.pftrace ;; esac
	mv broken-$fmt $b
	"$PYTHON" "$T" summary $b --csv >fast.csv 2>err.txt || die "$fmt: summary of the file with its events overwritten failed: $(cat err.txt)"
	if "$PYTHON" "$T" summary $b --from-events >/dev/null 2>&1; then
		die "$fmt: --from-events read a file whose events were overwritten"
	fi
	rm -f $b
done
echo "ok: the summary read the tables, not the events"

# A wrong table is caught: one row's self time doubled in the JSON footer.
f=job-json/$(ls job-json | head -1)
"$PYTHON" - "$f" bad.json <<'PY'
import sys
src, dst = sys.argv[1], sys.argv[2]
data = open(src, "rb").read()
at = data.rfind(b'"aggregate"')
head, tail = data[:at], data[at:].decode()
import re
m = re.search(r'\["cudaMemcpy","cuda_runtime",(\d+),(\d+),(\d+),', tail)
assert m, tail[:400]
tail = tail[:m.start(3)] + str(2 * int(m.group(3)) + 5000) + tail[m.end(3):]
open(dst, "wb").write(head + tail.encode())
PY
"$PYTHON" "$T" summary bad.json --by api --csv --top 0 >fast.csv 2>/dev/null || die "summary of bad.json failed"
"$PYTHON" "$T" summary bad.json --by api --csv --top 0 --from-events >slow.csv 2>/dev/null || die "summary --from-events of bad.json failed"
if "$PYTHON" "$C" fast.csv slow.csv >cmp.txt; then
	die "a doubled self time in the table went unnoticed"
fi
grep -q "cudaMemcpy self_us" cmp.txt || die "the comparison named another difference: $(cat cmp.txt)"
echo "ok: a wrong table is caught ($(head -1 cmp.txt))"

# A merge has no table of its own, and its report does not copy the inputs'.
"$PYTHON" "$T" merge -o merged.json job-json >/dev/null 2>&1 || die "merge of job-json failed"
! grep -q '"aggregate"' merged.json || die "the merged file carries the inputs' tables"
compare merged.json rank
echo "ok: a merged file is summarised from its events"
