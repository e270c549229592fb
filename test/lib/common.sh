# Helpers for integration tests (sourced).  Each test runs in its own
# temporary folder $TP_TMP; $TP_LIB is the library under test, $BUILD the
# build folder, $TP_TOP the source tree.
set -euo pipefail
cd "$TP_TMP"

# Fails the test with a message.
die() { echo "FAIL: $*" >&2; exit 1; }
# Skips the test with a reason (exit 77, reported as SKIP by test/run-all).
skip() { echo "SKIP: $*"; exit 77; }

# Runs a command with the library preloaded.
traced() { LD_PRELOAD="$TP_LIB" "$@"; }

# Validates every trace file given with the real JSON parser and the trace
# checker (test/lib/tracecheck.py), printing a summary.
check_trace() { "$PYTHON" "$TP_TOP/test/lib/tracecheck.py" "$@"; }
