# Without a schedule, a whole run is one file saved at exit: markers become
# complete events, instants and counters appear, every step has its
# ProfilerStep#N, metadata and the traceprof footer are there, and the
# program's own output is unchanged.  Without the library, the API is a no-op.
. "$TP_TOP/test/lib/common.sh"
prog="$BUILD/test/prog_steps"
plain_out=$("$prog" 4 2 3)
[ "$plain_out" = done ] || die "program output without the library: $plain_out"
out=$(TRACEPROF_FOLDER=t traced "$prog" 4 2 3)
[ "$out" = "$plain_out" ] || die "output changed under the library: $out"
"$PYTHON" - <<'PY'
import glob, json, os
files = glob.glob("t/*")
assert files == ["t/rank0.step4.trace.json"], files
d = json.load(open(files[0]))
for key in ("schemaVersion", "traceName", "baseTimeNanoseconds", "distributedInfo", "traceEvents", "traceprof"):
    assert key in d, key
assert d["distributedInfo"]["rank"] == 0 and d["distributedInfo"]["world_size"] == 1
assert d["baseTimeNanoseconds"] % (90 * 24 * 3600 * 10**9) == 0
ev = d["traceEvents"]
pid = os.getpid  # unused; pids come from the trace
steps = sorted(int(e["name"][13:]) for e in ev if e["name"].startswith("ProfilerStep#"))
assert steps == [0, 1, 2, 3, 4], steps
for e in ev:
    if e["ph"] == "X":
        assert e["dur"] >= 0 and isinstance(e["ts"], float) or isinstance(e["ts"], int)
        assert len(str(e["ts"]).split(".")[-1]) <= 3
fwd = [e for e in ev if e["name"] == "forward"]
assert len(fwd) == 4 and all(e["ph"] == "X" and e["cat"] == "user_annotation" for e in fwd)
ticks = [e for e in ev if e["name"] == "tick"]
assert len(ticks) == 12 and all(e["ph"] == "i" for e in ticks)
loss = [e for e in ev if e["name"] == "loss" and e["ph"] == "C"]
assert [round(e["args"]["value"], 6) for e in loss] == [1.0, 0.5, round(1/3, 6), 0.25], loss
workers = [e for e in ev if e["name"].startswith("worker")]
assert len(workers) == 4 * 2 * 3, len(workers)
main_tid = fwd[0]["tid"]
assert all(e["tid"] == main_tid for e in ev if e["name"].startswith("ProfilerStep#"))
# Each step event contains the forward markers of that step.
meta = {(e["name"], e["tid"]) for e in ev if e["ph"] == "M"}
assert ("process_name", 0) in meta and ("thread_name", main_tid) in meta
names = {e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
assert "prog_steps" in names, names
tp = d["traceprof"]
assert tp["steps"] == [0, 4] and tp["events_dropped"] == 0
assert tp["events_written"] == sum(t["events_written"] for t in tp["threads"])
assert tp["configuration"]["TRACEPROF_FOLDER"] == "t"
print("ok:", len(ev), "events")
PY
# The no-op path: TRACEPROF_ENABLE=0 writes nothing and changes nothing.
out=$(TRACEPROF_ENABLE=0 TRACEPROF_FOLDER=off traced "$prog" 2)
[ "$out" = done ] && [ ! -e off ] || die "TRACEPROF_ENABLE=0 still wrote files"
