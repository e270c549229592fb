"""merge's clock shift (traces/shift.py): moving a slice by the difference
between two files' time bases keeps the exact end traceprof's writer meant
(a reader's double(ts) + double(dur) is the double of the whole-ns end)."""

import random

import pytest

from traceprof.traces.shift import _end_ns, shift_span, shift_span_event


def us_text(ns):
    return "%s%d.%03d" % ("-" if ns < 0 else "", abs(ns) // 1000, abs(ns) % 1000)


def written(start_ns, end_ns):
    """ts and dur as traceprof's writer puts them in a file (format/trace.c):
    dur = double(end) - double(ts), ts the start's decimal microseconds."""
    ts = float(us_text(start_ns))
    return ts, float(us_text(end_ns)) - ts


@pytest.mark.parametrize("lo, hi", [
    (10**12, 10**14),          # ts up to 1e11 us: each ns has its double
    (10**15, 8 * 10**15),      # Kineto's magnitudes: a double's ulp near 1 ns
])
def test_shift_keeps_exact_ends(lo, hi):
    rnd = random.Random(33)
    for _ in range(2000):
        start = rnd.randrange(lo, hi)
        end = start + rnd.randrange(0, 10**10)
        shift = rnd.randrange(-10**12, 10**12)
        ts, dur = written(start, end)
        # The end the file means, found again from its doubles.
        assert _end_ns(round(ts * 1000), ts, dur) == end
        ev = {"ph": "X", "ts": ts, "dur": dur}
        shift_span_event(ev, shift / 1000)
        if hi <= 10**14:
            assert ev["ts"] == float(us_text(start + shift))
        # The end a reader computes is the shifted end, to the ns.
        assert ev["ts"] + ev["dur"] == float(us_text(end + shift)), (start, end, shift)


def test_shift_span_numbers():
    ts, dur = shift_span(1000.5, 2.25, 1000500, 1500)
    assert (ts, dur) == (1002.0, 2.25)
    # An instant (no dur) only moves.
    assert shift_span(10.0, None, 10000, -2000) == (8.0, None)


def test_shift_event_leaves_odd_events():
    ev = {"ph": "M", "name": "process_name"}
    shift_span_event(ev, 5.0)
    assert ev == {"ph": "M", "name": "process_name"}
    ev = {"ph": "i", "ts": 3.5, "dur": True}      # a bool is not a duration
    shift_span_event(ev, 1.0)
    assert ev == {"ph": "i", "ts": 4.5, "dur": True}
