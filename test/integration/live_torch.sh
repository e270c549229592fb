# Issue 46 item 3 (the C side), PyTorch: torchrun with 2 ranks (gloo, CPU)
# and --pytorch modules,ops, where rank 1 stops calling all_reduce at step 5
# for 10 s (test/programs/torch_live_hang.py): meanwhile rank 0's live file
# shows it at step 5 inside an open torch_op named for the all-reduce
# (gloo's record_function range "gloo:all_reduce", where the wait is, or
# c10d::allreduce_), its time inside growing, inside the open module Sync
# that calls it, and (--python-stack) the main thread's Python stack naming
# the program's Sync.forward and main below torch's all_reduce; afterwards
# both files say
# finished with exit status 0, and the job's output is what it is untraced.
. "$TP_TOP/test/lib/common.sh"
[ "${TP_SANITIZER:-}" = "" ] || skip "PyTorch under $TP_SANITIZER is not tested"
need_venv torch 'import torch.distributed as d; assert d.is_available() and d.is_gloo_available()' "torch without gloo"
run="$(dirname "$py")/torchrun"
[ -x "$run" ] || skip "no torchrun beside $py"
prog="$TP_TOP/test/programs/torch_live_hang.py"
port() { "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
export OMP_NUM_THREADS=1 HANG_STEP=5 HANG_S=10
unset TRACEPROF_LIVE TRACEPROF_LIVE_DIR
"$BUILD/traceprof" run -q --step torch --pytorch modules,ops --python-stack --folder "$TP_TMP/tr" -- "$run" --nproc_per_node 2 \
	--master_addr 127.0.0.1 --master_port "$(port)" "$prog" 8 >job.out 2>job.err &
job=$!
"$PYTHON" - "$TP_TMP/tr/.live" <<'PY' || { kill $job 2>/dev/null; die "rank 0's live file: $(cat job.err)"; }
import glob, json, sys, time
d = sys.argv[1]
def rank0():
    for p in glob.glob(d + "/*.json"):
        j = json.load(open(p))
        if j["rank"] == 0:
            return j
def waiting(j):
    for t in j["threads"] if j else []:
        for o in t["open"]:
            if o["kind"] == "torch_op" and ("all_reduce" in o["name"] or "allreduce" in o["name"]):
                return o
seen = []
t0 = time.time()
while time.time() - t0 < 150:
    j = rank0()
    o = waiting(j)
    if o and j["step"] == 5 and j["updated_ns"] - o["since_ns"] > 2e9:
        seen.append((j, o))
        if len(seen) == 2:
            break
        time.sleep(1.5)
        continue
    if j and j["state"] == "finished":
        break
    time.sleep(0.2)
if len(seen) < 2:
    sys.exit("rank 0 never seen waiting in an all-reduce at step 5 for 2 s, twice: last %s" % json.dumps(rank0()))
(j1, o1), (j2, o2) = seen
assert o1["since_ns"] == o2["since_ns"] and j2["updated_ns"] > j1["updated_ns"], (o1, o2)
assert j1["recording"] is True and j1["world_size"] == 2, j1
# The module that called it, open on the main thread (gloo's range may be
# on the same thread or on the thread that waits for the work).
mods = [o for t in j2["threads"] for o in t["open"] if o["kind"] == "module"]
assert mods and "Sync" in mods[-1]["name"] and mods[-1]["since_ns"] <= o2["since_ns"], j2["threads"]
# --python-stack: the main thread's Python stack names the program's
# functions that wait, innermost first (names only: docs/live.md).
py = [t["python"] for t in j2["threads"] if any(o["kind"] == "module" for o in t["open"])]
assert py and py[0], j2["threads"]
funcs = [f["func"] for f in py[0]["frames"]]
mine = [f["func"] for f in py[0]["frames"] if f["file"].endswith("torch_live_hang.py")]
assert mine == ["forward", "main", "<module>"] and "all_reduce" in funcs[:funcs.index("forward")], funcs
print("rank 0 in %s > %s for %.1f s, then %.1f s; python: %s" % (
    mods[0]["name"], o2["name"], (j1["updated_ns"] - o1["since_ns"]) / 1e9,
    (j2["updated_ns"] - o2["since_ns"]) / 1e9, " < ".join(funcs)))
PY
wait $job || die "traced torchrun failed: $(tail -5 job.err)"
[ "$(cat job.out)" = "done 8" ] || die "job output: $(cat job.out)"
"$PYTHON" - "$TP_TMP/tr/.live" <<'PY' || die "after the exit"
import glob, json, sys
js = [json.load(open(p)) for p in glob.glob(sys.argv[1] + "/*.json")]
assert sorted(j["rank"] for j in js) == [0, 1], [j["rank"] for j in js]
for j in js:
    assert j["state"] == "finished" and j["exit_status"] == 0 and j["threads"] == [], j
PY
echo PASS
