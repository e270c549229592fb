#!/usr/bin/env bash
# PyTorch with no code change (issue 18): real PyTorch (the torch venv's, else Debian's) runs an
# unmodified training script (test/programs/torch_mlp.py: MLP, SGD, no
# traceprof import) under `traceprof run --step torch --pytorch modules`.
# Checks that:
#   - the losses do not change;
#   - the schedule's windows hold exactly the expected ProfilerStep#k (steps
#     come from the optimizer), and each recorded step holds one forward
#     event per module call, with the qualified names, nested as called;
#   - gradient accumulation: one step per optimizer step, not per pass;
#   - a second Python thread's module events are on that thread;
#   - ops in a PyTorch without CUDA: one traceprof: line, the rest recorded;
#   - a Python program that does not import torch runs exactly as before
#     (same output, same sys.path, torch never imported), and the user's
#     own sitecustomize still runs;
#   - plain LD_PRELOAD with PYTHONPATH=python/traceprof/pyboot works the same.
. "$TP_TOP/test/lib/common.sh"
[ "${TP_SANITIZER:-}" = "" ] || skip "PyTorch under $TP_SANITIZER is not tested"
py=$(python_where 'import torch')
[ -n "$py" ] || skip "no PyTorch: no torch venv (scripts/install-deps --with-optional makes it), none for $PYTHON or /usr/bin/python3"
prog="$TP_TOP/test/programs/torch_mlp.py"
T="$BUILD/traceprof"

# 1. Schedule over optimizer steps, module events.
plain=$("$py" "$prog" 10) || die "the script failed without traceprof: $plain"
out=$("$T" run -q --folder "$PWD/tr" --step torch --pytorch modules \
	--schedule wait=1,warmup=1,active=2,repeat=2 -- "$py" "$prog" 10 2>err.txt) \
	|| die "the script failed under traceprof: $(cat err.txt)"
[ "$out" = "$plain" ] || die "losses changed under traceprof: '$plain' vs '$out'"
[ ! -s err.txt ] || die "unexpected messages: $(cat err.txt)"
[ "$(ls tr/*.json 2>/dev/null | wc -l)" = 2 ] \
	|| die "want the schedule's 2 files, got: $(ls tr 2>&1) (no steps from the optimizer?)"
check_trace tr/*.json >/dev/null
"$PYTHON" - tr/*.json <<'PY' || die "steps or module events wrong"
import json, sys
NAMES = ["nn.Module: MLP", "nn.Module: Sequential encoder", "nn.Module: Linear encoder.0",
         "nn.Module: ReLU encoder.1", "nn.Module: Linear head"]
got = {}
for path in sys.argv[1:]:
    ev = json.load(open(path))["traceEvents"]
    steps = sorted((e for e in ev if e.get("ph") == "X" and e["name"].startswith("ProfilerStep#")),
                   key=lambda e: e["ts"])
    mods = [e for e in ev if e.get("ph") == "X" and e["name"].startswith("nn.Module: ")]
    got[tuple(e["name"] for e in steps)] = path
    for s in steps:
        inside = [m for m in mods if s["ts"] <= m["ts"] and m["ts"] + m["dur"] <= s["ts"] + s["dur"]]
        names = sorted(m["name"] for m in inside)
        assert names == sorted(NAMES), (path, s["name"], names)
        by = {m["name"]: m for m in inside}
        def within(a, b):
            a, b = by[a], by[b]
            return b["ts"] <= a["ts"] and a["ts"] + a["dur"] <= b["ts"] + b["dur"]
        assert within("nn.Module: Linear encoder.0", "nn.Module: Sequential encoder")
        assert within("nn.Module: Sequential encoder", "nn.Module: MLP")
        assert within("nn.Module: Linear head", "nn.Module: MLP")
    assert len(mods) == 5 * len(steps), (path, len(mods), len(steps))
want = {("ProfilerStep#2", "ProfilerStep#3"), ("ProfilerStep#6", "ProfilerStep#7")}
assert set(got) == want, sorted(got)
print("schedule over optimizer steps ok:", sorted(got))
PY

# 2. Gradient accumulation (2 passes a step) in a second thread, and ops in
# a PyTorch without CUDA.
cuda=$("$py" -c 'import torch; print(int(torch.backends.cuda.is_built()))')
out=$("$T" run -q --folder "$PWD/acc" --step torch --pytorch modules,ops \
	-- "$py" "$prog" 3 --accumulate 2 --thread 2>err.txt) \
	|| die "accumulate run failed: $(cat err.txt)"
[ "$out" = "$("$py" "$prog" 3 --accumulate 2 --thread)" ] || die "losses changed (accumulate)"
if [ "$cuda" = 0 ]; then
	[ "$(grep -c '^traceprof:' err.txt)" = 1 ] && grep -q "built without CUDA" err.txt \
		|| die "want one line about ops without CUDA: $(cat err.txt)"
fi
"$PYTHON" - acc/*.json <<'PY' || die "accumulation steps wrong"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
pid = ev[0]["pid"]
steps = sorted((e for e in ev if e.get("ph") == "X" and e["name"].startswith("ProfilerStep#")),
               key=lambda e: e["ts"])
mods = [e for e in ev if e.get("ph") == "X" and e["name"].startswith("nn.Module: ")]
# Three optimizer steps: #0..#2 hold two forward passes each; #3 runs to exit.
assert [s["name"] for s in steps[:3]] == ["ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2"]
for s in steps[:3]:
    n = sum(1 for m in mods if s["ts"] <= m["ts"] <= s["ts"] + s["dur"])
    assert n == 10, (s["name"], n)
assert len(mods) == 30, len(mods)
assert all(m["tid"] != pid for m in mods), "module events not on the training thread"
print("accumulation ok")
PY

# 3. A program that does not import torch: exactly as before.
mkdir -p user
# (A mark on sys, not in the environment: `traceprof run` itself is a
# Python program that runs this sitecustomize too, and its children inherit
# its environment.)
cat >user/sitecustomize.py <<'PY'
import sys
sys.USER_SITECUSTOMIZE_RAN = "yes"
PY
# The same path, the same modules loaded (none of ours, no torch), the
# user's sitecustomize ran; only an import finder waits for torch.
probe='import os, sys; m = sorted(sys.modules); import json; print(json.dumps([sys.path, m, "torch" in m, getattr(sys, "USER_SITECUSTOMIZE_RAN", None)]))'
a=$(PYTHONPATH=$PWD/user "$py" -c "$probe")
b=$(PYTHONPATH=$PWD/user "$T" run -q --folder "$PWD/np" --step torch --pytorch modules,ops \
	-- "$py" -c "$probe") || die "non-torch program failed"
[ "$a" = "$b" ] || die "a non-torch program saw a different world: '$a' vs '$b'"
case "$b" in *'false, "yes"]') ;; *) die "torch imported or user sitecustomize lost: $b" ;; esac
# The user's sitecustomize also runs beside the hooks in a torch program;
# a script that also calls traceprof.step() does not count steps twice.
PYTHONPATH=$PWD/user:$TP_TOP/python "$T" run -q --folder "$PWD/us" --step torch -- "$py" -c '
import sys, torch, traceprof
assert getattr(sys, "USER_SITECUSTOMIZE_RAN", None) == "yes"
opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
for _ in range(3):
    opt.step()
    traceprof.step()
' || die "user sitecustomize with torch"
n=$("$PYTHON" -c 'import json,sys; print(sum(1 for e in json.load(open(sys.argv[1]))["traceEvents"] if e["name"].startswith("ProfilerStep#")))' us/*.json)
[ "$n" = 4 ] || die "3 optimizer steps gave $n ProfilerStep events (want 4: #0-#3)"

# 4. Plain LD_PRELOAD: one extra variable, PYTHONPATH.
out=$(LD_PRELOAD="$TP_PRELOAD" PYTHONPATH="$TP_TOP/python/traceprof/pyboot" TRACEPROF_STEP=torch \
	TRACEPROF_PYTORCH=modules TRACEPROF_FOLDER="$PWD/pre" "$py" "$prog" 2 2>err.txt) \
	|| die "LD_PRELOAD run failed: $(cat err.txt)"
"$PYTHON" - pre/*.json <<'PY' || die "LD_PRELOAD run: wrong events"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
steps = sorted(e["name"] for e in ev if e["name"].startswith("ProfilerStep#"))
assert steps == ["ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2"], steps
assert sum(1 for e in ev if e["name"].startswith("nn.Module: ")) == 10
print("LD_PRELOAD + PYTHONPATH ok")
PY
echo "torch zero-code ok"
