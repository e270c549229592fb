#!/usr/bin/env bash
# `make demo` and `make check` on a machine that lacks a package (issue 45
# item 6, which replaced issue 33 item 5's installing build): the Makefile
# only reports what is missing, with the fix, and never installs (`make
# deps` does).  A pkg-config stand-in reports `check` missing until the
# state says it was installed; the install-deps stand-in (TP_INSTALL_DEPS)
# records its calls.  `make check` is exercised through its check-deps step
# (the suite itself is not run again).  Also the real install-deps --check:
# it installs nothing, needs no root, and names the missing venvs, and
# those that lack a module.
. "$TP_TOP/test/lib/common.sh"
command -v make >/dev/null || skip "make not installed"
command -v pkg-config >/dev/null || skip "no pkg-config (the stand-in passes through to it)"
[ "${TP_SANITIZER:-}" = "" ] || skip "make demo here would relink $BUILD without the sanitizer's flags"
real_pc=$(command -v pkg-config)
state=$TP_TMP/state
mkdir -p stubs "$state"
cat >stubs/pkg-config <<SH
#!/bin/sh
# 'check' is missing until the install-deps stand-in has "installed" it.
if [ ! -e "$state/installed" ]; then
	for a; do [ "\$a" = check ] && exit 1; done
fi
exec "$real_pc" "\$@"
SH
cat >stubs/install-deps <<SH
#!/bin/sh
echo "install-deps \$*" >>"$state/calls"
case " \$* " in
*" --check "*) [ -e "$state/optional" ] && exit 0; echo "missing: venv:torch"; exit 1 ;;
esac
echo "traceprof: installing: check (stand-in)" >&2
touch "$state/installed"
case " \$* " in *" --with-optional "*) touch "$state/optional" ;; esac
SH
chmod +x stubs/*
export PATH="$TP_TMP/stubs:$PATH" TP_INSTALL_DEPS="$TP_TMP/stubs/install-deps" DEMO_OUT="$TP_TMP/demo"
mk() { make -C "$TP_TOP" BUILD="$BUILD" "$@"; }
calls() { cat "$state/calls" 2>/dev/null; }

# 1. Reading the Makefile installs nothing, the package missing or not.
mk -n demo >n-demo.txt 2>&1 || die "make -n demo: $(cat n-demo.txt)"
mk -n check >n-check.txt 2>&1 || die "make -n check: $(cat n-check.txt)"
[ -z "$(calls)" ] || die "make -n ran install-deps: $(calls)"

# 2. make demo with 'check' missing: no install-deps, one line naming what
# is missing and the fix, nothing compiled.
rc=0
mk demo >demo.txt 2>&1 || rc=$?
[ $rc != 0 ] || die "make demo went on with a package missing: $(tail -5 demo.txt)"
[ -z "$(calls)" ] || die "make demo ran install-deps: $(calls)"
grep -q "^traceprof: missing build dependencies (pkg-config cannot find: check); run 'make deps'" demo.txt \
	|| die "make demo did not say what was missing and the fix: $(head -5 demo.txt)"
n=$(grep -c '^traceprof:' demo.txt || true)
[ "$n" = 1 ] || die "expected one traceprof: line, got $n: $(cat demo.txt)"
! grep -q 'error:' demo.txt || die "a compiler error: $(cat demo.txt)"

# 3. Everything present (as after `make deps`): make demo calls nothing.
touch "$state/installed"
mk demo >demo2.txt 2>&1 || die "make demo: $(tail -5 demo2.txt)"
[ -z "$(calls)" ] || die "make demo with everything present ran: $(calls)"
! grep -q "missing" demo2.txt || die "make demo with everything present: $(grep missing demo2.txt)"
grep -q "== step durations" demo2.txt || die "the demo did not run: $(tail -5 demo2.txt)"

# 4. make check's step: the venvs missing -> --check only, which says what
# and the fix and goes on; present -> --check only, silent.
rm -f "$state/calls"
mk check-deps >cd.txt 2>&1 || die "make check-deps: $(cat cd.txt)"
[ "$(calls)" = "install-deps --check --with-optional" ] \
	|| die "check-deps with a venv missing: calls '$(calls)'"
grep -q "make check: the tests need what is missing: venv:torch; run '$TP_INSTALL_DEPS --with-optional'" cd.txt \
	|| die "check-deps said: $(cat cd.txt)"
touch "$state/optional"
rm -f "$state/calls"
mk check-deps >cd2.txt 2>&1 || die "make check-deps: $(cat cd2.txt)"
[ "$(calls)" = "install-deps --check --with-optional" ] || die "check-deps with all present: calls '$(calls)'"
[ ! -s cd2.txt ] || ! grep -q traceprof: cd2.txt || die "check-deps with all present said: $(cat cd2.txt)"

# 5. The real script's --check: no install, exit 1 and the venvs named when
# TP_VENVS is empty.
if command -v dpkg-query >/dev/null; then
	set +e
	m=$(TP_VENVS="$TP_TMP/novenvs" "$TP_TOP/scripts/install-deps" --check --with-optional 2>err.txt)
	rc=$?
	set -e
	[ $rc = 1 ] || die "install-deps --check with no venvs: exit $rc ($m $(cat err.txt))"
	case "$m" in *venv:torch*venv:wheel*) ;; *) die "install-deps --check: '$m'" ;; esac
	[ ! -s err.txt ] || die "install-deps --check wrote: $(cat err.txt)"
	[ ! -e "$TP_TMP/novenvs" ] || die "install-deps --check created the venvs folder"
	# A venv that exists but lacks a module its check imports is missing too.
	mkdir -p "$TP_TMP/partial/wheel/bin"
	ln -s "$(command -v python3)" "$TP_TMP/partial/wheel/bin/python"
	if ! python3 -c 'import auditwheel' 2>/dev/null; then
		m=$(TP_VENVS="$TP_TMP/partial" "$TP_TOP/scripts/install-deps" --check --with-optional) \
			&& die "install-deps --check: a wheel venv without auditwheel passed"
		case "$m" in *venv:wheel*) ;; *) die "install-deps --check with a partial venv: '$m'" ;; esac
	fi
fi
echo "autodeps ok"
