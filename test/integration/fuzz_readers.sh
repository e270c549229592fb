#!/usr/bin/env bash
# Issue 43 item 2: every reader fails in one traceprof: line, never a
# traceback.  test/fuzz/fuzz_readers.py replays the crashes found earlier
# (test/fuzz/crashes/, each a test) and then mutates the seeds of
# test/fuzz/corpus/ (real traces of the library, JSON, .json.gz and
# .pftrace, and a synthetic one) for TP_FUZZ_SECONDS (20 by default),
# running summary (--by all|step|rank, --from-events), merge and export on
# each.  The library is not involved: under a sanitizer only the crashes
# are replayed.
. "$TP_TOP/test/lib/common.sh"
py=$(python_where 'import pyarrow')
[ -n "$py" ] || py=$PYTHON
secs=${TP_FUZZ_SECONDS:-20}
if [ -n "${TP_SANITIZER:-}" ]; then
	"$py" "$TP_TOP/test/fuzz/fuzz_readers.py" --replay-only || die "a crash found earlier is back"
	exit 0
fi
"$py" "$TP_TOP/test/fuzz/fuzz_readers.py" --seconds "$secs" || die "the readers' fuzz target found a traceback (above)"
