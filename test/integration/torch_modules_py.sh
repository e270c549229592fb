#!/usr/bin/env bash
# --pytorch modules through the Python fallback hooks of
# scripts/traceprof/pyboot/traceprof_torch.py (what PyTorch < 2.1 and an
# interpreter without a GIL get), forced with the test-only
# TP_TEST_TORCH_MODULE_HOOKS (docs/development.md), with real PyTorch 2.x
# and the script of torch_modules_c.sh (test/programs/torch_modules_life.py).
#   python                 the Python hooks, the post hook with always_call
#                          (a free-threaded interpreter on PyTorch 2.1+);
#   python-no-always-call  as on PyTorch < 2.1: no always_call.
# Checks, in both: PyTorch holds Python functions; one complete event per
# module call; nesting; models of two classes at reused addresses named by
# their own class; a forward that raises still ends, inside its parent, and
# no event is left unfinished (with always_call: before its parent's next
# child starts); a second thread's module events are on that thread.
. "$TP_TOP/test/lib/common.sh"
[ "${TP_SANITIZER:-}" = "" ] || skip "PyTorch under $TP_SANITIZER is not tested"
py=$(python_where 'import torch, inspect; assert "always_call" in inspect.signature(torch.nn.modules.module.register_module_forward_hook).parameters')
[ -n "$py" ] || skip "no PyTorch 2.1+ (always_call): no torch venv (scripts/install-deps --with-optional makes it)"
prog="$TP_TOP/test/programs/torch_modules_life.py"
rounds=40

plain=$("$py" "$prog" $rounds) || die "the script failed without traceprof: $plain"
for mode in python python-no-always-call; do
	out=$(TP_TEST_TORCH_MODULE_HOOKS=$mode "$BUILD/traceprof" run -q --folder "$PWD/tr_$mode" \
		--pytorch modules -- "$py" "$prog" $rounds 2>err.txt) \
		|| die "$mode: the script failed under traceprof: $(cat err.txt)"
	[ ! -s err.txt ] || die "$mode: unexpected messages: $(cat err.txt)"
	[ "$(echo "$out" | grep '^hooks ')" = "hooks function" ] \
		|| die "$mode: PyTorch does not hold the Python hooks: $out"
	[ "$(echo "$out" | grep '^order ')" = "$(echo "$plain" | grep '^order ')" ] \
		|| die "$mode: the program's output changed"
	reused=$(echo "$out" | sed -n 's/^reused //p')
	[ "${reused:-0}" -gt 0 ] || skip "CPython gave no freed model's address to the other class in $rounds rounds: nothing to check names against"
	check_trace tr_$mode/*.json >/dev/null
	"$PYTHON" - tr_$mode/*.json "$(echo "$out" | sed -n 's/^order //p')" $rounds $mode <<'PY' \
		|| die "$mode: module events wrong"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
order = sys.argv[2].split()
rounds = int(sys.argv[3])
always = sys.argv[4] == "python"
mods = sorted((e for e in ev if e.get("ph") == "X" and e["name"].startswith("nn.Module: ")),
              key=lambda e: (e["tid"], e["ts"], -e["dur"]))
# Begins balanced: no module event left open at the window's end, and no
# end without its begin (written as an instant).
left = [e for e in mods if (e.get("args") or {}).get("unfinished")]
assert not left, "%d module events never ended, e.g. %s" % (len(left), left[:2])
assert not [e for e in ev if e.get("ph") == "i" and e.get("name", "").startswith("nn.Module: ")]
tids = sorted(set(e["tid"] for e in mods), key=lambda t: -sum(1 for e in mods if e["tid"] == t))
assert len(tids) == 2, "want module events on 2 threads, got %d" % len(tids)
main = [e for e in mods if e["tid"] == tids[0]]
side = [e for e in mods if e["tid"] == tids[1]]
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
        # Without always_call the raising forward's end is seen at its
        # parent's end, so it may hold the next child: sort by name.
        rest = sorted(main[i + 1:i + 3], key=lambda e: e["name"])
        boom, after = rest
        assert boom["name"] == "nn.Module: Boom boom" and after["name"] == "nn.Module: Identity after", main[i:i + 3]
        assert inside(boom, top) and inside(after, top), main[i:i + 3]
        if always:
            assert boom["ts"] + boom["dur"] <= after["ts"], "the raising forward's end is late: %s" % main[i:i + 3]
        i += 3
    else:
        inner = main[i + 1]
        want = {"nn.Module: Alpha": "nn.Module: Linear inner", "nn.Module: Beta": "nn.Module: ReLU inner"}
        assert inner["name"] == want[top["name"]] and inside(inner, top), main[i:i + 2]
        i += 2
PY
done
echo "torch modules (Python hooks) ok"
