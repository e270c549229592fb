# Issue 46 item 3, the Python stack (--python-stack): a stalled thread's
# Python stack in the live file and on top's line.  Two ranks of a Python
# job on the stand-in runtime (test/programs/py_live_hang.py), each blocked
# in cudaStreamSynchronize at its 8th synchronization for 6 s, outside its
# only window (steps 0-2).  While they block:
#   - rank 0's live file names the main thread's Python stack, innermost
#     first, names only: sync < train_step < main < <module>, all from the
#     program's file, depth 4; `top --once --stall-after 1` shows rank 0
#     stalled in cudaStreamSynchronize with "python: sync < train_step < main
#     < <module>" on its line, and --json the same frames;
#   - rank 1 set a profile function of its own (sys.setprofile) at step 5:
#     the shadow stops following its thread, so its file shows no stack
#     (null), never a stale one, and its line names none;
# and without --python-stack no file has a stack.  That second job blocks in
# cudaMemset instead (8th call, 6 s), a call that is not a synchronization,
# outside the window: the x86-64 wrappers publish it while no window
# records too (docs/live.md), so both files show it open, its start the same
# in two reads a second apart, and top's lines say "stalled N s in
# cudaMemset".  A process whose very first CUDA call blocks shows its
# stack too (its state is made inside that call).  Each job's output is
# what it is untraced.
. "$TP_TOP/test/lib/common.sh"
SI="$BUILD/standin"
[ -e "$SI/libcudart.so.13" ] || die "stand-ins not built ($SI); run make check"
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 9))' ||
	skip "$PYTHON is older than 3.9 (no PyFrame_GetCode)"
PROG="$TP_TOP/test/programs/py_live_hang.py"
export LD_LIBRARY_PATH="$SI${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export WORLD_SIZE=2 STANDIN_SYNC_SLEEP_AT=8 STANDIN_SYNC_SLEEP_MS=6000
export TRACEPROF_SCHEDULE=wait=0,warmup=0,active=3,repeat=1 TRACEPROF_CUPTI=off
unset TRACEPROF_LIVE TRACEPROF_LIVE_DIR

[ "$(STANDIN_SYNC_SLEEP_AT= "$PYTHON" "$PROG" 12)" = "done 12" ] || die "untraced run failed"
[ "$(uname -m)" = x86_64 ] && [ "${TP_SANITIZER:-}" != asan ] && asm=1 || asm=0 # the assembly wrappers

# The environment `traceprof run --python-stack` gives (python_stack.sh runs
# the command itself); LD_PRELOAD as the sanitizer builds need it.
BOOT="$TP_TOP/python/traceprof/pyboot"
job() { # FOLDER, then the environment's extra words
	local folder=$1
	shift
	env RANK=0 LOCAL_RANK=0 TRACEPROF_FOLDER="$folder" "$@" LD_PRELOAD="$TP_PRELOAD" \
		"$PYTHON" "$PROG" 12 >"$folder.r0.out" 2>"$folder.r0.err" &
	pids="$!"
	env RANK=1 LOCAL_RANK=1 OWN_PROFILE_AT=5 TRACEPROF_FOLDER="$folder" "$@" \
		LD_PRELOAD="$TP_PRELOAD" "$PYTHON" "$PROG" 12 >"$folder.r1.out" 2>"$folder.r1.err" &
	pids="$pids $!"
}
finish() { # FOLDER
	local p
	for p in $pids; do
		wait "$p" || die "$1: a traced rank failed: $(cat "$1".r*.err)"
	done
	for p in 0 1; do
		[ "$(cat "$1.r$p.out")" = "done 12" ] || die "$1: rank $p's output: $(cat "$1.r$p.out")"
	done
}

# Waits until both ranks block (both 1.2 s in CALL; twice, 1 s apart, with
# the same start, with a second argument).
wait_blocked() { # FOLDER CALL [twice]
	"$PYTHON" - "$1/.live" "$2" "${3:-}" <<'PY'
import glob, json, sys, time
live, call, twice = sys.argv[1:]
t0 = time.time()
first = None
while time.time() - t0 < 60:
    js = [json.load(open(p)) for p in glob.glob(live + "/*.json")]
    blocked = {j["rank"]: (j["updated_ns"], o["since_ns"]) for j in js for t in j["threads"]
               for o in t["open"] if o["kind"] == "cuda" and o["name"] == call and
               j["updated_ns"] - o["since_ns"] > 1.2e9}
    if len(blocked) == 2:
        if not twice:
            sys.exit(0)
        if first is None:
            first = blocked
            time.sleep(1.5)
            continue
        for r in (0, 1):
            assert blocked[r][1] == first[r][1] and blocked[r][0] > first[r][0], (first, blocked)
        print("both ranks in %s for %.1f s, then %.1f s" % (
            call, (first[0][0] - first[0][1]) / 1e9, (blocked[0][0] - blocked[0][1]) / 1e9))
        sys.exit(0)
    time.sleep(0.2)
sys.exit("never saw both ranks blocked in %s: %s" % (call, js))
PY
}

job "$TP_TMP/py" TRACEPROF_PYTHON_STACK=1 PYTHONPATH="$BOOT"
wait_blocked "$TP_TMP/py" cudaStreamSynchronize || { kill $pids; die "with --python-stack"; }
"$BUILD/traceprof" top --once --stall-after 1 "$TP_TMP/py" >top.out 2>top.err ||
	{ kill $pids; die "top --once failed: $(cat top.err)"; }
"$BUILD/traceprof" top --json --stall-after 1 "$TP_TMP/py" >top.json 2>>top.err ||
	{ kill $pids; die "top --json failed: $(cat top.err)"; }
cp "$TP_TMP"/py/.live/*.json . 2>/dev/null
"$PYTHON" - "$TP_TMP/py/.live" "$PROG" <<'PY' || { kill $pids; die "with --python-stack: $(cat top.out)"; }
import glob, json, re, sys
live, prog = sys.argv[1:]
js = {j["rank"]: j for j in (json.load(open(p)) for p in glob.glob(live + "/*.json"))}
main0 = [t for t in js[0]["threads"] if t["tid"] == js[0]["pid"]]
assert main0 and main0[0]["python"], js[0]["threads"]
py = main0[0]["python"]
want = ["sync", "train_step", "main", "<module>"]
assert [f["func"] for f in py["frames"]] == want, py
assert all(f["file"] == prog for f in py["frames"]), py
assert (py["depth"], py["inner_unknown"]) == (4, 0), py
# Rank 1 replaced the profile function: no stack, not a stale one.
assert all(t["python"] is None for t in js[1]["threads"]), js[1]["threads"]
assert any(o["name"] == "cudaStreamSynchronize" for t in js[1]["threads"] for o in t["open"])
lines = open("top.out").read().splitlines()
r0 = [l for l in lines if re.match(r"rank 0 ", l)]
r1 = [l for l in lines if re.match(r"rank 1 ", l)]
assert len(r0) == 1 and re.search(r"stalled \d+ s in cudaStreamSynchronize; "
                                   r"python: sync < train_step < main < <module>$", r0[0]), lines
assert len(r1) == 1 and "stalled" in r1[0] and "python" not in r1[0], lines
snap = json.load(open("top.json"))
rows = {r["rank"]: r for r in snap["processes"]}
assert [f["func"] for f in rows[0]["in"]["python"]] == want, rows[0]["in"]
assert rows[1]["in"]["python"] is None, rows[1]["in"]
print(r0[0])
PY
finish "$TP_TMP/py"

# Without --python-stack: no stack anywhere.  Blocked in cudaMemset (x86-64),
# else in the synchronization again.
if [ $asm = 1 ]; then
	export STANDIN_SYNC_SLEEP_AT= STANDIN_MEMSET_SLEEP_AT=8 STANDIN_MEMSET_SLEEP_MS=6000
	call=cudaMemset
else
	call=cudaStreamSynchronize
fi
job "$TP_TMP/plain"
wait_blocked "$TP_TMP/plain" $call twice || { kill $pids; die "without --python-stack"; }
"$BUILD/traceprof" top --once --stall-after 1 "$TP_TMP/plain" >top2.out 2>top2.err ||
	{ kill $pids; die "top --once failed: $(cat top2.err)"; }
"$PYTHON" - "$TP_TMP/plain/.live" $call <<'PY' || { kill $pids; die "without --python-stack: $(cat top2.out)"; }
import glob, json, re, sys
ts = [t for p in glob.glob(sys.argv[1] + "/*.json") for t in json.load(open(p))["threads"]]
assert ts and all(t["python"] is None for t in ts), ts
lines = [l for l in open("top2.out").read().splitlines() if re.match(r"rank [01] ", l)]
assert len(lines) == 2 and all(re.search(r"stalled \d+ s in %s$" % sys.argv[2], l) for l in lines), lines
print(lines[0])
PY
finish "$TP_TMP/plain"

# The first CUDA call of the process blocks (its first cudaMemset, 4 s): the
# thread's state is made inside it, and its stack is published then, not
# at its next Python call (which does not come while it hangs).
env RANK=0 LOCAL_RANK=0 TRACEPROF_FOLDER="$TP_TMP/first" STANDIN_SYNC_SLEEP_AT= \
	STANDIN_MEMSET_SLEEP_AT=1 STANDIN_MEMSET_SLEEP_MS=4000 TRACEPROF_PYTHON_STACK=1 \
	PYTHONPATH="$BOOT" LD_PRELOAD="$TP_PRELOAD" "$PYTHON" "$PROG" 3 >first.out 2>first.err &
fp=$!
"$PYTHON" - "$TP_TMP/first/.live" <<'PY' || { kill $fp; die "first call: $(cat first.err)"; }
import glob, json, sys, time
t0 = time.time()
last = None
while time.time() - t0 < 30:
    for p in glob.glob(sys.argv[1] + "/*.json"):
        last = j = json.load(open(p))
        for t in j["threads"]:
            if t["open"] and t["open"][-1]["name"] == "cudaMemset" and t["python"]:
                funcs = [f["func"] for f in t["python"]["frames"]]
                assert funcs == ["clear", "train_step", "main", "<module>"], funcs
                print("first call: python:", " < ".join(funcs))
                sys.exit(0)
    time.sleep(0.2)
sys.exit("never saw the first cudaMemset with its Python stack: %s" % last)
PY
wait $fp || die "first call: the traced run failed: $(cat first.err)"
[ "$(cat first.out)" = "done 3" ] || die "first call: output $(cat first.out)"
echo PASS
