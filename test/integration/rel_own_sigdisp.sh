# Issue 30 items 1, 2 and 8 (dispositions): the program's signal state is
# exactly its own.  A C program prints every signal's disposition, its mask
# and its pending set at main(): the same with plain LD_PRELOAD, with
# `traceprof run` (which runs from Python, where SIGPIPE and SIGXFSZ are
# ignored) and with --python-stack as without traceprof.  A Python program
# finds its KeyboardInterrupt handler, gets KeyboardInterrupt with its
# finally run on SIGINT, and completes a multiprocessing Pool with the fork,
# spawn and forkserver start methods (forkserver copies the parent's SIGINT
# handler into each worker with signal.signal(), which refuses a foreign one).
. "$TP_TOP/test/lib/common.sh"
unset TRACEPROF_LIVE # as by default: the live file is on
prog="$BUILD/test/prog_sig_disp"
T="$BUILD/traceprof"
[ -x "$prog" ] || die "$prog not built"
[ -x "$T" ] || die "$T not built"
export TRACEPROF_FOLDER="$TP_TMP/tr"

# Under a sanitizer, its runtime (preloaded first, with or without traceprof)
# installs handlers of its own: the run without traceprof preloads it too.
base=()
[ -z "${TP_SANITIZER:-}" ] || base=(env "LD_PRELOAD=${TP_PRELOAD%:*}")
"${base[@]}" "$prog" >plain.txt || die "$prog failed"
grep -q '^13 default$' plain.txt || die "this shell does not give SIGPIPE its default: $(grep '^13 ' plain.txt)"
cmp_run() { # name, command...
	local name=$1
	shift
	"$@" >got.txt 2>got.err || die "$name: failed: $(cat got.err)"
	diff plain.txt got.txt >diff.txt || die "$name: the signal state differs from a plain run:
$(cat diff.txt)"
	echo "ok   C program, $name: same dispositions, mask and pending set"
}
cmp_run "LD_PRELOAD" env LD_PRELOAD="$TP_PRELOAD" "$prog"
cmp_run "traceprof run" "$T" run -q -- "$prog"
cmp_run "traceprof run --python-stack" "$T" run -q --python-stack 1 -- "$prog"
# A signal the caller ignores stays ignored (as under nohup).  Not SIGPIPE
# or SIGXFSZ: Python ignores both at start-up without keeping what it found,
# so `traceprof run` gives them their default (docs/guarantees.md).
(trap '' HUP; "${base[@]}" "$prog") >plain.txt
grep -q '^1 ignored$' plain.txt || die "trap '' HUP did not ignore SIGHUP"
cmp_run "traceprof run, SIGHUP ignored by the caller" bash -c "trap '' HUP; exec \"\$0\" run -q -- \"\$1\"" "$T" "$prog"

# Python under a sanitizer's runtime is another program (slow, its own
# handlers): the C program above is the check there.
[ -z "${TP_SANITIZER:-}" ] || { echo "note: Python cases not run under $TP_SANITIZER"; echo ok; exit 0; }
cat >py_sig.py <<'PY'
import multiprocessing as mp
import os
import signal
import sys
import time


def main():
    print("SIGINT handler is default_int_handler:",
          signal.getsignal(signal.SIGINT) is signal.default_int_handler)
    try:
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
            print("no KeyboardInterrupt")
        finally:
            print("finally ran")
    except KeyboardInterrupt:
        print("KeyboardInterrupt caught")
    for method in ("fork", "spawn", "forkserver"):
        if method not in mp.get_all_start_methods():
            print(method, "absent")
            continue
        with mp.get_context(method).Pool(2) as pool:
            print(method, "pool:", sum(pool.map(abs, range(-5, 5))))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
PY
seen=
for py in "$PYTHON" /usr/bin/python3; do
	[ -x "$(command -v "$py")" ] || continue
	real=$(readlink -f "$(command -v "$py")")
	case " $seen " in *" $real "*) continue ;; esac
	seen="$seen $real"
	timeout 60 "$py" py_sig.py >pyplain.txt 2>pyplain.err || die "$py py_sig.py failed: $(cat pyplain.err)"
	grep -q "is default_int_handler: True" pyplain.txt || die "$py: $(cat pyplain.txt)"
	grep -q "forkserver pool: 25" pyplain.txt || grep -q "forkserver absent" pyplain.txt ||
		die "$py: no forkserver pool: $(cat pyplain.txt)"
	pyrun() { # name, command...
		local name=$1 rc=0
		shift
		timeout 60 "$@" >pygot.txt 2>pygot.err || rc=$?
		[ $rc = 0 ] || die "$py, $name: exit status $rc (124: the pool hung): $(cat pygot.txt pygot.err | tail -20)"
		diff pyplain.txt pygot.txt >diff.txt || die "$py, $name: output differs from a plain run:
$(cat diff.txt)
$(tail -5 pygot.err)"
		echo "ok   $py, $name: KeyboardInterrupt, finally, fork/spawn/forkserver pools as without traceprof"
	}
	pyrun "LD_PRELOAD" env LD_PRELOAD="$TP_PRELOAD" "$py" py_sig.py
	pyrun "traceprof run" "$T" run -q -- "$py" py_sig.py
	pyrun "traceprof run --python-stack" "$T" run -q --python-stack 1 -- "$py" py_sig.py
	pyrun "traceprof run --step torch" "$T" run -q --step torch -- "$py" py_sig.py
done
echo ok
