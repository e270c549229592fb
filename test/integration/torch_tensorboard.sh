#!/usr/bin/env bash
# Trace parity with torch.profiler, seen through TensorBoard (issue 42
# item 6): the same script (test/programs/torch_tb.py, a small MLP, 6 steps)
# traced by traceprof (--step torch --pytorch modules,ops --python-stack,
# steps 2-4, TensorBoard's file names) and profiled by its own
# torch.profiler (with_stack=True, the same steps, tensorboard_trace_handler)
# into one logdir, two runs.  Checks that:
#   - the program prints the same losses plain, under traceprof and under
#     its own profiler, and traceprof says nothing;
#   - TensorBoard's profiler plugin, served over HTTP and queried as its page
#     queries it (test/lib/tb_http.py), answers for both runs: the views
#     Overview, Operator, Trace and Module, the Overview's times of steps
#     2, 3 and 4, aten::linear and aten::addmm in the Operator table, the
#     trace; and the Module view's tree of the model, the same shape as for
#     torch.profiler's trace.  Before, traceprof's modules were
#     user_annotation slices and the Module view answered 404;
#   - under --python-stack every op that torch.profiler gives a Python
#     stack has in ours (args.python_stack) the same innermost frame of the
#     script, file line and function (test/lib/torch_stack_parity.py).
#     Before, ops had no Python stack.
. "$TP_TOP/test/lib/common.sh"
[ "${TP_SANITIZER:-}" = "" ] || skip "PyTorch under $TP_SANITIZER is not tested"
# The ops (and their stacks) come from the library's RecordFunction observer,
# which runs on x86-64 only (preload/torch_ops.c).
[ "$(uname -m)" = x86_64 ] || skip "the RecordFunction observer runs on x86-64 only"
need_venv torch 'import torch, torch_tb_profiler, tensorboard, werkzeug' "lacks torch, tensorboard or torch-tb-profiler"
prog="$TP_TOP/test/programs/torch_tb.py"
plain=$("$py" "$prog" 6 2>plain.err) || die "the script failed without traceprof: $(cat plain.err)"
mkdir -p logs/torch
own=$("$py" "$prog" 6 --own "$PWD/logs/torch" 2>own.err) || die "the script failed under its own profiler: $(cat own.err)"
[ "$own" = "$plain" ] || die "its own profiler changed the losses: '$plain' vs '$own'"
out=$("$BUILD/traceprof" run -q --folder "$PWD/logs/traceprof" --filename 'rank{rank}.{step}.pt.trace.json' \
	--step torch --pytorch modules,ops --python-stack --schedule wait=1,warmup=1,active=3,repeat=1 \
	-- "$py" "$prog" 6 2>err.txt) || die "the script failed under traceprof: $(cat err.txt)"
[ "$out" = "$plain" ] || die "the losses changed under traceprof: '$plain' vs '$out'"
! grep traceprof err.txt || die "unexpected messages"
ours=$(ls logs/traceprof/*.pt.trace.json)
theirs=$(ls logs/torch/*.pt.trace.json)
[ "$(echo "$ours" | wc -l)" = 1 ] && [ "$(echo "$theirs" | wc -l)" = 1 ] ||
	die "want one file in each run: $(ls logs/*)"
check_trace "$ours" >/dev/null
"$py" "$TP_TOP/test/lib/tb_http.py" "$PWD/logs" traceprof torch 2,3,4 2>tb.err ||
	die "TensorBoard's plugin over HTTP: $(grep -v '^USDT\|^ERROR\|INFO' tb.err | tail -5)"
"$py" "$TP_TOP/test/lib/torch_stack_parity.py" "$ours" "$theirs" torch_tb.py ||
	die "Python stacks on ops differ from torch.profiler's"
echo "torch tensorboard ok"
