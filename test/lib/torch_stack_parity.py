"""Python stacks on ops, traceprof's (--python-stack: args.python_stack,
"file:line function" innermost first) against torch.profiler's
(with_stack=True: the python_function slices around each op, linked by
"Python parent id"; the name has the function's
first line, the inner slice's "CallFrom" the line running), for the same
script (test/integration/torch_tensorboard.sh).

    torch_stack_parity.py OURS.json THEIRS.json SCRIPT_NAME

For every op that torch.profiler gives a Python stack holding a frame of
SCRIPT_NAME, the innermost such frame (line and function) is its "user
frame"; the ops of both traces are counted by (op name, user frame), and
every count of torch.profiler's must be traceprof's too.  Prints the
counts compared."""
import collections
import json
import re
import sys

ours_f, theirs_f, script = sys.argv[1], sys.argv[2], sys.argv[3]
ours = json.load(open(ours_f))["traceEvents"]
theirs = json.load(open(theirs_f))["traceEvents"]


def theirs_user_frames(ev):
    pf = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "python_function"]
    by_id = {e["args"]["Python id"]: e for e in pf}
    by_tid = collections.defaultdict(list)
    for e in pf:
        by_tid[e["tid"]].append(e)
    pat = re.compile(re.escape(script) + r"\((\d+)\): (.*)$")
    out = collections.Counter()
    for op in (e for e in ev if e.get("ph") == "X" and e.get("cat") == "cpu_op"):
        # The innermost python_function around the op on its thread.
        around = [p for p in by_tid.get(op["tid"], ())
                  if p["ts"] <= op["ts"] and op["ts"] + op["dur"] <= p["ts"] + p["dur"]]
        if not around:
            continue
        p = max(around, key=lambda p: (p["ts"], -p["dur"]))
        child = None
        while p is not None:
            m = pat.search(p["name"])
            if m:
                # The slice's name has the function's first line; the line
                # running in it is where its child was called from.
                call = (child or {}).get("args", {}).get("CallFrom", "")
                line = int(call.rsplit(":", 1)[1]) if call.split(":")[0].endswith(script) else None
                out[(op["name"], line, m.group(2))] += 1
                break
            child, p = p, by_id.get(p["args"].get("Python parent id"))
    return out


def ours_user_frames(ev):
    pat = re.compile(re.escape(script) + r":(\d+) (.*)$")
    out = collections.Counter()
    for op in (e for e in ev if e.get("ph") == "X" and e.get("cat") == "cpu_op"):
        for f in op.get("args", {}).get("python_stack", ()):
            m = pat.search(f)
            if m:
                out[(op["name"], int(m.group(1)), m.group(2))] += 1
                break
    return out


t, o = theirs_user_frames(theirs), ours_user_frames(ours)
assert t, "torch.profiler's trace has no op under a frame of %s" % script
missing = {k: (v, o.get(k, 0)) for k, v in t.items() if o.get(k, 0) != v}
assert not missing, "ops whose user frame differs, (torch.profiler's count, ours): %s" % missing
lines = sorted({(k[1], k[2]) for k in t})
print("python stacks: %d ops in torch.profiler's trace under %s frames, the same user "
      "frame in ours (%d kinds; lines %s)" % (sum(t.values()), script, len(t), lines))
