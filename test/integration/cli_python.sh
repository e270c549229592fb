#!/usr/bin/env bash
# The Python hook (scripts/traceprof.py): markers, steps, instants and
# counters reach the trace under the library; everything is a no-op without.
. "$TP_TOP/test/lib/common.sh"
py=$("$PYTHON" -c 'import sys; print(sys.executable)')
cat >train.py <<'PY'
import sys, time
import traceprof
print("enabled", traceprof.enabled())
m = traceprof.marker("decorated")
@m
def work():
    time.sleep(0.001)
    return 7
for s in range(4):
    with traceprof.marker("forward"):
        time.sleep(0.002)
    assert work() == 7
    traceprof.instant("tick")
    traceprof.counter("loss", "value", 1.0 / (s + 1))
    traceprof.step()
mk = traceprof.Marker("manual")
mk.start(); mk.finish()
mk.counter({"a": 1, "b": 2.5})
PY
# Without the library: no-ops.
PYTHONPATH="$TP_TOP/scripts" "$py" train.py >out0.txt
grep -q "enabled False" out0.txt || die "enabled() without the library: $(cat out0.txt)"
# Under the library.
PYTHONPATH="$TP_TOP/scripts" "$BUILD/traceprof" run --folder "$PWD/tr" -- "$py" train.py >out1.txt 2>err.txt \
	|| { cat err.txt; die "python under traceprof failed"; }
grep -q "enabled True" out1.txt || die "enabled() under the library: $(cat out1.txt)"
check_trace tr/*.json
"$PYTHON" - tr/*.json <<'PY' || die "python events missing"
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
def n(name, ph):
    return sum(1 for e in ev if e.get("name") == name and e["ph"] == ph)
assert n("forward", "X") == 4, n("forward", "X")
assert n("decorated", "X") == 4
assert n("tick", "i") == 4
assert n("loss", "C") == 4
assert n("manual", "X") == 1
assert sum(1 for e in ev if e["name"].startswith("ProfilerStep#")) >= 4
print("python hook ok")
PY
