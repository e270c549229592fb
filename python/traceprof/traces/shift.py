"""Moving an event's times by the difference between two files' bases,
keeping the exact end that traceprof's writer meant."""

# Shifting times by a base difference.  Readers (DevTools, speedscope) take
# a slice's end as double(ts) + double(dur); traceprof writes dur so that
# this is exactly the double of the end's whole ns (format/trace.c).  A
# shifted ts needs its dur written again for that to hold: both ends are
# moved in whole ns and dur is double(end) - double(ts) again.  The rule's
# parameters are scripts/layout.spec's (TIME_PLACES, DUR_END_SEARCH).

from .. import layout as L

_UNIT = 10 ** L.TIME_PLACES  # ns per us
# Offsets from the rounded end tried in turn: 0, -1, 1, -2, 2, ...
_SEARCH = [0] + [s * k for k in range(1, L.DUR_END_SEARCH + 1) for s in (-1, 1)]


def _us_text(ns):
    return "%s%d.%0*d" % ("-" if ns < 0 else "", abs(ns) // _UNIT, L.TIME_PLACES,
                          abs(ns) % _UNIT)


def _end_ns(start, ts, dur):
    """The whole-ns end a slice means: the one whose double is ts + dur in
    doubles (traceprof's files), else the nearest."""
    s = ts + dur
    guess = start + round(dur * _UNIT)
    for k in _SEARCH:
        if float(_us_text(guess + k)) == s:
            return guess + k
    return guess


def shift_span(ts, dur, start, shift_ns):
    """(ts, dur) as numbers, moved by shift_ns; start is ts in whole ns."""
    end = _end_ns(start, ts, dur) if dur is not None else None
    start += shift_ns
    nts = start / _UNIT
    if end is None:
        return nts, None
    return nts, (end + shift_ns) / _UNIT - nts


def shift_span_event(ev, shift_us):
    ts, dur = ev.get("ts"), ev.get("dur")
    if not isinstance(ts, (int, float)):
        return
    if not isinstance(dur, (int, float)) or isinstance(dur, bool):
        dur = None
    nts, ndur = shift_span(ts, dur, round(ts * _UNIT), round(shift_us * _UNIT))
    ev["ts"] = round(nts, L.TIME_PLACES)
    if ndur is not None:
        ev["dur"] = ndur
