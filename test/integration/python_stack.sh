# Issue 18, TRACEPROF_PYTHON_STACK: a Python program calls, through ctypes, a
# library (test/scope/probe.c) that calls the CUDA runtime (the stand-in of
# major 13), from the main thread and from a second Python thread.  Each
# recorded call must carry args.python_stack with the exact file, line and
# function of each frame, innermost first.  ctypes.PyDLL keeps the GIL
# across the call, which the capture needs (preload/pystack.c); with
# ctypes.CDLL, which releases it, the calls are recorded without a Python
# stack.  With the option off no event has one.
. "$TP_TOP/test/lib/common.sh"
SC="$BUILD/standin/scope"
[ -e "$SC/libprobe13.so" ] || die "scope programs not built ($SC); run make check"
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 9))' ||
	skip "$PYTHON is older than 3.9 (no PyFrame_GetCode)"

# The line numbers below are part of the test: keep the layout.
cat >stk.py <<'PY'
import ctypes, sys, threading
lib = (ctypes.PyDLL if sys.argv[2] == "pydll" else ctypes.CDLL)(sys.argv[1])
def probe():
    v = ctypes.c_int(0)
    return lib.tp_probe(ctypes.byref(v))
def outer():
    return probe()
print("main", outer())
t = threading.Thread(target=outer, name="second")
t.start()
t.join()
PY

# Prints, per recorded CUDA call, "tid name | frame; frame; ..." sorted, with
# the main thread's tid written as "main" and the other one as "other".
stacks() {
	"$PYTHON" - "$TP_TMP/$1" <<'PY'
import glob, json, sys
out, tids = [], []
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    for e in json.load(open(f))["traceEvents"]:
        if e.get("ph") != "X" or not e.get("cat", "").startswith("cuda"):
            continue
        st = e.get("args", {}).get("python_stack")
        if st is not None:
            # co_filename is the script's absolute path (3.9+): compare
            # base names.  The threading module's lines vary by version.
            st = [s.rsplit("/", 1)[-1] for s in st]
            st = [s if s.startswith(("stk.py:", "prof.py:", "shadow.py:")) else
                  s.split(":")[0] + " " + s.split(" ")[-1] for s in st]
        out.append((e["ts"], e["tid"], e["name"], st))
out.sort()
for ts, tid, name, st in out:
    if tid not in tids:
        tids.append(tid)
    who = "main" if tids.index(tid) == 0 else "other"
    print("%s %s | %s" % (who, name, "none" if st is None else "; ".join(st)))
PY
}

run() {
	local name=$1 mode=$2
	shift 2
	env TRACEPROF_FOLDER="$TP_TMP/$name" TRACEPROF_CUPTI=off "$@" \
		LD_PRELOAD="$TP_PRELOAD" "$PYTHON" stk.py "$SC/libprobe13.so" "$mode" \
		>"$name.out" 2>"$name.err" || die "$name: failed: $(cat "$name.err")"
	grep -qx "main 0" "$name.out" || die "$name: the program's result changed: $(cat "$name.out")"
}

expect() {
	local name=$1 want=$2 got
	got=$(stacks "$name")
	[ "$got" = "$want" ] || die "$name: python stacks
--- expected
$want
--- got
$got"
	echo "$name: ok"
}

main_stack="stk.py:5 probe; stk.py:7 outer; stk.py:8 <module>"
# 1. PyDLL, option on: exact frames on both threads; the second thread's
#    outer() is called by Thread.run().
run on pydll TRACEPROF_PYTHON_STACK=1
thread_stack="stk.py:5 probe; stk.py:7 outer; threading.py run; threading.py _bootstrap_inner; threading.py _bootstrap"
expect on "main cudaGetDeviceCount | $main_stack
main cudaRuntimeGetVersion | $main_stack
other cudaGetDeviceCount | $thread_stack
other cudaRuntimeGetVersion | $thread_stack"

# 2. With native stacks too: both lists on each call.
#    Not under ThreadSanitizer: TRACEPROF_WITH_STACK=1 alone (libunwind in
#    this uninstrumented Python) crashes there, with or without this option.
if [ "${TP_SANITIZER:-}" = tsan ]; then
	echo "both: SKIP under ThreadSanitizer (native stacks in Python crash there without this option too)"
else
	run both pydll TRACEPROF_PYTHON_STACK=1 TRACEPROF_WITH_STACK=1
	expect both "main cudaGetDeviceCount | $main_stack
main cudaRuntimeGetVersion | $main_stack
other cudaGetDeviceCount | $thread_stack
other cudaRuntimeGetVersion | $thread_stack"
	"$PYTHON" - "$TP_TMP/both" <<'PY' || die "both: native stacks missing next to the Python ones"
import glob, json, sys
ev = [e for f in glob.glob(sys.argv[1] + "/*.json") for e in json.load(open(f))["traceEvents"]
      if e.get("ph") == "X" and e.get("cat", "").startswith("cuda")]
assert len(ev) == 4 and all(e["args"].get("stack") for e in ev), ev
assert any("tp_probe" in s for s in ev[0]["args"]["stack"]), ev[0]["args"]["stack"]
PY
fi

# 3. Option off: the same calls, no Python stack.
run off pydll
expect off "main cudaGetDeviceCount | none
main cudaRuntimeGetVersion | none
other cudaGetDeviceCount | none
other cudaRuntimeGetVersion | none"

# 4. ctypes.CDLL releases the GIL around the call: without python/traceprof/pyboot
#    (plain LD_PRELOAD) recorded with no stack, and nothing breaks.
run cdll cdll TRACEPROF_PYTHON_STACK=1
expect cdll "main cudaGetDeviceCount | none
main cudaRuntimeGetVersion | none
other cudaGetDeviceCount | none
other cudaRuntimeGetVersion | none"

# 5. Through `traceprof run --python-stack`: the same stacks.
TRACEPROF_LIB="$TP_LIB" "$BUILD/traceprof" run -q --folder "$TP_TMP/cli" --cupti off --python-stack -- \
	"$PYTHON" stk.py "$SC/libprobe13.so" pydll >cli.out 2>cli.err || die "cli: failed: $(cat cli.err)"
expect cli "main cudaGetDeviceCount | $main_stack
main cudaRuntimeGetVersion | $main_stack
other cudaGetDeviceCount | $thread_stack
other cudaRuntimeGetVersion | $thread_stack"

# 6. With python/traceprof/pyboot on PYTHONPATH (what `traceprof run --python-stack`
#    does), the C profile function keeps a shadow stack per thread: ctypes.CDLL
#    calls, made without the GIL, get the same exact stacks, on both threads.
BOOT="$TP_TOP/python/traceprof/pyboot"
run cdll_boot cdll TRACEPROF_PYTHON_STACK=1 PYTHONPATH="$BOOT"
expect cdll_boot "main cudaGetDeviceCount | $main_stack
main cudaRuntimeGetVersion | $main_stack
other cudaGetDeviceCount | $thread_stack
other cudaRuntimeGetVersion | $thread_stack"
run pydll_boot pydll TRACEPROF_PYTHON_STACK=1 PYTHONPATH="$BOOT"
expect pydll_boot "main cudaGetDeviceCount | $main_stack
main cudaRuntimeGetVersion | $main_stack
other cudaGetDeviceCount | $thread_stack
other cudaRuntimeGetVersion | $thread_stack"
TRACEPROF_LIB="$TP_LIB" "$BUILD/traceprof" run -q --folder "$TP_TMP/cli_cdll" --cupti off --python-stack -- \
	"$PYTHON" stk.py "$SC/libprobe13.so" cdll >cli_cdll.out 2>cli_cdll.err || die "cli_cdll: failed: $(cat cli_cdll.err)"
expect cli_cdll "main cudaGetDeviceCount | $main_stack
main cudaRuntimeGetVersion | $main_stack
other cudaGetDeviceCount | $thread_stack
other cudaRuntimeGetVersion | $thread_stack"

# 7. Another profiler replaces traceprof's (cProfile, as a user would): the
#    shadow is dropped, not read, and the program runs as before.
cat >prof.py <<'PY'
import cProfile, ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
def probe():
    v = ctypes.c_int(0)
    return lib.tp_probe(ctypes.byref(v))
def deep(n):
    return deep(n - 1) if n else probe()
p = cProfile.Profile()
p.enable()
deep(20)
p.disable()
print("main", deep(3))
PY
env TRACEPROF_FOLDER="$TP_TMP/prof" TRACEPROF_CUPTI=off TRACEPROF_PYTHON_STACK=1 PYTHONPATH="$BOOT" \
	LD_PRELOAD="$TP_PRELOAD" "$PYTHON" prof.py "$SC/libprobe13.so" >prof.out 2>prof.err ||
	die "prof: failed: $(cat prof.err)"
grep -qx "main 0" prof.out || die "prof: the program's result changed: $(cat prof.out)"
# Python 3.12's cProfile uses sys.monitoring and leaves the profile function
# in place: exact stacks there; on 3.9-3.11 it replaces it: no stacks.
deep20="prof.py:5 probe$(printf '; prof.py:7 deep%.0s' $(seq 21)); prof.py:10 <module>"
deep3="prof.py:5 probe$(printf '; prof.py:7 deep%.0s' $(seq 4)); prof.py:12 <module>"
got=$(stacks prof)
[ "$got" = "main cudaGetDeviceCount | none
main cudaRuntimeGetVersion | none
main cudaGetDeviceCount | none
main cudaRuntimeGetVersion | none" ] || [ "$got" = "main cudaGetDeviceCount | $deep20
main cudaRuntimeGetVersion | $deep20
main cudaGetDeviceCount | $deep3
main cudaRuntimeGetVersion | $deep3" ] || die "prof: wrong stacks after another profiler: $got"
echo "prof: ok ($(echo "$got" | head -1 | cut -c1-60)...)"

# 7b. The shadow across exceptions, generators and a stack deeper than the
#     128 frames it keeps (CDLL, so only the shadow can answer): frames
#     left by an exception and by a yield are popped; while deeper than 128
#     a call has no stack, and after it the stacks are exact again.
cat >shadow.py <<'PY'
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
def probe():
    v = ctypes.c_int(0)
    return lib.tp_probe(ctypes.byref(v))
def boom(n):
    if n: boom(n - 1)
    raise ValueError
def gen():
    yield probe()
    yield probe()
def deep(n):
    return deep(n - 1) if n else probe()
try: boom(5)
except ValueError: pass
g = gen()
next(g)
deep(150)
next(g)
print("main", probe())
PY
env TRACEPROF_FOLDER="$TP_TMP/shadow" TRACEPROF_CUPTI=off TRACEPROF_PYTHON_STACK=1 PYTHONPATH="$BOOT" \
	LD_PRELOAD="$TP_PRELOAD" "$PYTHON" shadow.py "$SC/libprobe13.so" >shadow.out 2>shadow.err ||
	die "shadow: failed: $(cat shadow.err)"
grep -qx "main 0" shadow.out || die "shadow: the program's result changed: $(cat shadow.out)"
want_gen1="shadow.py:5 probe; shadow.py:10 gen; shadow.py:17 <module>"
want_gen2="shadow.py:5 probe; shadow.py:11 gen; shadow.py:19 <module>"
want_main="shadow.py:5 probe; shadow.py:20 <module>"
expect shadow "main cudaGetDeviceCount | $want_gen1
main cudaRuntimeGetVersion | $want_gen1
main cudaGetDeviceCount | none
main cudaRuntimeGetVersion | none
main cudaGetDeviceCount | $want_gen2
main cudaRuntimeGetVersion | $want_gen2
main cudaGetDeviceCount | $want_main
main cudaRuntimeGetVersion | $want_main"

# 8. Real PyTorch (the torch venv's CUDA build of torch 2.x, made by
#    scripts/install-deps --with-optional) under --python-stack with --step
#    torch: the profile function runs through torch's import and a training
#    loop (with a data-loading thread), and the losses are those of a run
#    without it.
TORCH_PY=$(python_where 'import torch')
if [ -n "${TP_SANITIZER:-}" ]; then
	# As the other PyTorch tests: torch 2.x under TSan took this test to
	# 2051 MiB, over the suite's 2 GiB limit.
	echo "torch: SKIP (PyTorch under $TP_SANITIZER is not tested)"
elif [ -z "$TORCH_PY" ]; then
	echo "torch: SKIP (no torch venv, and no PyTorch for $PYTHON or /usr/bin/python3; scripts/install-deps --with-optional)"
else
	cat >train.py <<'PY'
import threading, queue, torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
q = queue.Queue()
def load():
    g = torch.Generator().manual_seed(1)
    for _ in range(6):
        q.put(torch.randn(4, 8, generator=g))
threading.Thread(target=load).start()
for i in range(6):
    x = q.get()
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("loss %d %.6f" % (i, loss.item()))
PY
	"$TORCH_PY" train.py >torch.plain 2>torch.plain.err || die "torch: failed without traceprof: $(cat torch.plain.err)"
	TRACEPROF_LIB="$TP_LIB" "$BUILD/traceprof" run -q --folder "$TP_TMP/torch" --cupti off \
		--python-stack --step torch -- "$TORCH_PY" train.py >torch.traced 2>torch.err ||
		die "torch: failed under --python-stack: $(cat torch.err)"
	diff torch.plain torch.traced || die "torch: losses changed under --python-stack"
	! grep -q "traceprof:" torch.err || die "torch: traceprof complained: $(cat torch.err)"
	echo "torch: same losses ($(wc -l <torch.plain) steps)"
fi
