#!/usr/bin/env bash
# The paths a reader follows exist, and no source file is over 600 lines
# (issue 45 items 3, 5 and 7): scripts/check-tree over the tree passes, and
# over a small made-up tree with one of each mistake (a comment naming a
# file that is gone, a doc naming a folder that is gone, docs/DESIGN.md
# naming a bare file and a function that are gone, a 601-line source, and
# 601-line scripts without an extension whose #! line runs Python or a
# shell) it fails with one line for each, naming the file and line; a
# 601-line file without an extension or a #! line is no source.
. "$TP_TOP/test/lib/common.sh"
"$PYTHON" "$TP_TOP/scripts/check-tree" --root "$TP_TOP" >ok.txt 2>bad.txt || die "the tree: $(cat bad.txt)"
cat ok.txt

mkdir -p t/docs t/preload t/format t/collector
printf '/* The entry point (preload/gone_x86_64.S) calls preload/here.c. */\n' >t/preload/here.c
printf 'int tp_here(void);\n' >t/preload/here.h
printf '# Docs\n\nSee `scripts/tpcli/` and `preload/here.c`, `preload/here` and `preload/he*.c`.\n' >t/docs/README.md
printf '# Design\n\n1. preload/here.c, then cupti_gone.c, then here.h.\n2. `tp_here()`, then `tp_gone()`.\n' >t/docs/DESIGN.md
seq 601 | sed 's|^|// |' >t/collector/long.c
seq 600 | sed 's|^|// |' >t/collector/fits.c
mkdir -p t/scripts t/bench
{ echo '#!/usr/bin/env python3'; seq 600 | sed 's|^|# |'; } >t/scripts/gen-long
{ echo '#!/bin/sh'; seq 600 | sed 's|^|# |'; } >t/bench/runner
seq 601 >t/bench/numbers
if "$PYTHON" "$TP_TOP/scripts/check-tree" --root t >ok2.txt 2>err.txt; then
	die "a tree with seven mistakes passed: $(cat ok2.txt)"
fi
grep -q '^preload/here.c:1: names preload/gone_x86_64.S, which does not exist' err.txt || die "the comment's path: $(cat err.txt)"
grep -q '^docs/README.md:3: names scripts/tpcli/, which does not exist' err.txt || die "the doc's folder: $(cat err.txt)"
grep -q '^docs/DESIGN.md:3: names the file cupti_gone.c' err.txt || die "DESIGN.md's bare name: $(cat err.txt)"
grep -q '^docs/DESIGN.md:4: names tp_gone, which no source defines or uses' err.txt || die "DESIGN.md's identifier: $(cat err.txt)"
grep -q '^collector/long.c: 601 lines, over 600' err.txt || die "the long file: $(cat err.txt)"
n=$(wc -l <err.txt)
grep -q '^scripts/gen-long: 601 lines, over 600' err.txt || die "the long Python script: $(cat err.txt)"
grep -q '^bench/runner: 601 lines, over 600' err.txt || die "the long shell script: $(cat err.txt)"
! grep -q '^bench/numbers' err.txt || die "a file without #! counted as a source: $(cat err.txt)"
[ "$n" = 7 ] || die "expected 7 lines, got $n: $(cat err.txt)"
echo "the made-up tree: $(wc -l <err.txt) violations, as planted"
