#!/usr/bin/env bash
# The files written from common/options.def (scripts/gen-options) are the
# ones checked in: traceprof run's options, the variable tables of the docs.
# And the check can fail: a copy with one edited row is reported stale.
. "$TP_TOP/test/lib/common.sh"
PY=${PYTHON:-python3}
command -v "$PY" >/dev/null || skip "no $PY"

"$PY" "$TP_TOP/scripts/gen-options" --check 2>check.err ||
	die "checked-in files differ from common/options.def: $(cat check.err)"
echo "generated files up to date"

# A copy of the inputs and outputs, with one help text changed in the table.
mkdir -p copy/common copy/scripts copy/python/traceprof/cli copy/docs
cp "$TP_TOP/scripts/gen-options" copy/scripts/
cp "$TP_TOP/common/options.def" copy/common/
cp "$TP_TOP/python/traceprof/cli/options.py" copy/python/traceprof/cli/
cp "$TP_TOP/docs/configuration.md" "$TP_TOP/docs/command.md" copy/docs/
"$PY" copy/scripts/gen-options --check || die "an unchanged copy is reported stale"
sed -i 's/"flush thread period in ms"/"flush thread period in milliseconds"/' copy/common/options.def
grep -q "period in milliseconds" copy/common/options.def || die "cannot edit the copy's table"
if "$PY" copy/scripts/gen-options --check 2>stale.err; then
	die "an edited row is not reported"
fi
for f in python/traceprof/cli/options.py docs/command.md; do
	grep -q "$f differs" stale.err || die "$f not named as stale: $(cat stale.err)"
done
"$PY" copy/scripts/gen-options >/dev/null || die "gen-options failed on the copy"
"$PY" copy/scripts/gen-options --check || die "still stale after gen-options"
grep -q "period in milliseconds" copy/python/traceprof/cli/options.py || die "options.py not rewritten"
echo "an edited row is reported, and gen-options rewrites it"

# Every variable has an option of traceprof run (every row names a flag).
rows=$(grep -c '^TP_OPT_[A-Z]*("TRACEPROF_' "$TP_TOP/common/options.def")
opts=$("$PY" -c "import sys; sys.path.insert(0, sys.argv[1]); from traceprof.cli.options import RUN_OPTIONS; print(len(RUN_OPTIONS))" "$TP_TOP/python")
[ "$rows" = "$opts" ] || die "$rows rows in options.def, $opts options of traceprof run"
echo "$rows rows, $opts options"
