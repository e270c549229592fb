#!/usr/bin/env bash
# TRACEPROF_CAPTURE=cudaProfilerApi over the test stand-ins
# (test/standin/standin_capture.c): two ranges, the second left open at
# exit.  Checks that:
#   - each range is one file, named by its last step, holding exactly the
#     calls and ProfilerStep#N of its steps (the program's step numbers);
#   - a nested start and an unpaired stop are ignored, as is the driver's
#     cuProfilerStart/Stop that the runtime's own calls make;
#   - the range open at exit is saved;
#   - every profiler call still reaches the runtime and the driver (the
#     program prints the same counts with and without traceprof);
#   - with TRACEPROF_SCHEDULE it is a configuration error, one line.
. "$TP_TOP/test/lib/common.sh"
SI="$BUILD/standin"
[ -x "$SI/standin_capture" ] || die "stand-ins not built ($SI); run make check"
export LD_LIBRARY_PATH="$SI${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

"$SI/standin_capture" >plain.out 2>plain.err || die "failed without traceprof: $(cat plain.err)"
"$BUILD/traceprof" run -q --folder "$PWD/tr" --capture cudaProfilerApi -- "$SI/standin_capture" \
	>traced.out 2>traced.err || die "failed under traceprof: $(cat traced.err)"
diff plain.out traced.out || die "the program's output changed under traceprof"
grep -qx "rc=0 runtime-profiler-calls=5 driver-profiler-calls=6" traced.out \
	|| die "profiler calls did not all reach the runtime: $(cat traced.out)"
[ ! -s traced.err ] || die "unexpected messages: $(cat traced.err)"
ls tr >files.txt 2>&1 || die "no trace file written: $(cat files.txt)"
[ "$(cat files.txt | tr '\n' ' ')" = "rank0.step3.trace.json rank0.step9.trace.json " ] \
	|| die "want one file per range, named by its last step: $(cat files.txt)"
check_trace tr/*.json >/dev/null
"$PYTHON" - tr/rank0.step3.trace.json tr/rank0.step9.trace.json <<'PY' || die "range contents wrong"
import json, sys
def load(path):
    ev = json.load(open(path))["traceEvents"]
    steps = [e["name"] for e in sorted(ev, key=lambda e: e.get("ts", 0))
             if e.get("ph") == "X" and e["name"].startswith("ProfilerStep#")]
    memsets = sorted(e["args"]["bytes"] for e in ev if e["name"] == "cudaMemset")
    n = lambda name: sum(1 for e in ev if e["name"] == name and e.get("ph") == "X")
    return steps, memsets, n
steps, memsets, n = load(sys.argv[1])
assert steps == ["ProfilerStep#2", "ProfilerStep#3"], steps
assert memsets == [102, 103], memsets
# The range's start call and the nested one inside it are recorded; the stop
# begins outside the range.
assert n("cudaProfilerStart") == 2 and n("cudaProfilerStop") == 0, (n("cudaProfilerStart"), n("cudaProfilerStop"))
steps, memsets, n = load(sys.argv[2])
assert steps == ["ProfilerStep#6", "ProfilerStep#7", "ProfilerStep#8", "ProfilerStep#9"], steps
assert memsets == [106, 107, 108, 109], memsets
# The program's own cuProfilerStart is recorded; the one the runtime makes
# inside cudaProfilerStart is not (TRACEPROF_CUDA_CALLS=outer).
assert n("cudaProfilerStart") == 1 and n("cuProfilerStart") == 1, (n("cudaProfilerStart"), n("cuProfilerStart"))
print("capture ranges ok")
PY

# With a schedule: one clear line; the program still runs, untraced.
TRACEPROF_CAPTURE=cudaProfilerApi TRACEPROF_SCHEDULE=wait=1,active=1 TRACEPROF_FOLDER="$PWD/bad" \
	traced "$SI/standin_capture" >bad.out 2>bad.err || die "the program failed with a bad config"
diff plain.out bad.out || die "output changed with a bad config"
[ "$(grep -c '^traceprof:' bad.err)" = 1 ] || die "want one traceprof: line: $(cat bad.err)"
grep -q "TRACEPROF_CAPTURE: 'cudaProfilerApi': cannot be combined with TRACEPROF_SCHEDULE" bad.err \
	|| die "the message does not name both variables: $(cat bad.err)"
[ ! -e bad ] || die "files written despite the configuration error"
echo "capture range ok"
