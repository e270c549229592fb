#!/usr/bin/env bash
# Issue 42 item 3: steps that count.  The span before the first step call
# (ProfilerStep#0: start-up, imports, set-up) and the one after the last
# (to the exit: teardown) are labelled in the trace, args.phase, and
# summary --by step leaves them out of its statistics and says so, from the
# events and from the file's table alike, JSON and Perfetto.  Before: 20
# iterations gave 21 steps in the statistics, the start-up's 4.9 s among
# them (mean 307 ms where a step takes 37 ms).
. "$TP_TOP/test/lib/common.sh"
T="$BUILD/traceprof"
prog="$BUILD/test/prog_steps"
[ -x "$prog" ] || die "$prog not built"

"$T" run -q --run-name four -- "$prog" 4 >/dev/null || die "run four failed"
"$PYTHON" - traceprof_traces/four/rank0.step4.trace.json <<'PY' || die "the steps' phases are wrong"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
got = sorted((e["name"], (e.get("args") or {}).get("phase")) for e in ev
             if e.get("ph") == "X" and e["name"].startswith("ProfilerStep#"))
want = [("ProfilerStep#0", "start-up"), ("ProfilerStep#1", None), ("ProfilerStep#2", None),
        ("ProfilerStep#3", None), ("ProfilerStep#4", "teardown")]
assert got == want, got
print("phases:", got)
PY
TRACEPROF_FORMAT=perfetto "$T" run -q --run-name fourpf -- "$prog" 4 >/dev/null || die "run fourpf failed"
for f in traceprof_traces/four/rank0.step4.trace.json traceprof_traces/fourpf/rank0.step4.trace.pftrace; do
	for how in "" --from-events; do
		"$T" summary --by step $how "$f" >s.out 2>s.err || die "summary --by step $how $f: $(cat s.err)"
		grep -q "^steps: 3; mean .*; left out: ProfilerStep#0 (start-up, .*), ProfilerStep#4 (teardown, .*)$" s.out ||
			die "summary --by step $how $f: $(cat s.out)"
		grep -q "^ProfilerStep#0 \|^ProfilerStep#4 " s.out && die "$f $how: the start-up or teardown in the table: $(cat s.out)"
		grep -q "^ProfilerStep#1 " s.out || die "$f $how: no step 1: $(cat s.out)"
	done
done
"$T" summary --by step --csv traceprof_traces/four/rank0.step4.trace.json >c.out 2>c.err || die "csv failed"
[ "$(grep -c '^[0-9]' c.out)" = 3 ] || die "csv: want steps 1-3: $(cat c.out)"
grep -q "^traceprof: the step statistics leave out ProfilerStep#0 (start-up" c.err || die "csv: $(cat c.err)"
echo "summary leaves the start-up and teardown out"

# No step call at all (CUDA calls over the stand-in runtime): one step,
# the whole run, shown and said.
SI="$BUILD/standin"
[ -x "$SI/standin_app" ] || die "stand-ins not built ($SI); run make check"
LD_LIBRARY_PATH="$SI" TRACEPROF_CUPTI=off "$T" run -q --run-name none -- "$SI/standin_app" >/dev/null ||
	die "run none failed"
"$T" summary --by step traceprof_traces/none/*.json >n.out 2>n.err || die "summary none: $(cat n.err)"
grep -q "^steps: 1; .*; only the whole run: no whole iteration between two step calls$" n.out ||
	die "no step call: $(cat n.out)"

# A schedule's window, closed by a step call: its steps are iterations.
"$T" run -q --run-name win --schedule wait=1,active=2,repeat=1 -- "$prog" 6 >/dev/null || die "run win failed"
"$T" summary --by step traceprof_traces/win/*.json >w.out 2>w.err || die "summary win: $(cat w.err)"
grep -q "^steps: 2; mean [^;]*, max [^;]*$" w.out || die "window: $(cat w.out)"
echo "steps phases ok"
