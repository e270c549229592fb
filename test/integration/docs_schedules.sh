#!/usr/bin/env bash
# Issue 42 item 8: every schedule in the README and docs that a user would
# paste ends (repeat=N, N > 0), or says beside it that it repeats forever and
# writes a file per cycle (torch's schedule, which traceprof copies, repeats
# when repeat is absent).  And the check can fail: a copy of the README
# with one repeat removed is reported, with its line.
. "$TP_TOP/test/lib/common.sh"
PY=${PYTHON:-python3}
command -v "$PY" >/dev/null || skip "no $PY"
chk="$TP_TOP/test/lib/doc_schedules.py"
"$PY" "$chk" "$TP_TOP/README.md" "$TP_TOP"/docs/*.md >out.txt ||
	die "schedules that repeat forever without saying so: $(cat out.txt)"
n=$(grep -c -- "--schedule \|TRACEPROF_SCHEDULE=" "$TP_TOP/README.md")
[ "$n" -ge 3 ] || die "the README has $n schedules: the check read nothing"

sed 's/active=3,repeat=1 \\/active=3 \\/' "$TP_TOP/README.md" >README.md
cmp -s README.md "$TP_TOP/README.md" && die "cannot edit the copy"
if "$PY" "$chk" README.md >bad.txt; then
	die "a schedule without repeat was not reported"
fi
grep -q "^README.md:[0-9]*: .*active=3: no repeat" bad.txt || die "wrong report: $(cat bad.txt)"
echo "every schedule in the docs ends or says it repeats"
