# NVTX through the toolkit's v3 headers: traceprof is injected by setting
# NVTX_INJECTION64_PATH itself; push/pop (ASCII, unicode, Ex), start/end
# ended on another thread, marks, domains, registered strings, categories and
# nvtxNameOsThread show up exactly, and the program's output is unchanged.
. "$TP_TOP/test/lib/common.sh"
prog="$BUILD/test/prog_nvtx_ranges"
[ -x "$prog" ] || skip "prog_nvtx_ranges not built (no CUDA toolkit headers?)"
plain=$("$prog" 3)
[ "$plain" = "done" ] || die "untraced output: $plain"
out=$(TRACEPROF_FOLDER=out traced "$prog" 3) || die "traced run failed"
[ "$out" = "done" ] || die "traced output changed: $out"
# A user's own injection library wins: with NVTX_INJECTION64_PATH set to a
# missing file, NVTX stays a no-op and the program still runs.
out=$(NVTX_INJECTION64_PATH=/nonexistent TRACEPROF_FOLDER=out2 traced "$prog" 1 2>/dev/null) ||
	die "run with a user NVTX_INJECTION64_PATH failed"
[ "$out" = "done" ] || die "output with user injection path: $out"
"$PYTHON" - <<'PY'
import glob, json, collections
files = glob.glob("out/*.json")
assert len(files) == 1, files
d = json.load(open(files[0]))
ev = d["traceEvents"]
pid = d["traceprof"]["threads"][0]["tid"]  # any; the process id is below
X = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "user_annotation"
     and not e["name"].startswith("ProfilerStep#")]
I = [e for e in ev if e.get("ph") == "i"]
names = collections.Counter(e["name"] for e in X)
want = {"train_step": 3, "forward": 3, "backward_\u00fc": 3, "dom_range": 3,
        "async_op": 3, "worker_range": 3, "iter_0": 1, "iter_1": 1, "iter_2": 1}
assert names == want, names
assert collections.Counter(e["name"] for e in I) == {"tick": 3, "dom_mark": 3}, I
main = {e["tid"] for e in X if e["name"] == "train_step"}
assert len(main) == 1, main
main = main.pop()
for e in X:
    if e["name"] == "worker_range":
        assert e["tid"] != main, e
    else:
        assert e["tid"] == main, e  # async_op ends on the worker, shows on its starter
    assert "unfinished" not in e.get("args", {}), e
for e in X + I:
    a = e.get("args", {})
    if e["name"] in ("dom_range", "dom_mark"):
        assert a.get("domain") == "mydomain", e
    else:
        assert "domain" not in a, e
    if e["name"] == "backward_\u00fc":
        assert a.get("category") == 7, e
# Nesting: each iteration's ranges lie inside its train_step.
steps = sorted((e["ts"], e["ts"] + e["dur"]) for e in X if e["name"] == "train_step")
for e in X:
    if e["name"] in ("forward", "iter_0", "iter_1", "iter_2", "dom_range", "async_op"):
        assert any(b <= e["ts"] and e["ts"] + e["dur"] <= f + 1e-3 for b, f in steps), e
fwd = sorted(e["ts"] for e in X if e["name"] == "forward")
assert all(e["dur"] >= 0.4 for e in X if e["name"] == "forward")
tn = {e["tid"]: e["args"]["name"] for e in ev
      if e.get("ph") == "M" and e["name"] == "thread_name"}
assert tn[main] == "main-nvtx", tn
workers = {e["tid"] for e in X if e["name"] == "worker_range"}
assert len(workers) == 3 and all(tn[w] == "nvtx-worker" for w in workers), tn
print("ok:", dict(names))
PY
