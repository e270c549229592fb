"""The trace of test/programs/torch_compile.py, checked for
test/integration/torch_compile.sh:

    torch_compile_check.py TRACE.json HOW STEPS

Checks that the compiled region shows: one "Torch-Compiled Region" op (the
compiled code's own RecordFunction) per step with ops (aten::*) inside it;
for HOW "module" and "method" one "nn.Module: Net" event per step around
it, and no other module event (the model's submodules run inside the
graph: an event for one would be a hook that Dynamo saw, or a module that
ran outside the graph); for "function" none; the backend's own graph
module (GraphModule) only inside the compiled region.  No event
is left unfinished."""
import json
import sys

ev = json.load(open(sys.argv[1]))["traceEvents"]
how, steps = sys.argv[2], int(sys.argv[3])
X = [e for e in ev if e.get("ph") == "X"]
left = [e for e in X if (e.get("args") or {}).get("unfinished")]
assert not left, "unfinished events: %s" % left[:3]
regions = sorted((e for e in X if e.get("cat") == "cpu_op"
                  and e["name"].startswith("Torch-Compiled Region")), key=lambda e: e["ts"])
# The compiled function runs once per step; a graph break of the program's
# own (FULLGRAPH 0) runs a second graph after it.
assert len(regions) >= steps, "want >= %d compiled regions, got %d" % (steps, len(regions))
main = regions[0]["tid"]


def inside(a, b):
    return b["ts"] <= a["ts"] and a["ts"] + a["dur"] <= b["ts"] + b["dur"] and a is not b


for r in regions:
    ops = [e for e in X if e["tid"] == r["tid"] and e.get("cat") == "cpu_op"
           and e["name"].startswith("aten::") and inside(e, r)]
    assert ops, "no op inside the compiled region %s" % r
mods = sorted((e for e in X if e["name"].startswith("nn.Module")), key=lambda e: e["ts"])
# The graph itself is a module where the backend runs it as one (aot_eager's
# GraphModule): its calls are real, inside the compiled region.
graphs = [e for e in mods if e["name"] == "nn.Module: GraphModule"]
for g in graphs:
    assert any(inside(g, r) for r in regions), "a GraphModule outside the compiled region: %s" % g
mods = [e for e in mods if e not in graphs]
if how == "function":
    assert not mods, "module events of a compiled function's modules: %s" % mods[:3]
else:
    names = sorted(set(e["name"] for e in mods))
    assert names == ["nn.Module: Net"], "module events: %s" % names
    assert len(mods) == steps and all(e["tid"] == main for e in mods), mods
    for m in mods:
        assert any(inside(r, m) for r in regions), "no compiled region inside %s" % m
print("compiled regions", len(regions), "module events", len(mods))
