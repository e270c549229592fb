#!/usr/bin/env bash
# import traceprof's calls are total against the real library (issue 41
# item 3): step(), instant(), counter(), marker() and the Marker methods,
# with hostile arguments (hypothesis's arbitrary objects when the torch venv
# has it, a fixed list otherwise), from four threads at once, from an atexit
# handler, from a __del__ run while the interpreter finalizes and from a
# daemon thread still calling when it does.  The program ends as it does
# without the library: exit 0, "done", and no traceback or "Exception
# ignored" on stderr; the good values are in the trace (the library did
# record).  test/python/test_api_total.py has the property tests against a
# stand-in of the library.
. "$TP_TOP/test/lib/common.sh"
py=$(python_where 'import ctypes')
[ -n "$py" ] || skip "no Python"
cat >total.py <<'PY'
import atexit, sys, threading, time
import traceprof

ERRORS = [RuntimeError, NotImplementedError, TypeError, ValueError, SystemExit,
          GeneratorExit, MemoryError, RecursionError, BaseException]

def hostile(err, names):
    def boom(*a, **k):
        raise err("hostile")
    return type("H", (object,), {n: boom for n in names})()

FIXED = [None, 1, 2.5, float("nan"), "x", b"\xff\0z", "a\0b", [], {"a": 1}, {1: object()},
         object(), type, 10 ** 400, "\udcff"] + \
    [hostile(e, ["__float__", "__str__", "__repr__", "__hash__", "__iter__", "__bool__", "items"])
     for e in ERRORS] + [hostile(e, ["__float__"]) for e in ERRORS]

class Pairs:
    """A mapping whose keys need not be hashable: what items() gives."""
    def __init__(self, pairs):
        self.pairs = pairs
    def items(self):
        return self.pairs

def calls(name, key, value, cats):
    traceprof.instant(name)
    traceprof.counter(name, key, value)
    m = traceprof.marker(name, categories=cats, record_instant_on_start=value,
                         record_instant_on_finish=cats)
    with m:
        m.instant()
    m.counter(value)
    m.counter(Pairs([(key, value)]))
    m(lambda: None)()
    traceprof.Marker(name, cats).finish()

def fixed_round():
    for a in FIXED:
        for b in FIXED[::3]:
            calls(a, b, a, b)
            calls(b, a, b, a)

mode = sys.argv[1]
if mode == "hypothesis":
    from hypothesis import given, settings, strategies as st
    leaf = st.one_of(st.none(), st.integers(), st.floats(), st.text(), st.binary(),
                     st.integers(0, len(FIXED) - 1).map(lambda i: FIXED[i]))
    anything = st.recursive(leaf, lambda i: st.one_of(st.lists(i, max_size=3),
                                                      st.dictionaries(st.text(max_size=3), i,
                                                                      max_size=2)),
                            max_leaves=5)

    @settings(max_examples=150, deadline=None, database=None)
    @given(anything, anything, anything, anything)
    def prop(a, b, c, d):
        calls(a, b, c, d)
    prop()
fixed_round()

errs = []
def work():
    try:
        for _ in range(3):
            fixed_round()
            traceprof.step()
    except BaseException as e:
        errs.append(repr(e))
ts = [threading.Thread(target=work) for _ in range(4)]
for t in ts: t.start()
for t in ts: t.join()
assert not errs, errs

for i in range(3):
    traceprof.counter("good", "v", i + 0.5)
    with traceprof.marker("good_marker", categories=["c"]):
        pass
    traceprof.step()

# At finalization: an atexit handler, a __del__ of a module global (run
# when the interpreter clears modules) and a daemon thread that never stops.
atexit.register(lambda: fixed_round())
class Late:
    # What it calls it holds itself: by then CPython has set the globals of
    # the modules (traceprof's, this one's) to None; the functions and
    # Markers held must keep working.
    def __init__(self):
        self.fns = (traceprof.instant, traceprof.counter, traceprof.step, traceprof.marker)
        self.m, self.fixed = traceprof.marker("late", categories=["x"]), FIXED
    def __del__(self):
        instant, counter, step, marker = self.fns
        for a in self.fixed:
            instant(a)
            counter(a, a, a)
            step()
            m = marker(a, categories=a)
            with m:
                m.counter(a)
            with self.m:
                self.m.counter({"k": a})
            self.m(lambda: None)()
late = Late()
def daemon():
    while True:
        calls(FIXED[-1], "k", FIXED[-2], None)
        traceprof.counter("d", "v", 1.0)
threading.Thread(target=daemon, daemon=True).start()
time.sleep(0.05)
print("done")
PY

mode=fixed
"$py" -c 'import hypothesis' 2>/dev/null && mode=hypothesis
for lib in without with; do
	if [ $lib = with ]; then
		PYTHONPATH="$TP_TOP/python" TRACEPROF_FOLDER="$PWD/t" traced "$py" total.py $mode >out.$lib 2>err.$lib
	else
		PYTHONPATH="$TP_TOP/python" "$py" total.py $mode >out.$lib 2>err.$lib
	fi
	rc=$?
	[ $rc = 0 ] || die "$lib the library: exit $rc: $(tail -20 err.$lib)"
	grep -qx done out.$lib || die "$lib the library: no 'done'"
	! grep -q "Traceback\|Exception ignored" err.$lib || die "$lib the library: $(head -30 err.$lib)"
done
# The drops are told once per kind of mistake; nothing else is said.
! grep -v "^traceprof: " err.with | grep -q . || die "stray stderr: $(grep -v '^traceprof: ' err.with | head)"
[ ! -s err.without ] || die "without the library something was printed: $(head err.without)"
"$PYTHON" - t/*.json <<'PY' || die "the good values are not in the trace"
import json, sys
ev = [e for f in sys.argv[1:] for e in json.load(open(f))["traceEvents"]]
good = sorted(e["args"]["v"] for e in ev if e.get("ph") == "C" and e.get("name") == "good")
assert good == [0.5, 1.5, 2.5], good
assert sum(1 for e in ev if e.get("name") == "good_marker" and e.get("ph") == "X") == 3
PY
echo "python api total ($mode): ok, $(grep -c '^traceprof: ' err.with) drop lines"
