#!/usr/bin/env bash
# PyTorch with no code change on a real GPU (issue 18): the unmodified
# script (test/programs/torch_mlp.py --cuda) under
# `traceprof run --step torch --pytorch modules,ops,shapes`.  Skips where
# PyTorch with CUDA or a GPU is missing.  Checks that:
#   - the losses do not change;
#   - steps come from the optimizer (PyTorch 2.x: the global step
#     post-hook; 1.13: Optimizer._optimizer_step_code): ProfilerStep#0..#N;
#   - ops: ATen operator ranges (emit_nvtx, through traceprof's NVTX
#     injection) with input shapes (args["Input Dims"]), inside the module events that ran them;
#   - each step holds one event per module call.
. "$TP_TOP/test/lib/common.sh"
[ "${TP_SANITIZER:-}" = "" ] || skip "PyTorch under $TP_SANITIZER is not tested"
py=$(python_where 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)')
[ -n "$py" ] || skip "no PyTorch with a GPU (the torch venv, $PYTHON or /usr/bin/python3)"
prog="$TP_TOP/test/programs/torch_mlp.py"
"$py" -c 'import torch, torch.optim.optimizer as o; print("torch", torch.__version__, "post-hook" if hasattr(o, "register_optimizer_step_post_hook") else "1.13 path")'
plain=$("$py" "$prog" 5 --cuda) || die "the script failed without traceprof: $plain"
out=$("$BUILD/traceprof" run -q --folder "$PWD/tr" --step torch --pytorch modules,ops,shapes \
	-- "$py" "$prog" 5 --cuda 2>err.txt) || die "the script failed under traceprof: $(cat err.txt)"
[ "$out" = "$plain" ] || die "losses changed under traceprof: '$plain' vs '$out'"
! grep -q '^traceprof:' err.txt || die "unexpected messages: $(cat err.txt)"
check_trace tr/*.json >/dev/null
"$PYTHON" - tr/*.json <<'PY' || die "steps, modules or ops wrong"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
steps = sorted((e for e in ev if e.get("ph") == "X" and e["name"].startswith("ProfilerStep#")),
               key=lambda e: e["ts"])
names = [s["name"] for s in steps]
assert names[:5] == ["ProfilerStep#%d" % k for k in range(5)], names
mods = [e for e in ev if e.get("ph") == "X" and e["name"].startswith("nn.Module: ")]
for s in steps[:5]:
    n = sum(1 for m in mods if s["ts"] <= m["ts"] and m["ts"] + m["dur"] <= s["ts"] + s["dur"])
    assert n == 5, (s["name"], n)
ops = [e for e in ev if e.get("ph") == "X" and e["name"].startswith("aten::")]
assert ops, "no ATen operator events"
assert any(e.get("args", {}).get("Input Dims") for e in ops), "no input shapes on ops"
assert not [e for e in ops if ", seq = " in e["name"]], "PyTorch's NVTX text as names"
head = [m for m in mods if m["name"] == "nn.Module: Linear head"]
inside = [o for o in ops for m in head if m["ts"] <= o["ts"] and o["ts"] + o["dur"] <= m["ts"] + m["dur"]]
assert inside, "no op inside the head Linear's forward"
print("gpu zero-code ok: %d steps, %d module events, %d op events" % (len(steps), len(mods), len(ops)))
PY
