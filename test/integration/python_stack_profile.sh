#!/usr/bin/env bash
# --python-stack leaves the program's view of profiling as without traceprof
# (issue 41 item 6): sys.getprofile() and threading.getprofile() answer None
# in the main thread and in the threads the threading module starts (and
# sys.monitoring's tool ids are all free, where the Python has it: 3.12+;
# this venv's 3.11 has none, so that line checks nothing there), and the
# threads' stacks stay exact (the shadow is installed without a Python frame
# of traceprof's under the thread's own).  A program that sets its own
# profile function (sys.setprofile, threading.setprofile, cProfile) keeps
# it: its function sees its events, as without traceprof, and traceprof
# says once what is lost.
. "$TP_TOP/test/lib/common.sh"
SC="$BUILD/standin/scope"
[ -e "$SC/libprobe13.so" ] || die "scope programs not built ($SC); run make check"
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 9))' ||
	skip "$PYTHON is older than 3.9 (no PyFrame_GetCode)"
BOOT="$TP_TOP/python/traceprof/pyboot"

cat >view.py <<'PY'
import ctypes, sys, threading
lib = ctypes.CDLL(sys.argv[1])
def view(where):
    mon = None
    if hasattr(sys, "monitoring"):
        mon = [sys.monitoring.get_tool(i) for i in range(6)]
    print(where, "sys.getprofile", sys.getprofile(), "threading.getprofile",
          threading.getprofile(), "monitoring", mon)
def probe():
    v = ctypes.c_int(0)
    return lib.tp_probe(ctypes.byref(v))
def work():
    view("thread")
    probe()
view("main")
t = threading.Thread(target=work)
t.start()
t.join()
# The program's own profile functions: each sees its events.
seen = []
def mine(frame, event, arg):
    if event == "call":
        seen.append(frame.f_code.co_name)
def marked():
    pass
sys.setprofile(mine)
marked()
sys.setprofile(None)
threading.setprofile(mine)
t = threading.Thread(target=marked)
t.start()
t.join()
threading.setprofile(None)
import cProfile
p = cProfile.Profile()
p.enable()
marked()
p.disable()
ncalls = [s for s in p.getstats() if getattr(s.code, "co_name", "") == "marked"]
print("mine saw", seen.count("marked"), "cProfile saw", ncalls[0].callcount if ncalls else 0)
PY

run() { # NAME, then the environment's extra words
	local name=$1
	shift
	env TRACEPROF_FOLDER="$TP_TMP/$name" TRACEPROF_CUPTI=off "$@" LD_PRELOAD="$TP_PRELOAD" \
		"$PYTHON" view.py "$SC/libprobe13.so" >"$name.out" 2>"$name.err" ||
		die "$name: failed: $(cat "$name.err")"
}
"$PYTHON" view.py "$SC/libprobe13.so" >plain.out 2>plain.err || die "plain run failed: $(cat plain.err)"
run stack TRACEPROF_PYTHON_STACK=1 PYTHONPATH="$BOOT"
diff plain.out stack.out || die "the program's view changed under --python-stack"
grep -q "mine saw 2 cProfile saw 1" stack.out || die "the program's profile functions missed events: $(cat stack.out)"
# One line, once, about what the program's profile functions replaced.
n=$(grep -c "^traceprof: TRACEPROF_PYTHON_STACK: the program set a profile function" stack.err)
[ "$n" = 1 ] || die "want one line about the lost profile function, got $n: $(cat stack.err)"
! grep -v "^traceprof: TRACEPROF_PYTHON_STACK: the program set" stack.err | grep -q . ||
	die "stray stderr: $(cat stack.err)"
echo "view: $(head -1 stack.out)"

# The second thread's stack: exact, with threading's frames and no frame of
# traceprof's (the CDLL call has only the shadow to answer from).
"$PYTHON" - "$TP_TMP/stack" <<'PY' || die "thread stack wrong"
import glob, json, sys
ev = [e for f in glob.glob(sys.argv[1] + "/*.json") for e in json.load(open(f))["traceEvents"]
      if e.get("ph") == "X" and e.get("cat", "").startswith("cuda")]
assert ev, "no CUDA call recorded"
for e in ev:
    st = [s.rsplit("/", 1)[-1] for s in e["args"].get("python_stack", [])]
    short = [s if s.startswith("view.py:") else s.split(":")[0] + " " + s.split(" ")[-1] for s in st]
    want = ["view.py:11 probe", "view.py:14 work", "threading.py run",
            "threading.py _bootstrap_inner", "threading.py _bootstrap"]
    assert short == want, short
print("thread stack ok")
PY

# Without pyboot nothing is installed, and nothing is said.
run nostack TRACEPROF_PYTHON_STACK=1
diff plain.out nostack.out || die "the program's view changed with plain LD_PRELOAD"
[ ! -s nostack.err ] || die "nostack: stderr: $(cat nostack.err)"
echo "python stack profile ok"
