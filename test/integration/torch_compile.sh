#!/usr/bin/env bash
# torch.compile under --step torch --pytorch modules,ops --python-stack,
# with real PyTorch 2.x (the torch venv's) and an unmodified script
# (test/programs/torch_compile.py): the model compiled whole
# (torch.compile(model)), by model.compile(), and inside a compiled
# function; backends eager, aot_eager and inductor (CPU, its compile
# workers in child processes); dynamic=True; fullgraph=True, and once a
# graph break of the program's own.  Each case runs without and with
# traceprof (at the same time, each with its own Inductor cache) and
# checks that:
#   - it compiles and runs with the same output, bit for bit: each step's
#     loss (float.hex), output and gradients (hashes of their bytes), the
#     parameters at the end, an RNG draw after the loop, and Dynamo's
#     counters (graph breaks, graphs, captured calls, recompiles);
#   - stderr is the same, less traceprof's lines (and the time and process
#     id of PyTorch's log lines);
#   - the trace shows the compiled region: the compiled module's call, and
#     the ops inside it (test/lib/torch_compile_check.py).
# The module hooks are the library's C ones, and in two cases the Python
# fallback (TP_TEST_TORCH_MODULE_HOOKS=python).
. "$TP_TOP/test/lib/common.sh"
[ "${TP_SANITIZER:-}" = "" ] || skip "PyTorch under $TP_SANITIZER is not tested"
need_venv torch 'import torch._dynamo' "torch does not import"
command -v "${CXX:-g++}" >/dev/null || skip "no C++ compiler for Inductor's CPU code"
prog="$TP_TOP/test/programs/torch_compile.py"
steps=4

# The log lines' time and process id differ from run to run.
norm() { grep -v '^traceprof: ' "$1" | sed -E 's/^([DIWEF])[0-9]{4} [0-9:.]+ +[0-9]+ /\1 /'; }

n=0
while read -r hooks how backend dynamic full; do
	n=$((n + 1))
	[ "$hooks" != - ] || hooks=
	case="$how $backend dynamic=$dynamic fullgraph=$full hooks=$hooks"
	TORCHINDUCTOR_CACHE_DIR="$PWD/cache_plain_$n" "$py" "$prog" $how $backend $dynamic $full $steps \
		>plain_$n.out 2>plain_$n.err &
	plain=$!
	env TORCHINDUCTOR_CACHE_DIR="$PWD/cache_tp_$n" ${hooks:+TP_TEST_TORCH_MODULE_HOOKS=$hooks} \
		"$BUILD/traceprof" run -q --folder "$PWD/tr_$n" --step torch --pytorch modules,ops \
		--python-stack -- "$py" "$prog" $how $backend $dynamic $full $steps >tp_$n.out 2>tp_$n.err \
		|| die "$case: failed under traceprof: $(tail -5 tp_$n.err)"
	wait $plain || die "$case: failed without traceprof: $(tail -5 plain_$n.err)"
	grep -q '^recompiles ' plain_$n.out || die "$case: the script did not finish: $(cat plain_$n.out)"
	cmp -s plain_$n.out tp_$n.out || die "$case: the output changed: $(diff plain_$n.out tp_$n.out)"
	[ "$(norm plain_$n.err)" = "$(norm tp_$n.err)" ] ||
		die "$case: stderr changed: $(diff <(norm plain_$n.err) <(norm tp_$n.err))"
	if [ $full = 0 ]; then
		# The program's own graph break is counted, the same with traceprof.
		grep -q '^graph_breaks [1-9]' plain_$n.out || die "$case: no graph break counted: $(cat plain_$n.out)"
	fi
	[ "$(ls tr_$n/*.json 2>/dev/null | wc -l)" = 1 ] || die "$case: want one trace file, got: $(ls tr_$n)"
	check_trace tr_$n/*.json >/dev/null
	"$PYTHON" "$TP_TOP/test/lib/torch_compile_check.py" tr_$n/*.json $how $steps >/dev/null ||
		die "$case: trace wrong"
done <<'CASES'
- module eager 0 1
- module aot_eager 1 1
- module inductor 0 1
- module eager 0 0
- method eager 0 1
python method aot_eager 0 1
python function eager 1 1
CASES
echo "torch compile ok ($n cases)"
