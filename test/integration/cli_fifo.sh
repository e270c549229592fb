#!/usr/bin/env bash
# `traceprof merge` and `summary` read regular files only: a FIFO named like
# a trace (rank1.step1.trace.json) in the folder they are given, or named
# itself, is skipped or refused with one line instead of waiting forever
# for a writer.
. "$TP_TOP/test/lib/common.sh"
T="$TP_TOP/python/traceprof"
G="$TP_TOP/test/lib/gentrace.py"
command -v mkfifo >/dev/null || skip "mkfifo not installed"
mkdir in
"$PYTHON" "$G" in/rank0.step1.trace.json --rank 0 --world 2 --pid 500 --events 40 2>/dev/null
mkfifo in/rank1.step1.trace.json
# Each command gets 20 s; before the fix each one waited for ever (timeout: 124).
run() { timeout 20 "$PYTHON" "$T" "$@"; }
rc=0
run merge -o merged.json in 2>merge.log || rc=$?
cat merge.log
[ $rc = 124 ] && die "merge hung on the FIFO"
[ $rc = 0 ] || die "merge failed ($rc)"
[ "$(grep -c 'rank1.step1.trace.json: not a regular file' merge.log)" = 1 ] ||
	die "merge did not say once that it skipped the FIFO"
check_trace merged.json
rc=0
run summary --by rank in >sum.txt 2>sum.log || rc=$?
cat sum.log
[ $rc = 124 ] && die "summary --by rank hung on the FIFO"
[ $rc = 0 ] || die "summary --by rank failed ($rc)"
[ "$(grep -c 'not a regular file' sum.log)" = 1 ] || die "summary did not say it skipped the FIFO"
# The FIFO named itself: refused in one line, exit status 1.
for cmd in "summary" "summary --by rank" "merge -o m2.json"; do
	rc=0
	run $cmd in/rank1.step1.trace.json >/dev/null 2>one.log || rc=$?
	[ $rc = 124 ] && die "$cmd hung on the FIFO named on the command line"
	[ $rc != 0 ] || die "$cmd accepted a FIFO"
	[ "$(wc -l <one.log)" = 1 ] && grep -q 'not a regular file' one.log ||
		{ cat one.log; die "$cmd: not one line saying the FIFO is not a regular file"; }
done
echo "ok"
