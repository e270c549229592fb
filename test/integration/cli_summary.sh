#!/usr/bin/env bash
# `traceprof summary` on a fixed trace (test/data/summary-trace.json) against
# its committed expected output; the same through .gz and .zst.
. "$TP_TOP/test/lib/common.sh"
T="$TP_TOP/scripts/traceprof"
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
