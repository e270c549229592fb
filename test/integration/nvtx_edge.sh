# NVTX at its edges (issue 30, minors): what push and pop return, and more
# domains than the old 256-slot table.
#  - push and pop return -1 under traceprof, whatever the nesting and for an
#    unmatched pop: the fixed value Nsight Systems returns (it tracks no
#    level); untraced, NVTX returns -2.  Before, traceprof returned the
#    level (0, 1, ...), which a program may branch on.
#  - 300 domains, a range in each: every range keeps its domain's name
#    (before, the 257th and later showed none, uncounted).
. "$TP_TOP/test/lib/common.sh"
prog="$BUILD/test/prog_nvtx_edge"
[ -x "$prog" ] || skip "prog_nvtx_edge not built (no CUDA toolkit headers?)"
plain=$("$prog" first | grep '^push')
[ "$plain" = "push -2 pop -2 pop -2" ] || die "untraced NVTX returned: $plain"
got=$(TRACEPROF_FOLDER=out1 traced "$prog" first | grep '^push')
[ "$got" = "push -1 pop -1 pop -1" ] || die "traced push/pop/unmatched pop returned: $got (want -1 -1 -1)"
out=$(TRACEPROF_FOLDER=out2 traced "$prog" domains 300) || die "domains run failed"
[ "$out" = "ok" ] || die "domains run printed: $out"
"$PYTHON" - <<'PY' || die "a domain's ranges lost its name"
import sys
sys.path.insert(0, __import__("os").environ["TP_TOP"] + "/test/lib")
from rel import load_trace, trace_files
files = trace_files("out2")
assert len(files) == 1, files
d = load_trace(files[0])
seen = {}
for e in d["traceEvents"]:
    if e.get("ph") == "X" and e.get("name", "").startswith("in_dom"):
        seen[e["name"]] = (e.get("args") or {}).get("domain")
assert len(seen) == 300, len(seen)
bad = {n: dn for n, dn in seen.items() if dn != "dom" + n[len("in_dom"):]}
assert not bad, "%d ranges without their domain, e.g. %s" % (len(bad), sorted(bad.items())[:3])
print("ok: 300 domains named")
PY
echo ok
