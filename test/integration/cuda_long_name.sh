# Kernel names are cut at a documented bound (issue 30, item 13): a valid
# mangled name of 207 bytes whose templates refer back to earlier ones
# demangles to 80 MB, and before, every launch event carried all of it.
# Now a name whose demangled form would pass 1 MiB is not demangled at all
# (the bound is computed from the mangled name) and shows mangled; one that
# demangles to more than 4096 bytes is cut there, ending in "...".  Both
# are counted in the footer (names_left_mangled, names_cut).  Launches
# through the stand-in runtime, demangled with libstdc++'s __cxa_demangle.
. "$TP_TOP/test/lib/common.sh"
SI="$BUILD/standin"
[ -x "$SI/standin_app" ] || die "stand-ins not built ($SI); run make check"
export LD_LIBRARY_PATH="$SI${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
name() { # P<X, X, X, X> nested $1 levels, X the previous level
	"$PYTHON" - "$1" <<'PY'
import sys
def seq(n):
    d = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"; s = ""
    n -= 1
    while True:
        s = d[n % 36] + s; n //= 36
        if not n: break
    return "S" + s + "_"
parts = ["1PIiiE"]
for k in range(2, int(sys.argv[1]) + 1):
    parts.append("S0_I" + seq(k) * 4 + "E")
print("_Z6kernelI" + "".join(parts) + "EvT_")
PY
}
big=$(name 12)
mid=$(name 7)
[ ${#big} = 207 ] || die "generator: ${#big} bytes"
for which in big mid; do
	n=${!which}
	STANDIN_KERNEL_NAME="$n" TRACEPROF_FOLDER="$which" timeout 60 env LD_PRELOAD="$TP_PRELOAD" \
		"$SI/standin_app" >"$which.out" 2>"$which.err" || { cat "$which.err"; die "$which: run failed"; }
done
"$PYTHON" - "$big" <<'PY' || die "kernel names not cut"
import os, sys
sys.path.insert(0, os.environ["TP_TOP"] + "/test/lib")
from rel import load_trace, trace_files
big = sys.argv[1]
for folder, want in (("big", "mangled"), ("mid", "cut")):
    files = trace_files(folder)
    assert len(files) == 1, (folder, files)
    size = os.path.getsize(files[0])
    assert size < 1 << 20, "%s: trace of %d bytes" % (folder, size)
    d = load_trace(files[0])
    names = set()
    def walk(v):
        if isinstance(v, str):
            if "kernel" in v and ("P<" in v or v.startswith("_Z6kernel")):
                names.add(v)
        elif isinstance(v, dict):
            for x in v.values(): walk(x)
        elif isinstance(v, list):
            for x in v: walk(x)
    walk(d["traceEvents"])
    assert names, folder
    foot = d["traceprof"]
    for n in names:
        assert len(n.encode()) <= 4096, (folder, len(n))
        if want == "mangled":
            assert n == big, (folder, n[:80])
        else:
            assert n.startswith("void kernel<P<int, int>, P<P<int, int>") and n.endswith("..."), n[:80]
    key = "names_left_mangled" if want == "mangled" else "names_cut"
    assert foot.get(key, 0) >= 1, (folder, key, foot.get(key))
    print("%s: %d bytes, %d name(s), longest %d, %s=%d" % (folder, size, len(names),
          max(len(n) for n in names), key, foot[key]))
PY
echo ok
