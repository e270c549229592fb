# Helpers for integration tests (sourced).  Each test runs in its own
# temporary folder $TP_TMP; $TP_LIB is the library under test, $BUILD the
# build folder, $TP_TOP the source tree.
set -euo pipefail
cd "$TP_TMP"

# The live files (docs/live.md, `<trace folder>/.live/`) are on by default;
# the tests of other features list their trace folders file by file (find,
# os.walk), so they run without them.  The live tests (live_*.sh) and the
# rel_own_* ones unset it.  TP_TEST_LIVE=1 runs every test with them on (to
# find what they break; the listings then fail).
export TRACEPROF_LIVE=${TP_TEST_LIVE:-0}
# live_count FOLDER: how many live files FOLDER/.live holds (not the
# hidden temporary ones being renamed onto them).
live_count() { ls -A "$1/.live" 2>/dev/null | grep -vc '^\.' || true; }

# Fails the test with a message.
die() { echo "FAIL: $*" >&2; exit 1; }
# Skips the test with a reason (exit 77, reported as SKIP by test/run-all).
skip() { echo "SKIP: $*"; exit 77; }

# The LD_PRELOAD value that loads the library under test.  Under a sanitizer
# build (make check-asan / check-tsan set TP_SANITIZER=asan|tsan) the
# sanitizer's runtime must come first in the initial library list.
tp_preload_value() {
	case "${TP_SANITIZER:-}" in
	asan) echo "$(${CC:-gcc} -print-file-name=libasan.so):$TP_LIB" ;;
	tsan) echo "$(${CC:-gcc} -print-file-name=libtsan.so):$TP_LIB" ;;
	*) echo "$TP_LIB" ;;
	esac
}

# The same value, exported for the Python parts of tests: they set
# LD_PRELOAD=os.environ["TP_PRELOAD"] and never build it themselves.
TP_PRELOAD="$(tp_preload_value)"
export TP_PRELOAD

# The trace files' extension: rel_perfetto.sh runs the reliability tests
# again with TRACEPROF_FORMAT=perfetto in their environment.
TP_EXT=json
[ "${TRACEPROF_FORMAT:-}" != perfetto ] || TP_EXT=pftrace
export TP_EXT

# Runs a command with the library preloaded.
traced() { LD_PRELOAD="$TP_PRELOAD" "$@"; }

# Validates every trace file given with the real JSON parser and the trace
# checker (test/lib/tracecheck.py), printing a summary.
check_trace() { "$PYTHON" "$TP_TOP/test/lib/tracecheck.py" "$@"; }

# tp_venv_python NAME: the python of the venv that scripts/install-deps
# --with-optional made (prints nothing when it is missing).
tp_venv_python() {
	local p="${TP_VENVS:-${XDG_CACHE_HOME:-$HOME/.cache}/traceprof/venvs}/$1/bin/python"
	[ -x "$p" ] && echo "$p"
}

# need_venv NAME CODE WHY: sets $py to the venv NAME's python, or skips the
# test when the venv is missing or its python cannot run CODE (saying WHY).
need_venv() {
	py=$(tp_venv_python "$1") || skip "no $1 venv (scripts/install-deps --with-optional makes it)"
	"$py" -c "$2" 2>/dev/null || skip "$py: $3"
}

# The first Python, of the torch venv's (scripts/install-deps
# --with-optional), $PYTHON and Debian's /usr/bin/python3, for which the code
# given succeeds.  Prints nothing when none does.
python_where() {
	local cand
	for cand in "$(tp_venv_python torch)" "$PYTHON" /usr/bin/python3; do
		[ -n "$cand" ] || continue
		if "$cand" -c "$1" >/dev/null 2>&1; then
			echo "$cand"
			return
		fi
	done
}
