# Helpers for the framework tests (torch_hf.sh, torch_lightning.sh,
# torch_accelerate.sh, torch_fsdp.sh, torch_misc.sh); sourced after
# common.sh.  Hugging Face must never reach the network: the models are
# built from a config in the test, the token ids made with torch.
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1
export HF_HOME="$TP_TMP/hf" TOKENIZERS_PARALLELISM=false WANDB_DISABLED=true
# One thread per process (2 cores shared by the suite; torchrun would
# otherwise print a line about it), and the same hash seed in both runs.
export OMP_NUM_THREADS=1 PYTHONHASHSEED=0
# Python's warnings stay in the stderr compared: a framework prints the same
# ones with or without traceprof.
FW_T="$BUILD/traceprof"

# fw_port: a free TCP port on 127.0.0.1 for a rendezvous.
fw_port() { "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# fw_same NAME SCHEDULE CMD...: runs CMD without traceprof, then under
# `traceprof run --step torch --pytorch modules,ops --schedule SCHEDULE`
# with the trace files in ./NAME, and fails unless both exit 0 and print the
# same stdout and the same stderr less `traceprof:` lines and less lines
# matching $FW_NOISE (an extended regular expression, for lines a framework
# prints with times or addresses in them; empty by default).  It also fails
# when the traced run printed any `traceprof:` line: with -q each one is a
# warning (a hook that failed, events that stopped).  When CMD fails without
# traceprof and a function fw_unsupported is defined, it is called with the
# run's stderr file first (it may skip the test).  CMD may name
# the port of a rendezvous as @PORT: each run gets a free one.
fw_same() {
	local name=$1 sched=$2 rc0=0 rc1=0
	shift 2
	local -a a0=() a1=()
	local p0 p1 x
	p0=$(fw_port)
	p1=$(fw_port)
	for x in "$@"; do a0+=("${x//@PORT/$p0}"); a1+=("${x//@PORT/$p1}"); done
	"${a0[@]}" >"$name.out0" 2>"$name.err0" || rc0=$?
	[ "$rc0" = 0 ] || ! declare -F fw_unsupported >/dev/null || fw_unsupported "$name.err0"
	[ "$rc0" = 0 ] || die "$name: failed without traceprof (exit $rc0): $(tail -5 "$name.err0")"
	"$FW_T" run -q --folder "$PWD/$name" --step torch --pytorch modules,ops --schedule "$sched" \
		-- "${a1[@]}" >"$name.out1" 2>"$name.err1" || rc1=$?
	[ "$rc1" = 0 ] || die "$name: failed under traceprof (exit $rc1): $(tail -5 "$name.err1")"
	! grep -q '^traceprof:' "$name.err1" ||
		die "$name: traceprof said: $(grep '^traceprof:' "$name.err1" | head -3)"
	cmp -s "$name.out0" "$name.out1" ||
		die "$name: stdout changed under traceprof: $(diff "$name.out0" "$name.out1" | head -10)"
	fw_err "$name.err0" "${p0}" >"$name.e0"
	fw_err "$name.err1" "${p1}" >"$name.e1"
	cmp -s "$name.e0" "$name.e1" ||
		die "$name: stderr changed under traceprof: $(diff "$name.e0" "$name.e1" | head -10)"
	echo "$name: same output: $(head -c 300 "$name.out0" | tr '\n' ' ')"
}

# fw_err FILE PORT: FILE less traceprof's lines and $FW_NOISE's, the port
# written as @PORT.
fw_err() {
	grep -v '^traceprof:' "$1" | { if [ -n "${FW_NOISE:-}" ]; then grep -Ev "$FW_NOISE"; else cat; fi; } |
		sed "s/$2/@PORT/g" || true
}

# fw_check ARGS...: test/lib/torch_window.py (the windows' steps, modules and ops).
fw_check() { "$PYTHON" "$TP_TOP/test/lib/torch_window.py" "$@" || die "windows wrong: $*"; }
