#!/usr/bin/env bash
# make install / uninstall into a temporary PREFIX, and staged with DESTDIR
# (issue 45 item 2: pip is the one install route).  make install runs
# `pip install --prefix`: the package goes to PREFIX's site-packages with a
# pip RECORD, bin/traceprof is pip's console script (no sed-substituted
# launcher), and the C files (library, header, pkg-config) go beside it;
# make uninstall removes exactly what it installed.
. "$TP_TOP/test/lib/common.sh"
command -v make >/dev/null || skip "make not installed"
# A Python with pip and the build backend (setuptools 61+, and wheel or
# setuptools 70.1+), so that pip builds offline: the wheel venv's, else
# $PYTHON or Debian's.
tools='import importlib.util, setuptools as s; assert importlib.util.find_spec("pip"); v = tuple(int(x) for x in s.__version__.split(".")[:2]); assert v >= (61, 0); v >= (70, 1) or __import__("wheel")'
ipy=""
for cand in "$(tp_venv_python wheel)" "$PYTHON" /usr/bin/python3; do
	[ -n "$cand" ] && "$cand" -c "$tools" 2>/dev/null && { ipy=$cand; break; }
done
[ -n "$ipy" ] || skip "no Python with pip, setuptools 61+ and wheel (scripts/install-deps --venv=wheel makes one)"

pfx=$TP_TMP/prefix
make -s -C "$TP_TOP" BUILD="$BUILD" PYTHON="$ipy" install PREFIX="$pfx" >install.log 2>&1 || { cat install.log; die "make install failed"; }
site=$(ls -d "$pfx"/lib/python3*/*-packages 2>/dev/null | head -1)
[ -n "$site" ] || die "no site-packages under $pfx: $(find "$pfx" | head -20)"
ls "$site"/traceprof-*.dist-info/RECORD >/dev/null 2>&1 || die "no pip RECORD in $site (not installed by pip)"
py=${site#"$pfx"/}/traceprof
for f in lib/libtraceprof.so include/traceprof.h bin/traceprof lib/pkgconfig/traceprof.pc \
	$py/__init__.py $py/VERSION $py/cli/main.py $py/traces/reader.py $py/pyboot/sitecustomize.py \
	$py/pyboot/traceprof_torch.py $py/lib/libtraceprof.so $py/include/traceprof.h; do
	[ -f "$pfx/$f" ] || die "not installed: $f"
done
! grep -q "PYDIR" "$pfx/bin/traceprof" || die "bin/traceprof is the old sed-made launcher"
grep -q "traceprof.cli.main" "$pfx/bin/traceprof" || die "bin/traceprof is not pip's console script: $(cat "$pfx/bin/traceprof")"
# A temporary PREFIX is not on the Python's path: make install says so.
grep -q "does not search $site" install.log || die "make install did not name the folder to add: $(cat install.log)"
export PYTHONPATH=$site
[ "$("$pfx/bin/traceprof" --version)" = "traceprof $(cat "$TP_TOP/VERSION")" ] || die "installed --version"
pc=$(PKG_CONFIG_PATH=$pfx/lib/pkgconfig pkg-config --cflags --libs traceprof) || die "pkg-config failed"
case "$pc" in *-ltraceprof*) ;; *) die "pkg-config file: $pc" ;; esac
# The installed command finds the package's library (traceprof/lib).
lib=$(env -u TRACEPROF_LIB "$pfx/bin/traceprof" --lib) || die "installed --lib failed"
[ "$lib" = "$(realpath "$site/traceprof/lib/libtraceprof.so")" ] || die "installed --lib: $lib"
env -u TRACEPROF_LIB "$pfx/bin/traceprof" run --folder "$PWD/t" -- "$BUILD/test/prog_demo_train" 2 1 >/dev/null 2>err.txt \
	|| { cat err.txt; die "installed run failed"; }
ls t/*.json >/dev/null || die "installed run wrote no trace"
"$PYTHON" -c 'import traceprof; traceprof.step(); print(traceprof.__version__)' >ver.txt || die "installed module"
[ "$(cat ver.txt)" = "$(cat "$TP_TOP/VERSION")" ] || die "installed traceprof.__version__: $(cat ver.txt)"
unset PYTHONPATH
make -s -C "$TP_TOP" BUILD="$BUILD" PYTHON="$ipy" uninstall PREFIX="$pfx" >>install.log 2>&1 || die "make uninstall failed"
left=$(find "$pfx" -type f; [ ! -d "$site/traceprof" ] || echo "$site/traceprof/")
[ -z "$left" ] || die "left after uninstall: $left"
echo "install ok"

# Staged (a packager's DESTDIR): every file under DESTDIR/PREFIX, none that
# names DESTDIR, and uninstall with the same DESTDIR removes them all.
stage=$TP_TMP/stage
make -s -C "$TP_TOP" BUILD="$BUILD" PYTHON="$ipy" install PREFIX=/opt/tp DESTDIR="$stage" >stage.log 2>&1 \
	|| { cat stage.log; die "make install DESTDIR failed"; }
[ -z "$(find "$stage" -type f -not -path "$stage/opt/tp/*")" ] || die "files outside DESTDIR/PREFIX: $(find "$stage" -type f -not -path "$stage/opt/tp/*")"
[ -f "$stage/opt/tp/bin/traceprof" ] && [ -f "$stage/opt/tp/lib/libtraceprof.so" ] || die "staged install incomplete: $(find "$stage" -type f | head)"
ls "$stage"/opt/tp/lib/python3*/*-packages/traceprof/cli/main.py >/dev/null || die "staged package missing"
named=$(grep -rl --exclude='*.pyc' --exclude='*.so' "$stage" "$stage" || true)
[ -z "$named" ] || die "staged files name DESTDIR: $named"
make -s -C "$TP_TOP" BUILD="$BUILD" PYTHON="$ipy" uninstall PREFIX=/opt/tp DESTDIR="$stage" >>stage.log 2>&1 || die "make uninstall DESTDIR failed"
[ -z "$(find "$stage" -type f)" ] || die "left after staged uninstall: $(find "$stage" -type f)"
echo "staged install ok"
