#!/usr/bin/env bash
# `traceprof summary` on a fixed trace (test/data/summary-trace.json) against
# its committed expected output; the same through .gz and .zst.
. "$TP_TOP/test/lib/common.sh"
T="$TP_TOP/python/traceprof"
cp "$TP_TOP/test/data/summary-trace.json" .
gold() {
	local f=$1
	for by in all api kernel marker step; do
		echo "\$ traceprof summary summary-trace.json --by $by"
		"$PYTHON" "$T" summary "$f" --by $by
	done
	echo "\$ traceprof summary summary-trace.json --top 3 --csv"
	"$PYTHON" "$T" summary "$f" --top 3 --csv
	echo "\$ traceprof summary summary-trace.json --by step --csv"
	"$PYTHON" "$T" summary "$f" --by step --csv
}
gold summary-trace.json >out.txt
diff -u "$TP_TOP/test/data/summary-trace.expected" out.txt || die "summary output differs from test/data/summary-trace.expected"

gzip -k summary-trace.json
gold summary-trace.json.gz >out-gz.txt
diff -u out.txt out-gz.txt || die "summary of the .gz file differs"
if command -v zstd >/dev/null; then
	zstd -q summary-trace.json -o summary-trace.json.zst
	gold summary-trace.json.zst >out-zst.txt
	diff -u out.txt out-zst.txt || die "summary of the .zst file differs"
fi
# Errors: a missing file and a truncated one fail with a message, not a traceback.
if "$PYTHON" "$T" summary nosuch.json 2>err.txt; then die "missing file accepted"; fi
grep -q "traceprof: nosuch.json" err.txt || die "no message for a missing file: $(cat err.txt)"
head -c 3000 summary-trace.json >trunc.json
if "$PYTHON" "$T" summary trunc.json 2>err.txt; then die "truncated file accepted"; fi
grep -q "truncated\|invalid" err.txt || die "no message for a truncated file: $(cat err.txt)"
! grep -q Traceback err.txt || die "traceback: $(cat err.txt)"
echo "summary golden output ok"

# The interpreter itself, not a wrapper (pyenv's shim costs seconds a start).
PY=$("$PYTHON" -c 'import sys; print(sys.executable)')

# Nothing to show is said, with why (issue 21 item 8), on stderr, exit 1.
echo '{"a": 1}' >noevents.json
if "$PY" "$T" summary noevents.json >out.txt 2>err.txt; then die "an empty table for {\"a\": 1}"; fi
grep -q "nothing to show: the file has no events" err.txt || die "no reason for {\"a\": 1}: $(cat err.txt)"
[ ! -s out.txt ] || die "a table printed for {\"a\": 1}: $(cat out.txt)"
"$PY" - <<'PY'
import json
ev = [{"ph": "X", "cat": "cuda_runtime", "name": "cudaMalloc", "pid": 1, "tid": 1, "ts": 1, "dur": 2}]
json.dump({"traceEvents": ev, "traceprof": {"configuration": {"TRACEPROF_CUPTI": "auto"}}},
          open("hostonly.json", "w"))
PY
if "$PY" "$T" summary hostonly.json --by kernel >out.txt 2>err.txt; then die "an empty kernel table"; fi
grep -q "no GPU events: CUPTI did not record (host-only mode" err.txt || die "kernel: $(cat err.txt)"
# (Into a file: with pipefail, grep -q quitting early can end the writer by
# SIGPIPE and fail the pipeline.)
"$PY" "$T" summary hostonly.json --by api >api.txt || die "summary --by api of the host-only trace failed"
grep -q cudaMalloc api.txt || die "api table of the host-only trace: $(cat api.txt)"
# The byte offset of a parse error is where the error is, not the file's size.
{ printf '{"traceEvents":[\n{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1},\n{"ph":"X",,}\n'
  for i in $(seq 2000); do echo '{"ph":"X","name":"pad","pid":1,"tid":1,"ts":1,"dur":1},'; done
  echo '{}]}'; } >badat.json
if "$PY" "$T" summary badat.json 2>err.txt; then die "invalid JSON accepted"; fi
grep -q "at byte 81:" err.txt || die "wrong offset (want 81, as json.loads says): $(cat err.txt)"

# --by rank (issue 21 item 11): one row per rank, the straggler named; on
# per-rank files, their folder, and the merged file alike.
G="$TP_TOP/test/lib/gentrace.py"
mkdir job
for r in 0 1 2 3; do
	"$PY" "$G" job/rank$r.trace.json --rank $r --world 4 --events 60 --base $((1700000000000000000 + r)) \
		--step-us $([ $r = 2 ] && echo 1500 || echo 1000) 2>/dev/null
done
"$PY" "$T" merge -o job.merged.json job 2>/dev/null
for src in "job" "job/rank0.trace.json job/rank1.trace.json job/rank2.trace.json job/rank3.trace.json" job.merged.json; do
	# shellcheck disable=SC2086
	"$PY" "$T" summary --by rank $src >rank.txt 2>err.txt || die "--by rank $src: $(cat err.txt)"
	[ "$(grep -cE '^[0-3] ' rank.txt)" = 4 ] || die "--by rank $src: not 4 rows: $(cat rank.txt)"
	grep -qE '^2 +[0-9]+ +1\.499ms .* 1\.50x$' rank.txt || die "--by rank $src: rank 2's row: $(cat rank.txt)"
	grep -q "^straggler: rank 2 " rank.txt || die "--by rank $src: straggler: $(cat rank.txt)"
done
"$PY" "$T" summary --by rank --csv job >rank.csv 2>/dev/null
grep -q "^2,5,1499.000,1499.000,1499.000,4,1.501,1499.000,1499.000,0.000,$" rank.csv || die "--by rank --csv: $(cat rank.csv)"
echo "summary reasons, offsets and ranks ok"
