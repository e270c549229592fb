#!/usr/bin/env bash
# Issue 35 item 1: each file carries its own summary table (the footer's
# "aggregate", format/aggregate.c).  On real traces of the library (the
# demo's training loop on the stand-in runtime, 2 ranks, and the NVTX
# program's nested ranges and second thread), JSON and Perfetto:
#   - summary --by all|api|marker|step and --by rank print the same table from
#     the tables as from the events (--from-events), to within the JSON's
#     ns rounding (test/lib/sumcmp.py); --by rank also on two ranks of NCCL-like
#     NVTX ranges (prog_nvtx_payload), their time in collectives included;
#   - the tables are what is read: with the events overwritten between the
#     samples the table's covers checks, the summary still prints and
#     --from-events fails; with a sample overwritten, summary says in one
#     line that it reads the events (issue 43);
#   - a wrong table is caught by the comparison (a row's self time halved).
. "$TP_TOP/test/lib/common.sh"
T="$TP_TOP/python/traceprof"
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
sys.path.insert(0, __import__("os").environ["TP_TOP"] + "/python")
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

# The tables are what is read: the events overwritten between the samples
# the table's "covers" checks (same length) leave the summary intact and
# break the events' path; one sample overwritten makes summary read the
# events (issue 43), say so in one line, and fail on them.
for fmt in json perfetto; do
	f=$(ls job-$fmt/* | head -1)
	for how in between sample; do
		case $fmt in json) b=broken.json ;; *) b=broken.pftrace ;; esac
		cp "$f" $b
		"$PYTHON" - $b $how <<'PY'
import os, sys
sys.path.insert(0, os.environ["TP_TOP"] + "/python")
from traceprof.traces.aggtable import footer_of
p, how = sys.argv[1], sys.argv[2]
cov = footer_of(p)["aggregate"]["covers"]
s, n = cov["stride"], cov["samples"]
assert n >= 3, cov
with open(p, "r+b") as f:
    for k in range(1, n - 1):
        if how == "between":
            f.seek(k * s + 64)
            f.write(b"\x00#" * ((s - 64) // 2))
    if how == "sample":
        f.seek((n // 2) * s + 10)
        f.write(b"\x00#")
PY
		if [ $how = between ]; then
			"$PYTHON" "$T" summary $b --csv >fast.csv 2>err.txt || die "$fmt: summary of the file with its events overwritten between samples failed: $(cat err.txt)"
			[ ! -s err.txt ] || die "$fmt: summary said: $(cat err.txt)"
			if "$PYTHON" "$T" summary $b --from-events >/dev/null 2>&1; then
				die "$fmt: --from-events read a file whose events were overwritten"
			fi
		else
			# The events' path: JSON fails on them; a .pftrace may still
			# decode, and then prints what --from-events prints.
			# (When the events fail too, their error is the one line.)
			if "$PYTHON" "$T" summary $b --csv >fast.csv 2>err.txt; then
				[ $fmt = perfetto ] || die "$fmt: summary of a file whose sampled events were overwritten succeeded"
				"$PYTHON" "$T" summary $b --csv --from-events >slow.csv 2>/dev/null
				cmp -s fast.csv slow.csv || die "$fmt: summary did not print the events' table"
				grep -q "^traceprof: $b: not using its summary table: the events' bytes differ" err.txt ||
					die "$fmt: no line on the table not used: $(cat err.txt)"
			else
				"$PYTHON" "$T" summary $b --from-events >/dev/null 2>slow.txt && die "$fmt: --from-events succeeded"
				cmp -s err.txt slow.txt || die "$fmt: summary's error is not the events': $(cat err.txt)"
			fi
			[ "$(wc -l <err.txt)" = 1 ] || die "$fmt: not one line: $(cat err.txt)"
			! grep -q Traceback err.txt || die "$fmt: a traceback: $(cat err.txt)"
		fi
		rm -f $b
	done
done
echo "ok: the summary read the tables, not the events"

# A wrong table is caught by the comparison: one row's self time halved in
# the JSON footer (the table's own bytes are not in its digest: only its form
# is checked).
f=job-json/$(ls job-json | head -1)
"$PYTHON" - "$f" bad.json <<'PY'
import sys
src, dst = sys.argv[1], sys.argv[2]
data = open(src, "rb").read()
at = data.rfind(b'"aggregate"')
head, tail = data[:at], data[at:].decode()
import re
# The CUDA call with the largest self time: the stand-in's calls take
# nanoseconds, and halving one of a few hundred ns hides within the
# comparison's tolerance (test/lib/sumcmp.py).
rows = list(re.finditer(r'\["cuda\w+","cuda_runtime",(\d+),(\d+),(\d+),', tail))
assert rows, tail[:400]
m = max(rows, key=lambda r: int(r.group(3)))
tail = tail[:m.start(3)] + str(int(m.group(3)) // 2) + tail[m.end(3):]
open(dst, "wb").write(head + tail.encode())
open("halved.txt", "w").write(m.group(0).split('"')[1])
PY
"$PYTHON" "$T" summary bad.json --by api --csv --top 0 >fast.csv 2>/dev/null || die "summary of bad.json failed"
"$PYTHON" "$T" summary bad.json --by api --csv --top 0 --from-events >slow.csv 2>/dev/null || die "summary --from-events of bad.json failed"
if "$PYTHON" "$C" fast.csv slow.csv >cmp.txt; then
	die "a halved self time in the table went unnoticed"
fi
grep -q "$(cat halved.txt) self_us" cmp.txt || die "the comparison named another difference: $(cat cmp.txt)"
echo "ok: a wrong table is caught ($(head -1 cmp.txt))"

# A merge has no table of its own, and its report does not copy the inputs'.
"$PYTHON" "$T" merge -o merged.json job-json >/dev/null 2>&1 || die "merge of job-json failed"
! grep -q '"aggregate"' merged.json || die "the merged file carries the inputs' tables"
compare merged.json rank
echo "ok: a merged file is summarised from its events"
