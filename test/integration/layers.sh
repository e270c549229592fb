#!/usr/bin/env bash
# The floors of the C library (docs/DESIGN.md, "Layers"): no call or
# include runs up preload/ -> preload/resolve/ -> collector/ -> format/ ->
# common/, and no loop of calls joins two files but the few allowed.
# scripts/check-layers reads the includes from the sources and the calls
# from the build's objects; small trees with a call and an include up, a
# loop inside one folder and a call from preload/resolve/ back into
# preload/ show it can fail, and one with an allowed loop that it passes
# (and fails once that loop is cut: the allowlist only shrinks).
. "$TP_TOP/test/lib/common.sh"
command -v nm >/dev/null || skip "nm not installed"
"$PYTHON" "$TP_TOP/scripts/check-layers" --root "$TP_TOP" --obj "$BUILD/obj" >ok.txt 2>bad.txt ||
	die "the tree breaks its floors: $(cat bad.txt)"
cat ok.txt

# A tree that breaks them: common/ includes and calls collector/, which
# calls common/ back (a loop across two folders).
mkdir -p t/preload t/collector t/format t/common obj/collector obj/common
cat >t/collector/up.h <<'EOC'
int tp_up(int);
EOC
cat >t/collector/up.c <<'EOC'
int tp_low(int);
int tp_up(int x) { return tp_low(x) + 1; }
EOC
cat >t/common/low.c <<'EOC'
#include "collector/up.h"
int tp_low(int x) { return x > 0 ? tp_up(x - 1) : 0; }
EOC
cc -c -I t -o obj/collector/up.o t/collector/up.c || die "cannot compile the bad tree"
cc -c -I t -o obj/common/low.o t/common/low.c || die "cannot compile the bad tree"
if "$PYTHON" "$TP_TOP/scripts/check-layers" --root t --obj obj 2>err.txt; then
	die "a call and an include up the floors passed"
fi
for want in "include up: common/low.c includes collector/up.h" \
	"call up: common/low calls collector/up (tp_up)" \
	"loop across collector+common: collector/up common/low"; do
	grep -qF "$want" err.txt || die "not reported: $want; got: $(cat err.txt)"
done
echo "a bad tree fails: $(wc -l <err.txt) lines"

# A loop inside one folder (preload/), a call from preload/resolve/ up into
# capture, and an object whose source is gone (a moved file's leftover,
# which must not count).
mkdir -p l/preload/resolve l/collector l/format l/common lo/preload/resolve
cat >l/preload/a.c <<'EOC'
int tp_b(int);
int tp_a(int x) { return x > 0 ? tp_b(x - 1) : 0; }
EOC
cat >l/preload/b.c <<'EOC'
int tp_a(int);
int tp_b(int x) { return tp_a(x) + 1; }
EOC
cat >l/preload/resolve/r.c <<'EOC'
int tp_a(int);
int tp_r(int x) { return tp_a(x); }
EOC
for f in preload/a preload/b preload/resolve/r; do
	cc -c -o lo/$f.o l/$f.c || die "cannot compile the looping tree"
done
cp lo/preload/a.o lo/preload/gone.o
if "$PYTHON" "$TP_TOP/scripts/check-layers" --root l --obj lo 2>err2.txt; then
	die "a loop inside preload/ passed"
fi
for want in "check-layers: loop: preload/a preload/b; calls: preload/a -> preload/b (tp_b), preload/b -> preload/a (tp_a)" \
	"call up: preload/resolve/r calls preload/a (tp_a)"; do
	grep -qF "$want" err2.txt || die "not reported: $want; got: $(cat err2.txt)"
done
! grep -q gone err2.txt || die "an object without its source counted: $(cat err2.txt)"
echo "a loop inside one folder fails: $(wc -l <err2.txt) lines"

# A loop the allowlist names (preload/nvtx <-> preload/nvtx_payload) passes.
mkdir -p k/preload k/collector k/format k/common ko/preload
cat >k/preload/nvtx.c <<'EOC'
int tp_y(int);
int tp_x(int x) { return x > 0 ? tp_y(x - 1) : 0; }
EOC
cat >k/preload/nvtx_payload.c <<'EOC'
int tp_x(int);
int tp_y(int x) { return tp_x(x); }
EOC
for f in nvtx nvtx_payload; do
	cc -c -o ko/preload/$f.o k/preload/$f.c || die "cannot compile the allowed tree"
done
"$PYTHON" "$TP_TOP/scripts/check-layers" --root k --obj ko --loops >ok3.txt 2>err3.txt ||
	die "an allowed loop failed: $(cat err3.txt)"
grep -qF "allowed loop: preload/nvtx preload/nvtx_payload" ok3.txt ||
	die "the allowed loop was not listed: $(cat ok3.txt)"
echo "an allowed loop passes"

# An allowed loop that is no loop any more (both files built, neither calls
# the other) fails: the allowlist only shrinks.
mkdir -p s/preload s/collector s/format s/common so/preload
for f in nvtx nvtx_payload; do
	echo "int tp_$f(int x) { return x; }" >s/preload/$f.c
	cc -c -o so/preload/$f.o s/preload/$f.c || die "cannot compile the cut tree"
done
if "$PYTHON" "$TP_TOP/scripts/check-layers" --root s --obj so 2>err4.txt; then
	die "an allowed loop that is cut passed"
fi
grep -qF "allowed loop preload/nvtx preload/nvtx_payload is no loop any more" err4.txt ||
	die "the cut loop was not reported: $(cat err4.txt)"
echo "a cut allowed loop fails"
