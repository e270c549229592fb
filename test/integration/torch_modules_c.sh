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
#   - every begin has its end, none is left open, and a second thread's
#     module events are on that thread (test/lib/torch_modules_check.py).
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
"$PYTHON" "$TP_TOP/test/lib/torch_modules_check.py" tr/*.json "$(echo "$out" | sed -n 's/^order //p')" \
	$rounds ends || die "module events wrong"
echo "torch modules (C hooks) ok"
