# TRACEPROF_WITH_STACK=1: a marker recorded at the end of the known call
# chain main -> chain_a -> chain_b -> chain_c carries its stack innermost
# first in args.stack, without traceprof's own frames, and its "sf" names the
# same frames in the file's stackFrames tree.  Without the variable, no stacks.
. "$TP_TOP/test/lib/common.sh"
cc=${CC:-cc}
command -v "$cc" >/dev/null || skip "no C compiler ($cc) to build the test program with -rdynamic"
# -rdynamic: dladdr() names only the functions in the dynamic symbol table.
"$cc" -O2 -g -fno-omit-frame-pointer -rdynamic -I"$TP_TOP" -o "$TP_TMP/chain" \
	"$TP_TOP/test/programs/stack_chain.c" -ldl || die "cannot build the test program"

for depth in 16 4; do
	out=$(TRACEPROF_WITH_STACK=1 TRACEPROF_STACK_DEPTH=$depth TRACEPROF_SAMPLE_MS=0 \
		TRACEPROF_FOLDER="$TP_TMP/d$depth" traced "$TP_TMP/chain" 3)
	[ "$out" = done ] || die "program output '$out'"
done
out=$(TRACEPROF_SAMPLE_MS=0 TRACEPROF_FOLDER="$TP_TMP/off" traced "$TP_TMP/chain" 3)
[ "$out" = done ] || die "program output '$out'"

"$PYTHON" - "$TP_TMP" <<'PY'
import glob, json, os, sys
tmp = sys.argv[1]

def load(folder):
    files = glob.glob(os.path.join(tmp, folder, "*.json"))
    assert len(files) == 1, files
    with open(files[0]) as f:
        return json.load(f)

def frames_from_sf(d, sf):
    """The chain of stackFrames from the node sf to its root, innermost first."""
    out = []
    node = str(sf)
    seen = set()
    while node is not None:
        assert node not in seen, ("cycle in stackFrames at", node)
        seen.add(node)
        fr = d["stackFrames"][node]
        out.append("%s (%s)" % (fr["name"], fr["category"]))
        node = str(fr["parent"]) if "parent" in fr else None
    return out

chain = ["chain_c", "chain_b", "chain_a", "main"]
d = load("d16")
assert d["traceprof"]["configuration"]["TRACEPROF_WITH_STACK"] == "1"
assert "stackFrames" in d, list(d)
withstack = [e for e in d["traceEvents"] if e["name"] in ("leaf", "leaf_range")]
assert len(withstack) == 6, [e["name"] for e in withstack]
for e in withstack:
    st = e["args"]["stack"]
    funcs = [s.split("+")[0] for s in st]
    assert not any("libtraceprof" in s or "libunwind" in s for s in st), ("own frames", st)
    # Innermost first: the chain, in order, from the first frame on.
    assert funcs[:4] == chain, ("call chain", st)
    assert all(s.endswith("(chain)") for s in st[:4]), st
    # The Chrome form names the same frames.
    assert frames_from_sf(d, e["sf"]) == st, (e["sf"], frames_from_sf(d, e["sf"]), st)
# Events without stacks (steps, counters) have no sf; every sf is defined and
# every frame defined is used by some event (or is an ancestor of one).
used = set()
for e in d["traceEvents"]:
    if "sf" in e:
        node = str(e["sf"])
        while node is not None:
            used.add(node)
            fr = d["stackFrames"][node]
            node = str(fr["parent"]) if "parent" in fr else None
assert used == set(d["stackFrames"]), (sorted(used), sorted(d["stackFrames"]))
steps = [e for e in d["traceEvents"] if e["name"].startswith("ProfilerStep#")]
assert steps and not any("sf" in e for e in steps)

# Depth 4: at most 4 frames captured, of which traceprof's are dropped.
d4 = load("d4")
for e in d4["traceEvents"]:
    if e["name"] == "leaf":
        assert 1 <= len(e["args"]["stack"]) <= 4, e["args"]["stack"]

off = load("off")
assert "stackFrames" not in off
assert not any("sf" in e or "stack" in e.get("args", {}) for e in off["traceEvents"])
print("stack:", withstack[0]["args"]["stack"])
PY
