#!/usr/bin/env bash
# --pytorch modules through the library's C hooks (preload/torch_modules.c),
# with real PyTorch 2.x (the torch venv's) and an unmodified script
# (test/programs/torch_modules_life.py).  Checks that:
#   - PyTorch holds the library's builtin hooks, not Python functions;
#   - models built and freed in turn, two classes alternating, are named by
#     their own class each time, also where CPython gave a freed model's
#     address to the next one (a name kept by address past its module's
#     death would name the wrong class);
#   - a forward that raises (caught by its parent) still gets its end, and
#     its parent's next child starts after it (always_call);
#   - every begin has its end, and a second thread's module events are on
#     that thread.
. "$TP_TOP/test/lib/common.sh"
[ "${TP_SANITIZER:-}" = "" ] || skip "PyTorch under $TP_SANITIZER is not tested"
py=$(python_where 'import torch, inspect; assert "always_call" in inspect.signature(torch.nn.modules.module.register_module_forward_hook).parameters')
[ -n "$py" ] || skip "no PyTorch 2.1+ (always_call): no torch venv (scripts/install-deps --with-optional makes it)"
prog="$TP_TOP/test/programs/torch_modules_life.py"
rounds=40

plain=$("$py" "$prog" $rounds) || die "the script failed without traceprof: $plain"
out=$("$BUILD/traceprof" run -q --folder "$PWD/tr" --pytorch modules -- "$py" "$prog" $rounds 2>err.txt) \
	|| die "the script failed under traceprof: $(cat err.txt)"
[ ! -s err.txt ] || die "unexpected messages: $(cat err.txt)"
[ "$(echo "$out" | grep '^hooks ')" = "hooks builtin_function_or_method" ] \
	|| die "PyTorch does not hold the library's hooks: $out"
[ "$(echo "$out" | grep '^order ')" = "$(echo "$plain" | grep '^order ')" ] || die "the program's output changed"
reused=$(echo "$out" | sed -n 's/^reused //p')
[ "${reused:-0}" -gt 0 ] || skip "CPython gave no freed model's address to the other class in $rounds rounds: nothing to check names against"
check_trace tr/*.json >/dev/null
"$PYTHON" - tr/*.json "$(echo "$out" | sed -n 's/^order //p')" $rounds <<'PY' || die "module events wrong"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
order = sys.argv[2].split()
rounds = int(sys.argv[3])
mods = sorted((e for e in ev if e.get("ph") == "X" and e["name"].startswith("nn.Module: ")),
              key=lambda e: (e["tid"], e["ts"], -e["dur"]))
tids = sorted(set(e["tid"] for e in mods), key=lambda t: -sum(1 for e in mods if e["tid"] == t))
assert len(tids) == 2, "want module events on 2 threads, got %d" % len(tids)
main = [e for e in mods if e["tid"] == tids[0]]
side = [e for e in mods if e["tid"] == tids[1]]
# Every module call has its complete event: 2 per model, 3 per Catcher.
assert len(main) == rounds * 5, "main thread: %d module events, want %d" % (len(main), rounds * 5)
assert [e["name"] for e in side] == ["nn.Module: Beta", "nn.Module: ReLU inner"], side
tops = [e["name"][len("nn.Module: "):] for e in main
        if e["name"] in ("nn.Module: Alpha", "nn.Module: Beta")]
assert tops == order, "models named out of turn (a stale name?): %s vs %s" % (tops[:12], order[:12])
def inside(a, b):
    return b["ts"] <= a["ts"] and a["ts"] + a["dur"] <= b["ts"] + b["dur"]
i = 0
while i < len(main):
    top = main[i]
    if top["name"] == "nn.Module: Catcher":
        boom, after = main[i + 1], main[i + 2]
        assert boom["name"] == "nn.Module: Boom boom" and after["name"] == "nn.Module: Identity after", main[i:i + 3]
        assert inside(boom, top) and inside(after, top), main[i:i + 3]
        assert boom["ts"] + boom["dur"] <= after["ts"], "the raising forward's end is missing or late: %s" % main[i:i + 3]
        i += 3
    else:
        inner = main[i + 1]
        want = {"nn.Module: Alpha": "nn.Module: Linear inner", "nn.Module: Beta": "nn.Module: ReLU inner"}
        assert inner["name"] == want[top["name"]] and inside(inner, top), main[i:i + 2]
        i += 2
PY
echo "torch modules (C hooks) ok"
