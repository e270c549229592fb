#!/usr/bin/env bash
# pip install from source with no CUDA toolkit (issue 42, item 9): setup.py
# builds the library with CUDA 13's headers from NVIDIA's PyPI wheels
# (nvidia-cuda-runtime, -crt, -cupti, nvidia-nvtx: pyproject.toml's build
# requirements) when CUDA_HOME is unset and /usr/local/cuda has no headers.
#   1. gen-cuda-wrappers: with the toolkit, the driver's names taken from
#      cuda.h (the wheels have no driver stub) give the same wrappers as the
#      stub's export list;
#   2. `pip wheel --no-build-isolation` of a copy of the tree, with
#      /usr/local/cuda hidden (an empty folder mounted over it in a user and
#      mount namespace, `unshare -rm`) and CUDA_HOME unset, by the `pipsrc`
#      venv (setuptools, wheel and the four nvidia wheels, installed once by
#      scripts/install-deps: no download per run); the build used the
#      wheels' headers; the wheel installed into a NEW empty venv; its
#      library links no CUDA library; `traceprof run -- true` and the demo
#      program (stand-in CUDA runtime) under `traceprof run` work and write
#      valid traces;
#   3. the failing builds, each one `traceprof: build failed:` line with the
#      fix and nothing of make's output: no headers at all (the `wheel` venv
#      has setuptools and no nvidia wheels), and CUDA_HOME naming a folder
#      without them.
# About 3.5 minutes on 2 shared cores (the library is compiled against the
# wheels' headers).
. "$TP_TOP/test/lib/common.sh"
[ "${TP_SANITIZER:-}" = "" ] || skip "the pip build makes the plain library, not a $TP_SANITIZER one"
need_venv pipsrc 'import setuptools, wheel; from importlib import metadata; [metadata.version(d) for d in ("nvidia-cuda-runtime", "nvidia-cuda-crt", "nvidia-cuda-cupti", "nvidia-nvtx")]' \
	"lacks setuptools, wheel or the nvidia header wheels (scripts/install-deps --venv=pipsrc)"
sys_py=/usr/bin/python3
[ -x "$sys_py" ] || sys_py=$(command -v python3)
"$sys_py" -m venv "$TP_TMP/probe" >/dev/null 2>&1 || skip "$sys_py -m venv does not work (Debian: apt-get install python3-venv)"
rm -rf "$TP_TMP/probe"
# The toolkit's folder, hidden below (a symlink to cuda-13.0 here: the mount
# goes over its target).
cuda_dir=""
[ ! -e /usr/local/cuda ] || cuda_dir=$(realpath /usr/local/cuda)
mkdir empty
if [ -n "$cuda_dir" ]; then
	unshare -rm sh -c "mount --bind '$TP_TMP/empty' '$cuda_dir' && [ ! -e /usr/local/cuda/include/cuda.h ]" \
		>unshare.log 2>&1 || skip "cannot hide /usr/local/cuda (unshare -rm, mount --bind): $(tail -1 unshare.log)"
fi
# nocuda CMD...: CMD without /usr/local/cuda, CUDA_HOME or the suite's
# variables, in $TP_TMP.
nocuda() {
	if [ -n "$cuda_dir" ]; then
		env -i HOME="$HOME" PATH=/usr/bin:/bin LANG=C.UTF-8 "${extra_env[@]}" \
			unshare -rm sh -c 'mount --bind "$0" "$1" && shift && exec "$@"' "$TP_TMP/empty" "$cuda_dir" "$@"
	else
		env -i HOME="$HOME" PATH=/usr/bin:/bin LANG=C.UTF-8 "${extra_env[@]}" "$@"
	fi
}
extra_env=()
want_version=$(cat "$TP_TOP/VERSION")

# 1. As with the wheels (the driver's names from cuda.h, the profiler
#    headers written by the generator), the toolkit gives the same wrappers.
if [ -e "${CUDA_HOME:-/usr/local/cuda}/lib64/stubs/libcuda.so" ]; then
	home=${CUDA_HOME:-/usr/local/cuda}
	"$PYTHON" "$TP_TOP/scripts/gen-cuda-wrappers" --cuda-home "$home" --out gen-stub >/dev/null 2>&1 \
		|| die "gen-cuda-wrappers --cuda-home $home"
	"$PYTHON" "$TP_TOP/scripts/gen-cuda-wrappers" --cuda-home "$home" --as-wheels --out gen-hdr \
		>/dev/null 2>&1 || die "gen-cuda-wrappers --as-wheels"
	for f in cuda_wrappers.c cuda_table.h cuda_functions.txt; do
		diff gen-stub/$f gen-hdr/$f >gen.diff || die "--as-wheels changes $f: $(head -20 gen.diff)"
	done
	[ -e gen-hdr/cudaProfiler.h ] && [ ! -e gen-stub/cudaProfiler.h ] || die "the profiler header shims: $(ls gen-stub gen-hdr)"
	echo "as with the wheels, the toolkit's wrappers are the same ($(grep -c ' driver wrapped' gen-stub/cuda_functions.txt) driver functions)"
fi

# A copy of the source tree without its builds.
mkdir src
tar -C "$TP_TOP" --exclude=./.git --exclude=./build --exclude='./build-*' --exclude=./traceprof_traces \
	--exclude='*.egg-info' --exclude=__pycache__ -cf - . | tar -C src -xf -

# 3a. No headers anywhere: the wheel venv has setuptools but no nvidia wheels.
wheel_py=$(tp_venv_python wheel || true)
if [ -n "$wheel_py" ] && "$wheel_py" -c 'import setuptools, wheel' 2>/dev/null; then
	if nocuda "$wheel_py" -m pip wheel -q --no-deps --no-build-isolation --disable-pip-version-check \
		-w dist-none "$TP_TMP/src" >none.log 2>&1; then
		die "pip wheel with no CUDA headers at all succeeded"
	fi
	grep "traceprof:" none.log >none.lines || die "no traceprof: line in: $(cat none.log)"
	[ "$(wc -l <none.lines)" = 1 ] || die "want one traceprof: line, got: $(cat none.lines)"
	grep -q "traceprof: build failed: no CUDA 13 headers.*pip install with build isolation.*CUDA_HOME" none.lines \
		|| die "the line does not say what is missing and the fix: $(cat none.lines)"
	! grep -qE "^\s*(  CC|gcc|cc) " none.log || die "make's output is shown: $(cat none.log)"
	echo "no headers: $(sed 's/^ *//' none.lines)"
else
	echo "note: no wheel venv: the no-headers case is skipped (scripts/install-deps --with-optional makes it)"
fi

# 3b. CUDA_HOME set to a folder without the headers: it wins, and says so.
extra_env=(CUDA_HOME="$TP_TMP/empty")
if nocuda "$py" -m pip wheel -q --no-deps --no-build-isolation --disable-pip-version-check -w dist-bad "$TP_TMP/src" \
	>bad.log 2>&1; then
	die "pip wheel with CUDA_HOME=$TP_TMP/empty succeeded"
fi
grep "traceprof:" bad.log >bad.lines || die "no traceprof: line in: $(cat bad.log)"
[ "$(wc -l <bad.lines)" = 1 ] || die "want one traceprof: line, got: $(cat bad.lines)"
grep -q "traceprof: build failed: CUDA_HOME=$TP_TMP/empty has no include/cuda.h.*unset it" bad.lines \
	|| die "the line does not name CUDA_HOME and the fix: $(cat bad.lines)"
echo "bad CUDA_HOME: $(sed 's/^ *//' bad.lines)"
extra_env=()

# 2. The build with the wheels' headers, toolkit hidden, CUDA_HOME unset.
nocuda "$py" -m pip wheel -q --no-deps --no-build-isolation --disable-pip-version-check -w dist "$TP_TMP/src" \
	>build.log 2>&1 || die "pip wheel without a toolkit failed: $(cat build.log)"
whl=$(ls dist/traceprof-"$want_version"-py3-none-linux_x86_64.whl) || die "no wheel in: $(ls dist)"
nv=$("$py" -c 'import nvidia, os; print(os.path.realpath(list(nvidia.__path__)[0]))')
head -1 src/build/pip-build.log | grep -q "CUDA_HOME=$nv/cu13 CUDA_RUNTIME_HOME=/usr/local/cuda" \
	|| die "the build did not use the wheels' headers: $(head -1 src/build/pip-build.log)"
grep -q "^/\* Generated by scripts/gen-cuda-wrappers from $nv/cu13/include" src/build/gen/cuda_wrappers.c \
	|| die "the wrappers are not generated from the wheels' headers: $(head -1 src/build/gen/cuda_wrappers.c)"

v=$TP_TMP/venv
"$sys_py" -m venv "$v"
outside=$TP_TMP/elsewhere
mkdir -p "$outside"
in_venv() { (cd "$outside" && env -i HOME="$HOME" PATH="$v/bin:/usr/bin:/bin" LANG=C.UTF-8 "$@"); }
in_venv pip install -q --disable-pip-version-check --no-index --no-deps "$TP_TMP/$whl" >install.log 2>&1 \
	|| die "pip install $whl: $(cat install.log)"
[ "$(in_venv traceprof --version)" = "traceprof $want_version" ] || die "traceprof --version: $(in_venv traceprof --version 2>&1)"
lib=$(in_venv traceprof --lib) || die "traceprof --lib failed"
case "$lib" in "$(realpath "$v")"/*/traceprof/lib/libtraceprof.so) ;; *) die "traceprof --lib is $lib, not in the venv" ;; esac
ldd "$lib" >ldd.txt 2>&1 || die "ldd $lib: $(cat ldd.txt)"
! grep -q "not found" ldd.txt || die "ldd $lib: $(cat ldd.txt)"
! grep -qE "libcud|libcupti|libnvToolsExt|libnvtx" ldd.txt || die "the library links CUDA's libraries: $(cat ldd.txt)"
# The library loads and the command runs a program.
in_venv traceprof run -q --folder "$outside/true" -- true >true.out 2>true.err \
	|| die "traceprof run -- true: $(cat true.err)"
[ ! -s true.err ] || die "traceprof run -- true: unexpected messages: $(cat true.err)"
in_venv traceprof run -q --folder "$outside/demo" --schedule wait=1,warmup=1,active=3 \
	-- "$BUILD/test/prog_demo_train" 8 >demo.out 2>demo.err || die "demo under traceprof run: $(cat demo.err)"
[ ! -s demo.err ] || die "demo: unexpected messages: $(cat demo.err)"
check_trace "$outside"/demo/*.json >/dev/null || die "demo traces"
"$PYTHON" - "$outside"/demo/*.json <<'PY' || die "the demo's CUDA calls are not recorded"
import json, sys
names = {e.get("name") for p in sys.argv[1:] for e in json.load(open(p))["traceEvents"] if e.get("ph") == "X"}
want = {"cudaMemcpyAsync", "cudaMemsetAsync", "cudaStreamSynchronize", "cudaDeviceSynchronize"}
assert want <= names, (sorted(want - names), sorted(n for n in names if n))
print("demo with the library built on the nvidia headers: %s recorded" % ", ".join(sorted(want)))
PY
echo "pip from source without a toolkit ok"
