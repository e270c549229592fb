#!/usr/bin/env bash
# The Python hook (python/traceprof/__init__.py): markers, steps, instants and
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
PYTHONPATH="$TP_TOP/python" "$py" train.py >out0.txt
grep -q "enabled False" out0.txt || die "enabled() without the library: $(cat out0.txt)"
# Under the library.
PYTHONPATH="$TP_TOP/python" "$BUILD/traceprof" run --folder "$PWD/tr" -- "$py" train.py >out1.txt 2>err.txt \
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

# The hook never raises where the no-op would not (issue 17 item 11): a
# counter value that is not a number is dropped with one warning.
cat >bad.py <<'PY'
import traceprof
for v in ("abc", None, 10**400, object(), "abc"):
    traceprof.counter("c", "k", v)
traceprof.counter("c", "k", 2)
traceprof.instant(object())
traceprof.step()
print("no exception")
PY
PYTHONPATH="$TP_TOP/python" "$py" bad.py >b0.txt 2>b0.err || die "bad values raise without the library: $(cat b0.err)"
[ ! -s b0.err ] || die "the no-op printed: $(cat b0.err)"
PYTHONPATH="$TP_TOP/python" "$BUILD/traceprof" run -q --folder "$PWD/tb" -- "$py" bad.py >b1.txt 2>b1.err ||
	{ cat b1.err; die "bad counter values raise under the library"; }
grep -q "no exception" b1.txt || die "bad.py did not finish: $(cat b1.err)"
for e in ValueError TypeError OverflowError; do
	[ "$(grep -c "traceprof: counter 'c': .*($e); dropped" b1.err)" = 1 ] || die "not one warning for $e: $(cat b1.err)"
done
"$PYTHON" - tb/*.json <<'PY' || die "the good counter value is missing"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
cs = [e["args"] for e in ev if e["ph"] == "C" and e["name"] == "c"]
assert cs == [{"k": 2}], cs
PY

# enabled() tells whether calls are recorded (issue 21 item 10): False with
# TRACEPROF_ENABLE=0 and after a configuration error, library loaded or not.
for setting in "--enable 0" "--buffer-events 100"; do
	# shellcheck disable=SC2086
	PYTHONPATH="$TP_TOP/python" "$BUILD/traceprof" run -q --folder "$PWD/te" $setting -- "$py" -c \
		'import traceprof; print("enabled", traceprof.enabled())' >e.txt 2>/dev/null
	grep -q "enabled False" e.txt || die "enabled() with $setting: $(cat e.txt)"
done
echo "python hook robustness ok"
