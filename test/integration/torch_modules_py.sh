#!/usr/bin/env bash
# --pytorch modules through the Python fallback hooks of
# python/traceprof/pyboot/traceprof_torch.py (what PyTorch < 2.1 and an
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
# child starts); a second thread's module events are on that thread
# (test/lib/torch_modules_check.py).
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
	raised=ends
	[ $mode = python ] || raised=late
	"$PYTHON" "$TP_TOP/test/lib/torch_modules_check.py" tr_$mode/*.json \
		"$(echo "$out" | sed -n 's/^order //p')" $rounds $raised || die "$mode: module events wrong"
done
echo "torch modules (Python hooks) ok"
