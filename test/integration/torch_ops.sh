# Zero-code on a CUDA build of PyTorch 2.x from PyPI, on a machine with no
# GPU (issue 31; the torch venv of scripts/install-deps --with-optional):
# an unmodified script (test/programs/torch_block.py: an MLP and a small
# transformer block, AdamW) under
#   1. --step torch --pytorch modules,ops,shapes --schedule wait=1,warmup=1,active=2,repeat=1:
#      the losses are unchanged and stderr stays empty (no failing
#      torch.cuda.synchronize() of emit_nvtx, no leaked-callback warning);
#      the one window holds exactly ProfilerStep#2 and #3; each step holds
#      one event per module call, and ATen op events (PyTorch's NVTX
#      ranges, which shapes need) of the forward (aten::addmm inside nn.Module: Linear) and of
#      the backward (autograd::engine::evaluate_function: AddmmBackward0),
#      the same ones in both steps, on the training thread, named as
#      torch.profiler names them, with their shapes in args["Input Dims"];
#   2. --pytorch ops --python-stack, no --folder: no shapes in the names
#      (on x86-64 the library's RecordFunction observer: "cpu_op" slices);
#      the default folder is traceprof_traces/torch_block (the script's
#      name, not python's);
#   3. python -m torch_block: the folder is named after the module.
. "$TP_TOP/test/lib/common.sh"
[ "${TP_SANITIZER:-}" = "" ] || skip "PyTorch under $TP_SANITIZER is not tested"
need_venv torch 'import sys, torch; sys.exit(0 if torch.backends.cuda.is_built() else 1)' "torch does not import or is not a CUDA build"
progdir="$TP_TOP/test/programs"
prog="$progdir/torch_block.py"
T="$BUILD/traceprof"

plain=$("$py" "$prog" 6) || die "the script failed without traceprof: $plain"
first3=$(echo "$plain" | cut -d' ' -f1-4)
first1=$(echo "$plain" | cut -d' ' -f1-2)

# 1. Steps, modules, ops with shapes, under a schedule.
out=$("$T" run -q --folder "$PWD/tr" --step torch --pytorch modules,ops,shapes \
	--schedule wait=1,warmup=1,active=2,repeat=1 -- "$py" "$prog" 6 2>err.txt) \
	|| die "the script failed under traceprof: $(cat err.txt)"
[ "$out" = "$plain" ] || die "losses changed under traceprof: '$plain' vs '$out'"
[ ! -s err.txt ] || die "unexpected messages: $(cat err.txt)"
[ "$(ls tr/*.json 2>/dev/null | wc -l)" = 1 ] || die "want one window's file, got: $(ls tr 2>&1)"
check_trace tr/*.json >/dev/null
"$PYTHON" - tr/*.json <<'PY' || die "steps, module or op events wrong"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
X = [e for e in ev if e.get("ph") == "X"]
assert not [e for e in ev if e.get("ph") in ("B", "E")], "unbalanced ranges"
steps = sorted((e for e in X if e["name"].startswith("ProfilerStep#")), key=lambda e: e["ts"])
assert [s["name"] for s in steps] == ["ProfilerStep#2", "ProfilerStep#3"], [s["name"] for s in steps]
MODS = ["nn.Module: Net", "nn.Module: Linear embed", "nn.Module: Block block",
        "nn.Module: LayerNorm block.norm1", "nn.Module: MultiheadAttention block.attn",
        "nn.Module: LayerNorm block.norm2", "nn.Module: Sequential block.mlp",
        "nn.Module: Linear block.mlp.0", "nn.Module: GELU block.mlp.1",
        "nn.Module: Linear block.mlp.2", "nn.Module: Linear head"]
def inside(a, b):
    return b["ts"] <= a["ts"] and a["ts"] + a["dur"] <= b["ts"] + b["dur"]
per_step = []
for s in steps:
    evs = [e for e in X if inside(e, s) and e is not s]
    mods = [e for e in evs if e["name"].startswith("nn.Module: ")]
    assert sorted(m["name"] for m in mods) == sorted(MODS), (s["name"], sorted(m["name"] for m in mods))
    ops = [e for e in evs if e["name"].startswith("aten::")]
    bwd = [e for e in evs if e["name"].startswith("autograd::engine::evaluate_function: ")]
    assert ops and bwd, (s["name"], len(ops), len(bwd))
    tids = {e["tid"] for e in mods + ops + bwd}
    assert tids == {s["tid"]}, ("ops on other threads", tids, s["tid"])
    embed = [m for m in mods if m["name"] == "nn.Module: Linear embed"][0]
    # PyTorch's NVTX text ("aten::addmm, seq = .., sizes = [[32], ..") taken
    # apart as torch.profiler writes it (collector/nvtx_decode.c).
    fwd = [o for o in ops if o["name"] == "aten::addmm" and inside(o, embed)]
    assert len(fwd) == 1, [o["name"] for o in ops if inside(o, embed)]
    assert fwd[0]["cat"] == "cpu_op", fwd[0]
    assert fwd[0]["args"]["Input Dims"][:3] == [[32], [24, 8], [8, 32]], fwd[0]["args"]
    mm = [b for b in bwd if "AddmmBackward0" in b["name"]]
    assert len(mm) == 5, len(mm)  # embed, attn.out_proj, mlp.0, mlp.2, head
    assert any(o["name"] == "aten::mm" and inside(o, mm[0]) for o in ops), "no aten::mm in the backward"
    per_step.append(sorted(e["name"] for e in ops + bwd))
assert per_step[0] == per_step[1], "the two steps ran different ops"
print("steps, %d module and %d op events per step ok" % (len(MODS), len(per_step[0])))
PY

# 2. ops without shapes, with --python-stack, in the default folder.
mkdir run2
out=$(cd run2 && "$T" run -q --step torch --pytorch ops --python-stack -- "$py" "$prog" 3 2>../err2.txt) \
	|| die "ops + --python-stack failed: $(cat err2.txt)"
[ "$out" = "$first3" ] || die "losses changed under --python-stack: '$first3' vs '$out'"
[ ! -s err2.txt ] || die "unexpected messages (run 2): $(cat err2.txt)"
ls run2/traceprof_traces/torch_block/*.json >/dev/null 2>&1 ||
	die "default folder not named after the script: $(find run2 -type f)"
"$PYTHON" - run2/traceprof_traces/torch_block/*.json <<'PY' || die "run 2: op events wrong"
import json, sys
ev = [e for p in sys.argv[1:] for e in json.load(open(p))["traceEvents"]]
ops = [e for e in ev if e.get("ph") == "X" and e["name"].startswith("aten::")]
assert ops, "no op events"
assert not [o for o in ops if "sizes =" in o["name"]], "shapes without 'shapes'"
# Without shapes, on x86-64: the library's observer, "cpu_op" slices named
# as torch.profiler names them (test/integration/torch_ops_observer.sh).
import platform
if platform.machine() == "x86_64":
    bad = [o["name"] for o in ops if o.get("cat") != "cpu_op" or "," in o["name"]]
    assert not bad, bad[:5]
print("ops without shapes ok (%d)" % len(ops))
PY

# 3. -m: the module's name.
mkdir run3
out=$(cd run3 && PYTHONPATH="$progdir" "$T" run -q --step torch -- "$py" -m torch_block 1 2>../err3.txt) \
	|| die "-m run failed: $(cat err3.txt)"
[ "$out" = "$first1" ] || die "losses changed (-m): '$first1' vs '$out'"
ls run3/traceprof_traces/torch_block/*.json >/dev/null 2>&1 ||
	die "-m: default folder not named after the module: $(find run3 -type f)"
echo "torch ops ok"
