#!/usr/bin/env bash
# `make check T=NAME` (issue 45 item 5): one way to run one test of any
# kind.  A Check suite and a pytest id given together run, and nothing
# else does (no other suite, no integration test); a shell test runs by its
# name; a name that is no test stops with one traceprof: line naming it and
# the forms, before running anything.  The nested make uses this build
# folder, already built by `make check`.
. "$TP_TOP/test/lib/common.sh"
command -v make >/dev/null || skip "no make"
[ "${TP_SANITIZER:-}" = "" ] || skip "a nested make check here would relink $BUILD without the sanitizer's flags"
mk() { timeout 300 make --no-print-directory -C "$TP_TOP" BUILD="$BUILD" check "$@"; }

# 1. A name that is no test.
rc=0
mk T="no_such_test_xyz" >bad.txt 2>&1 || rc=$?
[ $rc != 0 ] || die "T=no_such_test_xyz succeeded: $(tail -5 bad.txt)"
# (The build's own lines, as the CUDA wrapper generator's, may come first.)
n=$(grep -c '^traceprof: make check' bad.txt || true)
[ "$n" = 1 ] || die "expected one 'traceprof: make check' line, got $n: $(tail -5 bad.txt)"
grep -q '^traceprof: make check T=no_such_test_xyz: no such test; T takes NAME for test/unit/test_NAME.c' bad.txt \
	|| die "the line does not name the test and the forms: $(grep traceprof: bad.txt)"
! grep -q '^PASS' bad.txt || die "tests ran for a bad name: $(grep ^PASS bad.txt)"

# 2. A Check suite and a pytest id: those two, nothing else.
id=test_template.py::test_unknown_values_become_wildcards
mk T="json $id" >two.txt 2>&1 || die "make check T='json $id': $(tail -20 two.txt)"
grep -q '^make check: one test of any kind: make check T=NAME' two.txt || die "make check does not say how: $(head -3 two.txt)"
grep -q '^PASS  unit/test_json ' two.txt || die "the Check suite did not run: $(tail -8 two.txt)"
grep -Eq "^(PASS|SKIP)  python/test/python/$id" two.txt || die "the pytest id did not run: $(tail -8 two.txt)"
n=$(grep -Ec '^(PASS|FAIL|SKIP) ' two.txt)
[ "$n" = 2 ] || die "expected 2 tests, $n ran: $(grep -E '^(PASS|FAIL|SKIP) ' two.txt)"

# 3. A shell test, by name.
mk T="build_preflight" >sh.txt 2>&1 || die "make check T=build_preflight: $(tail -20 sh.txt)"
grep -q '^PASS  integration/build_preflight ' sh.txt || die "the shell test did not run: $(tail -8 sh.txt)"
[ "$(grep -Ec '^(PASS|FAIL|SKIP) ' sh.txt)" = 1 ] || die "more than the named test ran: $(grep -E '^(PASS|FAIL|SKIP) ' sh.txt)"
echo "check_one ok"
