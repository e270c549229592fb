#!/usr/bin/env bash
# The library carries its version (preload/version.c: a tagged string that
# the command reads from the file) and `traceprof run` compares it with its
# own (issue 33 item 6): a library of another version, or one without the
# tag, gives exactly one `traceprof:` line naming both versions, and the run
# goes on; the library of the same build gives none.  Also `traceprof --lib`
# prints the library `run` preloads (TRACEPROF_LIB first).
. "$TP_TOP/test/lib/common.sh"
[ "${TP_SANITIZER:-}" = "" ] || skip "the check is in the command (Python), which the sanitizers do not instrument; the plain suite runs it"
T="$BUILD/traceprof"
mine=$(cat "$TP_TOP/VERSION")
prog="$BUILD/test/prog_demo_train"

# --lib: the build's library, or TRACEPROF_LIB's.
[ "$(env -u TRACEPROF_LIB "$T" --lib)" = "$(realpath "$TP_LIB")" ] || die "--lib: $("$T" --lib 2>&1)"
cp "$TP_LIB" same.so
[ "$(TRACEPROF_LIB=$PWD/same.so "$T" --lib)" = "$PWD/same.so" ] || die "--lib with TRACEPROF_LIB"

# The same version: no message.
TRACEPROF_LIB=$PWD/same.so "$T" run -q --folder "$PWD/t0" -- "$prog" 2 1 >/dev/null 2>err0.txt \
	|| die "run failed: $(cat err0.txt)"
[ ! -s err0.txt ] || die "same version: unexpected messages: $(cat err0.txt)"

# Copies whose tag says another version (same length: every digit + 1), or
# has no tag (renamed); both still load and record.
"$PYTHON" - "$TP_LIB" "$mine" <<'PY' || die "cannot patch the library's version tag"
import sys
lib, mine = sys.argv[1], sys.argv[2]
data = open(lib, "rb").read()
tag = b"\0traceprof-version=" + mine.encode() + b"\0"
assert data.count(tag) == 1, "the library has %d version tags for %s" % (data.count(tag), mine)
other = "".join(str((int(c) + 1) % 10) if c.isdigit() else c for c in mine)
open("other.so", "wb").write(data.replace(tag, b"\0traceprof-version=" + other.encode() + b"\0"))
open("untagged.so", "wb").write(data.replace(tag, b"\0traceprof-VERSION=" + mine.encode() + b"\0"))
open("other.txt", "w").write(other)
PY
other=$(cat other.txt)
for case in other untagged; do
	TRACEPROF_LIB=$PWD/$case.so "$T" run -q --folder "$PWD/t-$case" -- "$prog" 2 1 >/dev/null 2>err.txt \
		|| die "$case: run failed: $(cat err.txt)"
	[ "$(grep -c '^traceprof:' err.txt)" = 1 ] && [ "$(wc -l <err.txt)" = 1 ] \
		|| die "$case: want one traceprof: line, got: $(cat err.txt)"
	grep -q "this command is traceprof $mine" err.txt || die "$case: the line lacks the command's version: $(cat err.txt)"
	case $case in
	other) grep -q "is traceprof $other but" err.txt || die "other: the line lacks the library's version: $(cat err.txt)" ;;
	untagged) grep -q "no version tag" err.txt || die "untagged: $(cat err.txt)" ;;
	esac
	ls "t-$case"/*.json >/dev/null 2>&1 || die "$case: the run recorded nothing"
	echo "$case: $(cat err.txt)"
done
echo "version skew ok"
