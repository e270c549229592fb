# TRACEPROF_STEP=time:MS: a program with no iterations at all (sleep) gets a
# step every MS milliseconds from a thread of traceprof's own, and the
# schedule applies: one file holding exactly the active steps, each ~MS long.
. "$TP_TOP/test/lib/common.sh"
command -v sleep >/dev/null || skip "no sleep"
TRACEPROF_STEP=time:50 TRACEPROF_SCHEDULE="wait=2,warmup=1,active=4,repeat=1" \
	TRACEPROF_FOLDER=out traced sleep 1 || die "sleep failed under the library"
"$PYTHON" - <<'PY'
import glob, json, os
files = sorted(glob.glob("out/*.json"))
assert [os.path.basename(f) for f in files] == ["rank0.step6.trace.json"], files
d = json.load(open(files[0]))
assert d["traceprof"]["steps"] == [3, 6], d["traceprof"]["steps"]
ps = sorted((e for e in d["traceEvents"] if e.get("name", "").startswith("ProfilerStep#")),
            key=lambda e: e["ts"])
assert [e["name"] for e in ps] == [f"ProfilerStep#{k}" for k in range(3, 7)], ps
for e in ps:
    assert 35000 <= e["dur"] <= 90000, e  # 50 ms, in microseconds
tn = {e["tid"]: e["args"]["name"] for e in d["traceEvents"]
      if e.get("ph") == "M" and e["name"] == "thread_name"}
assert tn.get(ps[0]["tid"]) == "traceprof-steps", tn
print("ok", [round(e["dur"] / 1000, 1) for e in ps])
PY
