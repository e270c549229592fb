"""Moving an event's times by the difference between two files' bases,
keeping the exact end that traceprof's writer meant."""

# Shifting times by a base difference.  Readers (DevTools, speedscope) take
# a slice's end as double(ts) + double(dur); traceprof writes dur so that
# this is exactly the double of the end's whole ns (format/trace.c).  A
# shifted ts needs its dur written again for that to hold: both ends are
# moved in whole ns and dur is double(end) - double(ts) again.


def _us_text(ns):
    return "%s%d.%03d" % ("-" if ns < 0 else "", abs(ns) // 1000, abs(ns) % 1000)


def _end_ns(start, ts, dur):
    """The whole-ns end a slice means: the one whose double is ts + dur in
    doubles (traceprof's files), else the nearest."""
    s = ts + dur
    guess = start + round(dur * 1000)
    for k in (0, -1, 1, -2, 2):
        if float(_us_text(guess + k)) == s:
            return guess + k
    return guess


def shift_span(ts, dur, start, shift_ns):
    """(ts, dur) as numbers, moved by shift_ns; start is ts in whole ns."""
    end = _end_ns(start, ts, dur) if dur is not None else None
    start += shift_ns
    nts = start / 1000
    if end is None:
        return nts, None
    return nts, (end + shift_ns) / 1000 - nts


def shift_span_event(ev, shift_us):
    ts, dur = ev.get("ts"), ev.get("dur")
    if not isinstance(ts, (int, float)):
        return
    if not isinstance(dur, (int, float)) or isinstance(dur, bool):
        dur = None
    nts, ndur = shift_span(ts, dur, round(ts * 1000), round(shift_us * 1000))
    ev["ts"] = round(nts, 3)
    if ndur is not None:
        ev["dur"] = ndur
