"""The top-level members of a JSON trace written after its event array
(Kineto's baseTimeNanoseconds, traceprof's footer), read with the JSON
parser from the file's end; and a trace's metadata, head and tail."""

import collections
import json

from ..layout import DOC_TRACE_EVENTS
from .reader import CHUNK, WS, TraceError, TraceReader, open_binary


def compressed(path):
    """Whether path is read through a decompressor (.gz, .zst)."""
    return path.endswith(".gz") or path.endswith(".zst")


def tail_bytes(path, nbytes):
    """(the last nbytes of the decompressed file, whether that is all of
    it).  A plain file is read from its end; a compressed one is
    decompressed whole, as a stream, keeping its last nbytes."""
    if not compressed(path):
        with open(path, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - nbytes))
            return f.read(), size <= nbytes
    f = open_binary(path)
    keep, kept, total = collections.deque(), 0, 0  # the last chunks read
    try:
        while True:
            d = f.read(CHUNK)
            if not d:
                break
            total += len(d)
            keep.append(d)
            kept += len(d)
            while kept - len(keep[0]) >= nbytes:
                kept -= len(keep.popleft())
    finally:
        f.close()
    return b"".join(keep)[-nbytes:], total <= nbytes


def tail_text(path, nbytes=1 << 20):
    """The last nbytes of the decompressed file, as text."""
    return tail_bytes(path, nbytes)[0].decode("utf-8", "replace")


def tail_meta(path):
    """Top-level keys written after traceEvents (Kineto writes
    baseTimeNanoseconds there; traceprof its `traceprof` footer, and
    deviceProperties when no GPU was known as the file began): the members
    that follow the event array's closing bracket, parsed from the file's
    end (its last MiB)."""
    return _tail_members(tail_text(path))


def _skip_ws_at(text, p):
    n = len(text)
    while p < n and text[p] in WS:
        p += 1
    return p


def _member_at(jd, text, p):
    """The member `, "key": value` at p (white space around): (key, value,
    the position after it), or None when the text there is not one."""
    p = _skip_ws_at(text, p)
    if text[p:p + 1] != ",":
        return None
    try:
        key, q = jd.raw_decode(text, _skip_ws_at(text, p + 1))
        if not isinstance(key, str):
            return None
        q = _skip_ws_at(text, q)
        if text[q:q + 1] != ":":
            return None
        value, q = jd.raw_decode(text, _skip_ws_at(text, q + 1))
    except (ValueError, RecursionError):
        return None
    return key, value, q


def _members_after(jd, text, p):
    """The members of `, "key": value, ... }` from p to the end of text
    (white space around), as a dict; None when the text is not exactly
    that.  Each member is parsed once (_member_at)."""
    meta = {}
    while True:
        q = _skip_ws_at(text, p)
        if text[q:q + 1] == "}" and _skip_ws_at(text, q + 1) == len(text):
            return meta
        m = _member_at(jd, text, p)
        if m is None:
            return None
        meta[m[0]] = m[1]
        p = m[2]


def _tail_members(text):
    """The top-level members after the traceEvents array, read with the
    JSON parser: the last ']' after which the rest of the text parses as
    `, "key": value, ... }` to the end closes the array (a ']' inside a
    later value is followed by more than one closing level, and fails).
    {} when there is none (a bare array, or a footer beyond the text)."""
    jd = json.JSONDecoder()
    # A later top-level array value ("deviceProperties": []) also ends in a
    # ']' followed by members: the array's own ']' is the one after which the
    # most members parse (the others' members are a subset of them).  A ']'
    # inside an event fails at once (a '}' or ',' then '{' follows).  An
    # array before traceEvents (a small file read whole) has traceEvents
    # among its members: not a candidate.
    # The members that parse from a position are the same whichever ']'
    # led there: each position's outcome is kept (memo: members to the end,
    # -1 when the text from there is not members and the final '}'; and
    # whether traceEvents is among them), so that every member is parsed
    # once.  Parsing each ']''s members anew was quadratic: a last MiB of
    # `,"k":[1]` repeated took hours.
    memo, first = {}, {}
    best, best_n = None, 0
    pos = len(text)
    while True:
        pos = text.rfind("]", 0, pos)
        if pos < 0:
            break
        p, path = pos + 1, []
        while p not in memo:
            q = _skip_ws_at(text, p)
            if text[q:q + 1] == "}" and _skip_ws_at(text, q + 1) == len(text):
                memo[p] = (0, False)
                break
            m = _member_at(jd, text, p)
            if m is None:
                memo[p] = (-1, False)
                break
            path.append((p, m))
            p = m[2]
        n, has = memo[p]
        for at, m in reversed(path):
            n, has = (n + 1 if n >= 0 else -1), has or m[0] == DOC_TRACE_EVENTS
            memo[at], first[at] = (n, has), m
        n, has = memo[pos + 1]
        if n > best_n and not has:
            best, best_n = pos + 1, n
    meta = {}
    p = best
    while p in first:
        key, value, p = first[p]
        meta[key] = value
    return meta


def load_meta(path):
    """Top-level metadata of a trace: the head, completed from the tail."""
    meta = TraceReader(path).head()
    # The tail of a compressed file costs a whole decompression: only for
    # what a merge needs before the events (the base, the devices).
    if "baseTimeNanoseconds" not in meta or "deviceProperties" not in meta or \
            ("traceprof" not in meta and not compressed(path)):
        try:
            for k, v in tail_meta(path).items():
                meta.setdefault(k, v)
        except (OSError, TraceError):
            pass
    return meta


def footer_drops(path):
    """events_dropped of a traceprof file's footer, or None.  The parts of a
    split window all repeat the window's totals: only the last part answers,
    so that a window's drops are counted once."""
    try:
        m = tail_meta(path).get("traceprof")
    except (OSError, TraceError):
        return None
    if not isinstance(m, dict):
        return None
    if m.get("part", 1) != m.get("parts", 1):
        return None
    return m.get("events_dropped")


def footer_interrupted(path):
    """Of footer_drops(path), the events a signal handler's write lost
    (events_dropped_interrupted; 0 when the footer has none)."""
    try:
        m = tail_meta(path).get("traceprof")
    except (OSError, TraceError):
        return 0
    if not isinstance(m, dict) or m.get("part", 1) != m.get("parts", 1):
        return 0
    n = m.get("events_dropped_interrupted", 0)
    return n if isinstance(n, int) else 0
