#!/usr/bin/env bash
# make install / uninstall into a temporary PREFIX.
. "$TP_TOP/test/lib/common.sh"
command -v make >/dev/null || skip "make not installed"
pfx=$TP_TMP/prefix
make -s -C "$TP_TOP" BUILD="$BUILD" install PREFIX="$pfx" >install.log 2>&1 || { cat install.log; die "make install failed"; }
py=lib/python3/dist-packages/traceprof
for f in lib/libtraceprof.so include/traceprof.h bin/traceprof lib/pkgconfig/traceprof.pc \
	$py/__init__.py $py/VERSION $py/cli/main.py $py/traces/reader.py $py/pyboot/sitecustomize.py \
	$py/pyboot/traceprof_torch.py; do
	[ -f "$pfx/$f" ] || die "not installed: $f"
done
[ "$("$pfx/bin/traceprof" --version)" = "traceprof $(cat "$TP_TOP/VERSION")" ] || die "installed --version"
pc=$(PKG_CONFIG_PATH=$pfx/lib/pkgconfig pkg-config --cflags --libs traceprof) || die "pkg-config failed"
case "$pc" in *-ltraceprof*) ;; *) die "pkg-config file: $pc" ;; esac
# The installed command finds the installed library (../lib).
env -u TRACEPROF_LIB "$pfx/bin/traceprof" run --folder "$PWD/t" -- "$BUILD/test/prog_demo_train" 2 1 >/dev/null 2>err.txt \
	|| { cat err.txt; die "installed run failed"; }
ls t/*.json >/dev/null || die "installed run wrote no trace"
PYTHONPATH=$pfx/lib/python3/dist-packages "$PYTHON" -c 'import traceprof; traceprof.step(); print(traceprof.__version__)' \
	>ver.txt || die "installed module"
[ "$(cat ver.txt)" = "$(cat "$TP_TOP/VERSION")" ] || die "installed traceprof.__version__: $(cat ver.txt)"
make -s -C "$TP_TOP" BUILD="$BUILD" uninstall PREFIX="$pfx" >>install.log 2>&1 || die "make uninstall failed"
left=$(find "$pfx" -type f; [ ! -d "$pfx/$py" ] || echo "$pfx/$py/")
[ -z "$left" ] || die "left after uninstall: $left"
echo "install ok"
