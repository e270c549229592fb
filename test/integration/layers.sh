#!/usr/bin/env bash
# The floors of the C library (docs/DESIGN.md, "Layers"): no call or
# include runs up preload/ -> collector/ -> format/ -> common/, and no loop
# of calls crosses a folder.  scripts/check-layers reads the includes from
# the sources and the calls from the build's objects; a small tree with one
# call and one include up shows it can fail.
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
