#!/usr/bin/env bash
# --pytorch ops through the library's RecordFunction observer
# (preload/torch_ops.c), with real PyTorch 2.x (the torch venv's) and an
# unmodified script (test/programs/torch_ops_life.py) that runs its own
# torch.profiler; with the torch venv's PyTorch and again with the composer
# venv's older one where it exists.  Checks that:
#   - the program's output is unchanged, its own profiler still sees its
#     ops, and stderr has nothing of ours;
#   - each op is one "cpu_op" slice named as torch.profiler names it
#     (aten::addmm, no ", seq = " of the NVTX emission), forward and
#     backward (autograd::engine::evaluate_function: ...), nested inside
#     record_function("my_range") (a user_annotation) where it ran there;
#   - a second thread's ops are on that thread;
#   - the program's own ProfilerStep#N ranges are not taken for steps: the
#     window holds exactly traceprof's scheduled steps;
#   - 140 nested operator calls record the outer 128 and count the rest
#     in the footer's events_lost_op_depth;
#   - the same ops in each step;
#   - PyTorch runs the observer only while a step records: after each step
#     at::hasGlobalCallbacks() says 1 before a recording step and 0 before
#     the others (so between windows every op takes RecordFunction's fast
#     path again, as with no profiler); likewise --pytorch modules' global
#     forward hooks are registered only while a step records (--step
#     torch), and each recorded step has its module events.
# TP_TEST_TORCH_OPS=nvtx forces the NVTX emission: the test fails there
# (the emission gives the thread's profiler slot to the program's own
# torch.profiler, so its steps have no op events of traceprof's).
. "$TP_TOP/test/lib/common.sh"
[ "${TP_SANITIZER:-}" = "" ] || skip "PyTorch under $TP_SANITIZER is not tested"
[ "$(uname -m)" = x86_64 ] || skip "the observer is x86-64 only (the NVTX emission is used elsewhere)"
need_venv torch 'import torch, torch.library' "torch does not import"
prog="$TP_TOP/test/programs/torch_ops_life.py"

# check VENV: the run and its checks with that venv's python in $py.
check() {
plain=$("$py" "$prog" 5 2>/dev/null) || die "the script failed without traceprof: $plain"
out=$("$BUILD/traceprof" run -q --folder "$PWD/tr_$1" --step torch --pytorch modules,ops \
	--schedule wait=1,active=3,repeat=1 -- "$py" "$prog" 5 2>err_$1.txt) \
	|| die "the script failed under traceprof: $(cat err_$1.txt)"
[ "$(echo "$plain" | grep -v '^global')" = "$(echo "$out" | grep -v '^global')" ] ||
	die "the program's output changed: '$plain' vs '$out'"
# Steps 1-3 record (wait=1,active=3): after step k, k+1's state.
[ "$(echo "$out" | sed -n 's/^global callbacks after each step //p')" = "1 1 1 0 0" ] ||
	die "the observer does not follow the schedule: $(echo "$out" | grep '^global')"
[ "$(echo "$plain" | sed -n 's/^global callbacks after each step //p')" = "0 0 0 0 0" ] ||
	die "global callbacks without traceprof: $(echo "$plain" | grep '^global')"
[ "$(echo "$out" | sed -n 's/^global forward hooks after each step //p')" = "1 1 1 0 0" ] ||
	die "the module hooks do not follow the schedule: $(echo "$out" | grep '^global')"
! grep -q traceprof err_$1.txt || die "unexpected messages: $(cat err_$1.txt)"
[ "$(ls tr_$1/*.json 2>/dev/null | wc -l)" = 1 ] || die "want one window's file, got: $(ls tr_$1 2>&1)"
check_trace tr_$1/*.json >/dev/null
"$PYTHON" - tr_$1/*.json <<'PY' || die "op events wrong"
import json, sys
doc = json.load(open(sys.argv[1]))
ev = doc["traceEvents"]
X = [e for e in ev if e.get("ph") == "X"]
steps = sorted((e for e in X if e["name"].startswith("ProfilerStep#")), key=lambda e: e["ts"])
assert [s["name"] for s in steps] == ["ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#3"], \
    [(s["name"], s["cat"]) for s in steps]
main = steps[0]["tid"]
ops = [e for e in X if e.get("cat") == "cpu_op"]
assert ops, "no cpu_op events: %s" % sorted({(e.get("cat"), e["name"]) for e in X})[:8]
assert not [e for e in X if ", seq = " in e["name"] or ", op_id = " in e["name"]], \
    "NVTX emission's names"
names = {e["name"] for e in ops}
for want in ("aten::addmm", "aten::mm", "autograd::engine::evaluate_function: AddmmBackward0",
             "tptest::rec"):
    assert want in names, (want, sorted(names)[:20])
def inside(a, b):
    return a["tid"] == b["tid"] and b["ts"] <= a["ts"] and a["ts"] + a["dur"] <= b["ts"] + b["dur"]
ranges = [e for e in X if e["name"] == "my_range"]
assert len(ranges) == 3 and all(r["cat"] == "user_annotation" for r in ranges), ranges
for r in ranges:
    assert any(o["name"] == "aten::addmm" and inside(o, r) for o in ops), "no addmm in my_range"
    assert not any(o["name"].startswith("autograd::") and inside(o, r) for o in ops), r
side = [e for e in ops if e["tid"] != main]
mm = [e for e in side if e["name"] == "aten::mm"]
assert len({e["tid"] for e in mm}) == 3 and len(mm) == 9, (len(mm), len({e["tid"] for e in mm}))
assert not [e for e in side if "autograd" in e["name"] or "Backward" in e["name"]], "backward on a side thread"
for s in steps:
    mods = [e for e in X if e["name"].startswith("nn.Module: ") and inside(e, s)]
    assert sorted(m["name"] for m in mods) == ["nn.Module: Linear 0", "nn.Module: Linear 2",
                                               "nn.Module: ReLU 1", "nn.Module: Sequential"], mods
rec = [e for e in ops if e["name"] == "tptest::rec"]
assert len(rec) == 128, len(rec)
lost = doc["traceprof"]["events_lost_op_depth"]
assert lost >= 140 - 128, lost
per = []
for s in steps:
    per.append(sorted(o["name"] for o in ops if inside(o, s)))
assert per[0] == per[2], "steps 1 and 3 ran different ops"
print("%d op events, %d on the side threads, %d nested lost and counted" % (len(ops), len(side), lost))
PY
}

check torch
# Composer's venv pins an older torch (2.7 when written): the observer on a
# second release of PyTorch, where the venv exists.
if py=$(tp_venv_python composer) && "$py" -c 'import torch.library' 2>/dev/null; then
	check composer
else
	echo "no composer venv: torch 2.15 only"
fi
echo "torch ops (observer) ok"
