"""The summary table a traceprof file carries of its own events (the
footer's "aggregate" member, format/aggregate.c), read from the file's end
without parsing its events: what `summary` and `summary --by rank|step`
print when every input has one (issue 35).

JSON: the writer's footer begins with the one text `\\n  ],\\n  "traceprof": {`
(a raw newline cannot occur inside a JSON string), so the footer is found by
that text in the file's last bytes and decoded alone.  Perfetto: the footer
is the file's last packet, an instant named "traceprof"; its start is the
position from which one length-delimited field 1 ends exactly at the end.
A merged file (traceprof merge) has no table of its own: None."""

import json
import os
import zlib

from .. import layout as L
from .events import selected
from .pftrace import PFTRACE_RE, annotation
from .reader import TraceError, open_binary
from .rowacc import Rows
from .tail import compressed, tail_bytes
from .wire import Malformed, fields

_JSON_MARK = ('\n  ],\n  "%s": {' % L.DOC_FOOTER).encode()
# A Trace's packet field's tag (length-delimited).
_PACKET_TAG = bytes([L.PF_TRACE_PACKET << 3 | 2])
# Tail sizes tried in turn: a table is a few KiB to about 1 MiB (4096
# names; format/aggregate.h).
_TAILS = (1 << 16, 1 << 20, 1 << 24)


def _json_footer(data):
    at = data.rfind(_JSON_MARK)
    if at < 0:
        return None
    text = data[at + len(_JSON_MARK) - 1:].decode("utf-8", "replace")
    try:
        obj, _ = json.JSONDecoder().raw_decode(text)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def _varint(b, i):
    r = shift = 0
    while i < len(b):
        c = b[i]
        i += 1
        r |= (c & 0x7F) << shift
        if c < 0x80:
            return r, i
        shift += 7
        if shift > 63:
            return None, i
    return None, i


def _pf_footer(data):
    """The "traceprof" instant's document when it is the last packet."""
    end = len(data)
    p = data.rfind(_PACKET_TAG, 0, end)
    while p >= 0:
        n, q = _varint(data, p + 1)
        if n is not None and q + n == end:
            try:
                for f, _, te in fields(data[q:]):
                    if f != L.PF_PKT_TRACK_EVENT:
                        continue
                    name, anns = None, []
                    for g, _, v in fields(te):
                        if g == L.PF_TE_NAME and isinstance(v, bytes):
                            name = v
                        elif g == L.PF_TE_ANNOTATIONS and isinstance(v, bytes):
                            anns.append(v)
                    if name == L.DOC_FOOTER.encode():
                        return dict(annotation(a) for a in anns)
            except (Malformed, TypeError, ValueError):
                pass
        p = data.rfind(_PACKET_TAG, 0, p)
    return None


def _pf_merged(path):
    """Whether a .pftrace is a merge (its first track is "traceprof merge")."""
    f = open_binary(path)
    try:
        head = f.read(1 << 16)
    finally:
        f.close()
    return L.DOC_MERGE_TRACK.encode() in head


def footer_of(path):
    """The footer (the "traceprof" object) of a traceprof file, read from its
    end; None when it cannot be found that way."""
    pf = PFTRACE_RE.search(path)
    try:
        if pf and _pf_merged(path):
            return None
        # A compressed file is decompressed once (tail.tail_bytes reads it
        # whole), for the largest tail; a plain one is read from its end.
        big = tail_bytes(path, _TAILS[-1]) if compressed(path) else None
        for n in _TAILS:
            if big is None:
                data, whole = tail_bytes(path, n)
            else:
                data, whole = big[0][-n:], big[1] and len(big[0]) <= n
            doc = _pf_footer(data) if pf else _json_footer(data)
            if doc is not None or whole:
                return doc
    except (OSError, EOFError, ValueError, zlib.error, TraceError):
        # A damaged file: the events' path says what is wrong with it.
        return None
    return None


def aggregate_of(path):
    """(aggregate, footer) of a file whose footer has a well-formed table,
    else None."""
    ft = footer_of(path)
    if not isinstance(ft, dict):
        return None
    a = ft.get("aggregate")
    if not isinstance(a, dict) or a.get("version") != 1:
        return None
    if not isinstance(a.get("rows"), list) or not isinstance(a.get("steps"), list) \
            or not isinstance(a.get("span_ns"), int):
        return None
    return a, ft


def summary_rows(a, by):
    """summary's rows {name: [calls, total, self, min, max]} (us) and its
    window (us) from a table; None when the table left names out."""
    if a.get("names_cut") or a.get("calls_cut"):
        return None
    rows = Rows()
    for r in a["rows"]:
        name, cat, calls, total, self_, lo, hi = r
        if selected(by, cat, name):
            rows.add(name, calls, total / 1e3, self_ / 1e3, lo / 1e3, hi / 1e3)
    return rows.rows, a["span_ns"] / 1e3


def step_events(a):
    """The steps as summary's (pid, tid, ts, dur, key, phase) events, phase
    None for an iteration, else the start-up or teardown step's
    (L.STEP_PHASE_*: the table's "step_phases", [step, pid, phase]); None
    when the table left steps out."""
    if a.get("steps_cut"):
        return None
    phases = {}
    for row in a.get("step_phases") or ():
        if isinstance(row, list) and len(row) == 3:
            phases[row[0], row[1]] = row[2]
    return [(str(pid), "", 0.0, dur / 1e3, L.STEP_PREFIX + str(n), phases.get((n, pid)))
            for n, dur, pid in a["steps"]]


def table_paths(paths):
    """{path: table} when every path's footer has a complete table, else
    None (then summary reads the events)."""
    out = {}
    for p in paths:
        if not os.path.isfile(p):
            return None
        x = aggregate_of(p)
        if x is None:
            return None
        out[p] = x[0]
    return out
