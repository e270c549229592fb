# Issue 46 items 1 and 3 (the C side): the live files (docs/live.md) of a
# made-up 8-rank job on the stand-in runtime (test/programs/live_ranks.c),
# read while it runs:
#   - one file per process in <trace folder>/.live, ranks 0..7, steps
#     advancing between two reads;
#   - rank 3's steps twice as long as the others';
#   - rank 5 blocked in cudaStreamSynchronize (the stand-in's
#     STANDIN_SYNC_SLEEP_AT knob) at its step 6, inside the NVTX start/end
#     range batch and the push/pop ranges train_step and allreduce (a name
#     the program freed): its thread's open ranges and call, outermost first,
#     the same entry time in two reads a second apart while updated_ns
#     moves on, so that the time inside it grows;
#   - "top": the window's names by total time with their calls: rank 0's
#     open window so far (one cudaStreamSynchronize inside each
#     train_step), rank 5's window of steps 0-2 (3 of each) while it
#     blocks after it, and every rank's last window after the exit;
#   - after the exit every file says finished, exit status 0 (and 3 for a
#     program that exits 3);
#   - a SIGKILLed process's file stops changing and still says running;
#   - TRACEPROF_LIVE=0 writes none, TRACEPROF_LIVE_DIR chooses the folder,
#     a bad TRACEPROF_LIVE or TRACEPROF_LIVE_DIR gets one traceprof: line
#     naming the variable and the value.
. "$TP_TOP/test/lib/common.sh"
SI="$BUILD/standin"
P="$BUILD/test/prog_live_ranks"
[ -x "$P" ] && [ -e "$SI/libcudart.so.13" ] || die "not built ($P, $SI); run make check"
export LD_LIBRARY_PATH="$SI${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export WORLD_SIZE=8 TRACEPROF_RUN_NAME=livejob
unset TRACEPROF_LIVE TRACEPROF_LIVE_DIR

# The job: 14 steps of 150 ms (rank 3: 300 ms); rank 5's 7th synchronization
# (step 6: steps count from 0, the start-up) blocks 5 s, outside its only
# window (steps 0-2): a synchronization is published recording or not.
pids=""
for r in 0 1 2 3 4 5 6 7; do
	if [ $r = 5 ]; then
		RANK=$r LOCAL_RANK=$r STANDIN_SYNC_SLEEP_AT=7 STANDIN_SYNC_SLEEP_MS=5000 \
			TRACEPROF_SCHEDULE=wait=0,warmup=0,active=3,repeat=1 \
			TRACEPROF_FOLDER="$TP_TMP/job" traced "$P" 14 150 3 >"r$r.out" 2>"r$r.err" &
	else
		RANK=$r LOCAL_RANK=$r TRACEPROF_FOLDER="$TP_TMP/job" traced "$P" 14 150 3 >"r$r.out" 2>"r$r.err" &
	fi
	pids="$pids $!"
done

"$PYTHON" - "$TP_TMP/job/.live" <<'PY' || { kill $pids 2>/dev/null; die "live files while running"; }
import glob, json, os, statistics, sys, time
d = sys.argv[1]
def read():
    out = {}
    for p in glob.glob(os.path.join(d, "*.json")):
        with open(p) as f:
            j = json.load(f)  # never torn: written then renamed
        out[j["rank"]] = j
    return out
def rank5_blocked(s):
    j = s.get(5)
    if not j:
        return None
    for t in j["threads"]:
        for o in t["open"]:
            if o["kind"] == "cuda" and o["name"] == "cudaStreamSynchronize":
                return o
    return None
t0 = time.time()
first = None
while time.time() - t0 < 20:
    s = read()
    if len(s) == 8 and first is None:
        first = s
    if len(s) == 8 and rank5_blocked(s) and s[5]["step"] == 6:
        break
    time.sleep(0.1)
else:
    sys.exit("rank 5 never seen blocked in cudaStreamSynchronize at step 6: %s" % json.dumps(read().get(5)))
a = read()
assert sorted(a) == list(range(8)), sorted(a)
keys = ["traceprofLive", "host", "pid", "parent_pid", "program", "rank", "local_rank", "world_size", "run",
        "interval_ms", "updated_ns", "started_ns", "state", "exit_status", "step",
        "step_started_ns", "steps", "last_step", "recording", "window", "events", "dropped",
        "top", "threads"]
for r, j in a.items():
    assert list(j) == keys, (r, list(j))
    assert j["state"] == "running" and j["exit_status"] is None, j
    assert j["world_size"] == 8 and j["local_rank"] == r and j["run"] == "livejob", j
    assert j["program"] == "prog_live_ranks", j["program"]
    assert j["interval_ms"] == 1000, j
    if r == 5:
        assert j["recording"] is False and j["window"] is None, j
    else:
        assert j["recording"] is True and j["window"], j
o1 = rank5_blocked(a)
time.sleep(2.2)
b = read()
o2 = rank5_blocked(b)
assert o2 and o2["since_ns"] == o1["since_ns"], (o1, o2)
opens = [t["open"] for t in b[5]["threads"] if t["open"][-1:] == [o2]][0]
assert [(o["kind"], o["name"]) for o in opens] == [("nvtx", "batch"), ("nvtx", "train_step"),
                                                  ("nvtx", "allreduce"),
                                                  ("cuda", "cudaStreamSynchronize")], opens
assert opens[0]["since_ns"] <= opens[1]["since_ns"] <= opens[2]["since_ns"] <= opens[3]["since_ns"], opens
assert b[5]["step"] == 6 and b[5]["updated_ns"] - a[5]["updated_ns"] >= 1.5e9, (a[5], b[5])
held1 = a[5]["updated_ns"] - o1["since_ns"]
held2 = b[5]["updated_ns"] - o2["since_ns"]
assert held2 - held1 >= 1.5e9, (held1, held2)
# The other ranks moved on meanwhile.
for r in (0, 1, 2, 4, 6, 7):
    assert b[r]["step"] > first[r]["step"], (r, first[r]["step"], b[r]["step"])
# Rank 3's steps about twice the others' (its step 0, the start-up, left out).
def med(j):
    return statistics.median(j["steps"][1:])
others = statistics.median(med(b[r]) for r in (0, 1, 2, 4, 6, 7))
ratio = med(b[3]) / others
assert 1.7 < ratio < 2.5, (ratio, b[3]["steps"], others)
assert b[0]["events"] > 0 and b[0]["dropped"] == 0, b[0]
# "top": [[name, total_ns, calls], ...] of the window, largest total first.
def top(j):
    t = j["top"]
    assert t and len(t) <= 10, j
    assert all(isinstance(n, str) and type(tot) is int and type(c) is int and c > 0 and tot >= 0
               for n, tot, c in t), t
    assert [x[1] for x in t] == sorted((x[1] for x in t), reverse=True), t
    return {n: (tot, c) for n, tot, c in t}
t0 = top(a[0])
# Rank 0 records (read a, while it runs): its window so far, as converted: one synchronization in
# each train_step (recorded at its pop, after the call), at most one a step.
sync, ts = t0["cudaStreamSynchronize"], t0["train_step"]
assert 1 <= ts[1] <= sync[1] <= ts[1] + 1 and sync[1] <= a[0]["step"] + 1, t0
# Totals: each train_step holds its synchronization; none outlasts the run.
run_ns = a[0]["updated_ns"] - a[0]["started_ns"]
assert 0 < ts[0] < run_ns and 0 < sync[0] < run_ns, (t0, run_ns)
assert ts[0] / ts[1] >= 0.5 * sync[0] / sync[1], t0
# Rank 5's window (steps 0-2) is gone: its top stays, whole.
t5 = top(b[5])
assert t5["cudaStreamSynchronize"][1] == 3 and t5["train_step"][1] == 3, t5
print("rank 5 in cudaStreamSynchronize for %.1f s then %.1f s; rank 3 steps x%.2f" %
      (held1 / 1e9, held2 / 1e9, ratio))
PY
for p in $pids; do wait "$p" || die "a rank failed: $(cat r*.err)"; done
for r in 0 1 2 3 4 5 6 7; do
	grep -qx "rank=$r steps=14 failed=0" "r$r.out" || die "rank $r: $(cat "r$r.out" "r$r.err")"
done
"$PYTHON" - "$TP_TMP/job/.live" <<'PY' || die "live files after the exit"
import glob, json, sys
fs = glob.glob(sys.argv[1] + "/*.json")
assert len(fs) == 8, fs
for p in fs:
    j = json.load(open(p))
    assert j["state"] == "finished" and j["exit_status"] == 0, (p, j["state"], j["exit_status"])
    assert j["threads"] == [] and j["step"] == 14 and j["last_step"] == 13, j
    t = {n: c for n, tot, c in j["top"]}
    assert 1 <= t.get("cudaStreamSynchronize", 0) <= 14 and t.get("train_step"), j["top"]
assert not glob.glob(sys.argv[1] + "/.*"), "temporary files left"
PY

# An exit status other than 0: a program that exits 3 after its steps.
cat >exit3.c <<'EOF'
#include <stdlib.h>
#include "preload/traceprof.h"
int main(void) { traceprof_step(); traceprof_step(); exit(3); }
EOF
cc -I"$TP_TOP" -o exit3 exit3.c -ldl || die "cannot build exit3"
rc=0
TRACEPROF_FOLDER="$TP_TMP/e3" traced ./exit3 || rc=$?
[ $rc = 3 ] || die "exit3 did not exit 3 ($rc)"
grep -q '"state":"finished","exit_status":3,' "$TP_TMP"/e3/.live/*.json || die "exit status 3 not in $(cat "$TP_TMP"/e3/.live/*.json)"

# SIGKILL: the file stops changing and says running.
# Not through traced(), a function: $! would be its subshell.
RANK=0 TRACEPROF_FOLDER="$TP_TMP/kill" LD_PRELOAD="$TP_PRELOAD" "$P" 100 100 >/dev/null 2>kill.err &
kp=$!
for _ in $(seq 100); do [ -n "$(ls "$TP_TMP"/kill/.live/ 2>/dev/null)" ] && break; sleep 0.1; done
sleep 1.2
kill -KILL $kp
wait $kp 2>/dev/null || true
f=$(ls "$TP_TMP"/kill/.live/*.json) || die "no live file for the killed process"
before=$(cat "$f")
sleep 2.2
[ "$before" = "$(cat "$f")" ] || die "the killed process's file changed"
grep -q '"state":"running"' "$f" || die "the killed process's file does not say running: $(cat "$f")"

# TRACEPROF_LIVE=0: no live folder.  TRACEPROF_LIVE_DIR: there instead.
TRACEPROF_LIVE=0 TRACEPROF_FOLDER="$TP_TMP/off" traced "$P" 3 10 >/dev/null 2>off.err || die "LIVE=0 run failed"
ls "$TP_TMP"/off/*.json >/dev/null 2>&1 || die "LIVE=0: no trace either: $(cat off.err)"
[ ! -e "$TP_TMP/off/.live" ] || die "TRACEPROF_LIVE=0 wrote $(ls -a "$TP_TMP/off/.live")"
TRACEPROF_LIVE_DIR="$TP_TMP/elsewhere/{run_name}" TRACEPROF_FOLDER="$TP_TMP/dir" traced "$P" 3 10 >/dev/null 2>dir.err ||
	die "LIVE_DIR run failed"
[ ! -e "$TP_TMP/dir/.live" ] || die "TRACEPROF_LIVE_DIR: still wrote into the trace folder"
grep -q '"state":"finished"' "$TP_TMP"/elsewhere/livejob/*.json || die "TRACEPROF_LIVE_DIR: no file: $(ls -R "$TP_TMP/elsewhere")"

# Bad values: the program runs, one traceprof: line names the variable.
TRACEPROF_LIVE=maybe TRACEPROF_FOLDER="$TP_TMP/bad" traced "$P" 2 10 >bad.out 2>bad.err || die "bad LIVE: program failed"
grep -qx "rank=0 steps=2 failed=0" bad.out || die "bad LIVE: output changed"
[ "$(grep -c '^traceprof:' bad.err)" = 1 ] && grep -q "TRACEPROF_LIVE.*maybe" bad.err || die "bad LIVE: $(cat bad.err)"
TRACEPROF_LIVE_DIR="$TP_TMP/x/{nosuch}" TRACEPROF_FOLDER="$TP_TMP/bad2" traced "$P" 2 10 >bad2.out 2>bad2.err ||
	die "bad LIVE_DIR: program failed"
[ "$(grep -c '^traceprof:' bad2.err)" = 1 ] && grep -q "TRACEPROF_LIVE_DIR.*nosuch" bad2.err ||
	die "bad LIVE_DIR: $(cat bad2.err)"
echo "PASS"
