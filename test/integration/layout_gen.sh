#!/usr/bin/env bash
# The trace layout is written once, in scripts/layout.spec: common/layout.h
# and python/traceprof/layout.py (scripts/gen-layout) are the ones checked
# in, the check can fail (a copy with one edited entry is reported stale),
# the two sides read the same values, and the names the spec owns are not
# written again by hand in the library or the command.
. "$TP_TOP/test/lib/common.sh"
PY=${PYTHON:-python3}
command -v "$PY" >/dev/null || skip "no $PY"

"$PY" "$TP_TOP/scripts/gen-layout" --check 2>check.err ||
	die "checked-in files differ from scripts/layout.spec: $(cat check.err)"
echo "generated files up to date"

# A copy of the spec, the generator and its outputs, with one value changed.
mkdir -p copy/common copy/scripts copy/python/traceprof
cp "$TP_TOP/scripts/gen-layout" "$TP_TOP/scripts/layout.spec" copy/scripts/
cp "$TP_TOP/common/layout.h" copy/common/
cp "$TP_TOP/python/traceprof/layout.py" copy/python/traceprof/
"$PY" copy/scripts/gen-layout --check || die "an unchanged copy is reported stale"
sed -i 's/^CAT_GPU_MEMSET = "gpu_memset"$/CAT_GPU_MEMSET = "gpu_memset2"/' copy/scripts/layout.spec
grep -q '"gpu_memset2"' copy/scripts/layout.spec || die "cannot edit the copy's spec"
if "$PY" copy/scripts/gen-layout --check 2>stale.err; then
	die "an edited entry is not reported"
fi
for f in common/layout.h python/traceprof/layout.py; do
	grep -q "$f differs" stale.err || die "$f not named as stale: $(cat stale.err)"
done
echo "stale copy reported: $(head -1 stale.err)"
"$PY" copy/scripts/gen-layout >/dev/null || die "gen-layout failed on the copy"
"$PY" copy/scripts/gen-layout --check || die "still stale after gen-layout"
grep -q 'TP_CAT_GPU_MEMSET "gpu_memset2"' copy/common/layout.h || die "layout.h not rewritten"
grep -q 'CAT_GPU_MEMSET = "gpu_memset2"' copy/python/traceprof/layout.py ||
	die "layout.py not rewritten"
echo "an edited entry is reported, and gen-layout rewrites both files"

# C and Python read the same values: every TP_ macro of layout.h, as the
# compiler sees it, equals the Python constant of the same name.
cc=${CC:-gcc}
command -v "$cc" >/dev/null || skip "no $cc"
"$PY" - "$TP_TOP" >probe.c <<'EOP'
import sys
sys.path.insert(0, sys.argv[1] + "/python")
from traceprof import layout as L
print('#include <stdio.h>\n#include "common/layout.h"\n#define S(x) ((x) ? (x) : "None")')
print("#define ROW(...) { const char *r[] = { __VA_ARGS__ }; \\\n"
      "  for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++) printf(\"%s%s\", i ? \",\" : \"\", S(r[i])); printf(\";\"); }")
print("#define ID(id, s) printf(\"%s,\", s);")
print("int main(void) {")
for n in sorted(k for k in vars(L) if k.isupper()):
    v = getattr(L, n)
    if isinstance(v, str):
        print('  printf("%s=%%s\\n", TP_%s);' % (n, n))
    elif isinstance(v, int):
        print('  printf("%s=%%llu\\n", (unsigned long long)(TP_%s));' % (n, n))
    elif v and isinstance(v[0], tuple):
        print('  printf("%s="); TP_%s(ROW) printf(" %%d\\n", TP_%s_N);' % (n, n, n))
    else:
        print('  printf("%s="); TP_%s(ID) printf(" %%d\\n", TP_%s_N);' % (n, n, n))
print("  return 0;\n}")
EOP
"$cc" -std=gnu11 -I "$TP_TOP" -o probe probe.c || die "cannot compile layout.h's probe"
./probe >c.txt
"$PY" - "$TP_TOP" >py.txt <<'EOP'
import sys
sys.path.insert(0, sys.argv[1] + "/python")
from traceprof import layout as L
for n in sorted(k for k in vars(L) if k.isupper()):
    v = getattr(L, n)
    if isinstance(v, (str, int)):
        print("%s=%s" % (n, v))
    elif v and isinstance(v[0], tuple):
        print("%s=%s %d" % (n, "".join(",".join(str(x) for x in r) + ";" for r in v), len(v)))
    else:
        print("%s=%s %d" % (n, "".join(x + "," for x in v), len(v)))
EOP
diff py.txt c.txt >diff.txt || die "C and Python disagree: $(cat diff.txt)"
echo "C and Python agree on $(wc -l <c.txt) names"

# No hand-written copies: the spec's texts are not written as literals in
# the library's sources or the command's package (other than in the
# generated files).
cd "$TP_TOP"
copies=$(grep -rnF -e '"ProfilerStep#' -e '"cuda_runtime"' -e '"cuda_driver"' \
	-e '"gpu_memcpy"' -e '"gpu_memset"' -e '"user_annotation"' -e '"gpu_user_annotation"' \
	-e '"traceprof header"' -e '"TORCHELASTIC_RUN_ID"' -e '"process_sort_index"' \
	-e '"OMPI_COMM_WORLD_RANK"' -e '"SLURM_PROCID"' \
	--include='*.c' --include='*.h' --include='*.py' \
	common collector format preload python/traceprof |
	grep -v -e '^common/layout\.h:' -e '^python/traceprof/layout\.py:' || true)
[ -z "$copies" ] || die "hand-written copies of the layout: $copies"
echo "no hand-written copies of the layout's names"
