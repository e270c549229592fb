# The build's own checks (Makefile, "preflight"; issue 21 items 1 and 4):
# - reading the Makefile never installs anything: `make -n uninstall` and
#   `make -n clean` run no apt-get even when pkg-config finds nothing;
# - a build with missing libraries installs nothing (issue 45 item 6): it
#   stops before compiling with one line that names them and the fix
#   (`make deps`), never with a compiler error;
# - `make deps` installs (through scripts/install-deps);
# - a build without a CUDA toolkit (CUDA_HOME=/nonexistent) stops before
#   compiling with one traceprof: line naming CUDA_HOME and what to install,
#   never with a compiler error.
# Nothing is compiled: every build here goes into its own empty folder and
# must stop at the check.  apt-get, sudo, dpkg-query and pkg-config are
# stand-in scripts on PATH that log their calls.
. "$TP_TOP/test/lib/common.sh"
command -v make >/dev/null || skip "no make"

fake="$TP_TMP/fakebin"
log="$TP_TMP/calls.log"
mkdir -p "$fake"
: >"$log"
for tool in apt-get sudo; do
	printf '#!/bin/sh\necho "%s $*" >>"%s"\n[ "%s" = sudo ] && exec "$@"\nexit 0\n' \
		"$tool" "$log" "$tool" >"$fake/$tool"
done
# dpkg-query: every package is missing, so install-deps would install.
printf '#!/bin/sh\necho "dpkg-query $*" >>"%s"\nexit 1\n' "$log" >"$fake/dpkg-query"
# pkg-config: finds nothing (a fresh machine).
printf '#!/bin/sh\nexit 1\n' >"$fake/pkg-config"
chmod +x "$fake"/*
# install-deps also makes the pytest venv (make check-python's): a stand-in
# whose python "imports" everything, so that it is found ready and nothing
# goes to PyPI.
export TP_VENVS="$TP_TMP/venvs"
mkdir -p "$TP_VENVS/pytest/bin"
printf '#!/bin/sh\nexit 0\n' >"$TP_VENVS/pytest/bin/python"
chmod +x "$TP_VENVS/pytest/bin/python"

mk() { make --no-print-directory -C "$TP_TOP" "$@"; }

# 1. Targets that build nothing run no installer, even with nothing found.
for t in "-n uninstall" "-n clean" "-n install" "-n all" "-n demo"; do
	# shellcheck disable=SC2086
	PATH="$fake:$PATH" mk BUILD="$TP_TMP/b1" $t >"$TP_TMP/out1" 2>&1 || die "make $t failed: $(cat "$TP_TMP/out1")"
	[ ! -s "$log" ] || die "make $t ran: $(cat "$log")"
done
echo "ok: make -n uninstall/clean/install/all/demo install nothing"

# 2. A build with the libraries missing runs no installer, and stops with
# one line naming them and the fix.
rc=0
PATH="$fake:$PATH" mk BUILD="$TP_TMP/b2" all >"$TP_TMP/out2" 2>&1 || rc=$?
[ $rc != 0 ] || die "the build went on without its libraries: $(cat "$TP_TMP/out2")"
[ ! -s "$log" ] || die "the build ran an installer: $(cat "$log")"
n=$(grep -c '^traceprof:' "$TP_TMP/out2" || true)
[ "$n" = 1 ] || die "expected one traceprof: line, got $n: $(cat "$TP_TMP/out2")"
grep -q "^traceprof: missing build dependencies (pkg-config cannot find: check libunwind libzstd zlib); run 'make deps'" \
	"$TP_TMP/out2" || die "the line does not name the libraries and the fix: $(cat "$TP_TMP/out2")"
! grep -q 'error:' "$TP_TMP/out2" || die "a compiler error: $(cat "$TP_TMP/out2")"
[ ! -d "$TP_TMP/b2/obj" ] || die "objects were compiled before the check"
echo "ok: missing libraries -> $(grep '^traceprof:' "$TP_TMP/out2")"

# 3. make deps installs, through scripts/install-deps.
PATH="$fake:$PATH" mk deps >"$TP_TMP/out3" 2>&1 || die "make deps failed: $(cat "$TP_TMP/out3")"
grep -q '^apt-get install .*libunwind-dev' "$log" || die "make deps installed nothing: $(cat "$log")"
echo "ok: make deps -> $(grep '^apt-get install' "$log" | head -1)"

# 4. No toolkit: one line naming CUDA_HOME, no compiler error.
rc=0
mk BUILD="$TP_TMP/b4" CUDA_HOME=/nonexistent all >"$TP_TMP/out4" 2>&1 || rc=$?
[ $rc != 0 ] || die "built without a toolkit?: $(cat "$TP_TMP/out4")"
n=$(grep -c '^traceprof:' "$TP_TMP/out4" || true)
[ "$n" = 1 ] || die "expected one traceprof: line, got $n: $(cat "$TP_TMP/out4")"
grep '^traceprof:' "$TP_TMP/out4" | grep -q 'CUDA_HOME=/nonexistent' || die "CUDA_HOME not named: $(cat "$TP_TMP/out4")"
grep '^traceprof:' "$TP_TMP/out4" | grep -q 'install the CUDA 13 toolkit' || die "no fix named: $(cat "$TP_TMP/out4")"
! grep -q 'error:' "$TP_TMP/out4" || die "a compiler error: $(cat "$TP_TMP/out4")"
[ ! -d "$TP_TMP/b4/obj" ] || die "objects were compiled before the check"
echo "ok: no toolkit -> $(grep '^traceprof:' "$TP_TMP/out4")"
