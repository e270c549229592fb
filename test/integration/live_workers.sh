#!/usr/bin/env bash
# A forked child that never steps (a DataLoader worker: multiprocessing's
# fork, records, ends with os._exit()) is shown by `traceprof top` as a
# worker of its parent, never as stalled: it only inherited its parent's
# step (before, top said "stalled N s (no open call or range)" once
# --stall-after passed), and it takes no part in the straggler.  At its
# _exit() its live file goes, as its temporary files do (it used to stay
# "running"), while the parent's says finished.
. "$TP_TOP/test/lib/common.sh"
T="$TP_TOP/python/traceprof"
unset TRACEPROF_LIVE TRACEPROF_LIVE_DIR
cat >job.py <<'PY'
import os, sys, time
import traceprof
for _ in range(3):
    traceprof.instant("parent"); traceprof.step(); time.sleep(0.1)
pid = os.fork()
if pid == 0:                      # the worker: records, never steps
    while not os.path.exists("stop"):
        traceprof.instant("worker"); time.sleep(0.05)
    os._exit(0)
while not os.path.exists("stop"):
    traceprof.instant("parent"); traceprof.step(); time.sleep(0.1)
os.waitpid(pid, 0)
PY
PYTHONPATH="$TP_TOP/python" TRACEPROF_FOLDER="$TP_TMP/out" traced "$PYTHON" job.py >job.out 2>job.err &
job=$!
trap 'touch stop; kill $job 2>/dev/null || true' EXIT
# Until both processes are in the snapshot and 2 s have passed since the
# fork (--stall-after 1: the worker's inherited step is older than that).
ok=
for i in $(seq 100); do
	sleep 0.2
	"$PYTHON" "$T" top --once --json --stall-after 1 "$TP_TMP/out" >snap.json 2>snap.err || continue
	"$PYTHON" - snap.json <<'PY' && { ok=1; break; }
import json, sys
rows = json.load(open(sys.argv[1]))["processes"]
sys.exit(0 if len(rows) == 2 and min(r["updated_s_ago"] for r in rows) < 1 and
         any(r["parent_pid"] for r in rows) and
         max(r["step"] for r in rows) >= 25 else 1)
PY
done
[ -n "$ok" ] || die "never saw the parent and its worker: $(cat snap.json snap.err job.err)"
"$PYTHON" - snap.json <<'PY' || die "top's snapshot: $(cat snap.json)"
import json, sys
rows = json.load(open(sys.argv[1]))["processes"]
parent = [r for r in rows if r["parent_pid"] is None]
child = [r for r in rows if r["parent_pid"] is not None]
assert len(parent) == 1 and len(child) == 1, rows
p, c = parent[0], child[0]
assert c["parent_pid"] == p["pid"], (c["parent_pid"], p["pid"])
assert c["status"] == "worker", c["status"] + ": " + c["detail"]
assert c["detail"].startswith("worker of pid %d" % p["pid"]), c["detail"]
assert p["status"] in ("running", "recording"), p["detail"]
print("worker:", c["detail"], "| parent:", p["detail"])
PY
"$PYTHON" "$T" top --once --stall-after 1 "$TP_TMP/out" >once.txt || die "top --once failed"
grep -q "worker of pid" once.txt || die "top --once does not show the worker: $(cat once.txt)"
grep -q ' stalled [0-9]' once.txt && die "top --once calls something stalled: $(cat once.txt)"
touch stop
wait $job || die "the job failed: $(cat job.err)"
trap - EXIT
# The worker's live file went with its _exit(); the parent's says finished.
[ "$(live_count "$TP_TMP/out")" = 1 ] || die "want the parent's live file only, got: $(ls -A "$TP_TMP/out/.live" | tr '\n' ' ')"
grep -q '"state":"finished"' "$TP_TMP"/out/.live/*.json || die "the parent's file does not say finished"
echo ok
