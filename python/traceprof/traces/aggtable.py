"""The summary table a traceprof file carries of its own events (the
footer's "aggregate" member, format/aggregate.c), read from the file's end
without parsing its events: what `summary` and `summary --by rank|step`
print when every input has one (issue 35).

JSON: the writer's footer begins with the one text `\\n  ],\\n  "traceprof": {`
(a raw newline cannot occur inside a JSON string), so the footer is found by
that text in the file's last bytes and decoded alone.  Perfetto: the footer
is the file's last packet, an instant named "traceprof"; its start is the
position from which one length-delimited field 1 ends exactly at the end.
A merged file (traceprof merge) has no table of its own: None.

A table is used only when it provably belongs to the bytes beside it
(issue 43): its "covers" member (format/digest.h) gives the length of
everything before the footer and a CRC-32 of samples of it at offsets
that follow from that length.  The footer must begin exactly there, only
the trace's closing members may follow it, the samples must match, and
the table must have the form docs/trace-format.md gives; otherwise the
summary reads the events and says why in one line."""

import array
import json
import operator
import os
import re
import struct
import zlib

from .. import layout as L
from .events import selected
from .pftrace import PFTRACE_RE, annotation
from .reader import CHUNK, TraceError, open_binary
from .rowacc import Rows
from .tail import _members_after, compressed
from .wire import Malformed, fields
from ..util import err

_JSON_MARK = ('\n  ],\n  "%s": {' % L.DOC_FOOTER).encode()
# A Trace's packet field's tag (length-delimited).
_PACKET_TAG = bytes([L.PF_TRACE_PACKET << 3 | 2])
# Tail sizes tried in turn: a table is a few KiB to about 1 MiB (4096
# names; format/aggregate.h).
_TAILS = (1 << 16, 1 << 20, 1 << 24)


def _json_footer(data):
    """(footer, its mark's index in data, whether only the trace's closing
    members follow it), or None."""
    at = data.rfind(_JSON_MARK)
    if at < 0:
        return None
    text = data[at + len(_JSON_MARK) - 1:].decode("utf-8", "replace")
    jd = json.JSONDecoder()
    try:
        obj, end = jd.raw_decode(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict):
        return None
    return obj, at, _members_after(jd, text, end) is not None


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
    """(the "traceprof" instant's document, the index of its packet in
    data, True) when it is the last packet, else None."""
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
                        return dict(annotation(a) for a in anns), p, True
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


def _scan(path, nbytes):
    """A compressed file, decompressed once: (its last nbytes, its length,
    the CRC-32 of the DIGEST_SAMPLE bytes at every multiple of
    DIGEST_STRIDE0, an array indexed by the multiple)."""
    f = open_binary(path)
    keep, kept, total = [], 0, 0
    crcs = array.array("I")
    carry, base = b"", 0  # carry: the bytes from the next sample's start
    try:
        while True:
            d = f.read(CHUNK)
            if not d:
                break
            total += len(d)
            keep.append(d)
            kept += len(d)
            while len(keep) > 1 and kept - len(keep[0]) >= nbytes:
                kept -= len(keep.pop(0))
            buf = carry + d if carry else d
            k = -(-base // L.DIGEST_STRIDE0)
            while k * L.DIGEST_STRIDE0 + L.DIGEST_SAMPLE <= base + len(buf):
                o = k * L.DIGEST_STRIDE0 - base
                crcs.append(zlib.crc32(buf[o:o + L.DIGEST_SAMPLE]))
                k += 1
            nxt = k * L.DIGEST_STRIDE0 - base
            carry = buf[nxt:] if nxt < len(buf) else b""
            base += len(buf) - len(carry)
    finally:
        f.close()
    return b"".join(keep)[-nbytes:], total, crcs


class _PlainSamples:
    """The CRC-32 of the DIGEST_SAMPLE bytes at an offset of a plain file,
    read with one descriptor (opened at the first sample)."""

    def __init__(self, path):
        self.path, self.fd = path, None

    def __call__(self, off):
        if self.fd is None:
            self.fd = os.open(self.path, os.O_RDONLY)
        b = os.pread(self.fd, L.DIGEST_SAMPLE, off)
        return zlib.crc32(b) if len(b) == L.DIGEST_SAMPLE else None

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _tail(path, size, n):
    """The last n bytes of a plain file of size bytes."""
    with open(path, "rb") as f:
        f.seek(max(0, size - n))
        return f.read()


def _find(path):
    """(footer, the decompressed offset where it begins, whether only the
    trace's end follows it, a function giving the CRC-32 of the sample at
    an offset), or None when no footer is found from the file's end."""
    pf = PFTRACE_RE.search(path)
    if pf and _pf_merged(path):
        return None
    if compressed(path):
        whole, total, crcs = _scan(path, _TAILS[-1])

        def sample(off):
            k = off // L.DIGEST_STRIDE0
            return crcs[k] if off % L.DIGEST_STRIDE0 == 0 and k < len(crcs) else None
        tails = ((whole[-n:], total) for n in _TAILS)
    else:
        sample = _PlainSamples(path)
        total = os.path.getsize(path)
        tails = ((_tail(path, total, n), total) for n in _TAILS)
    for data, size in tails:
        x = _pf_footer(data) if pf else _json_footer(data)
        if x is not None:
            return x[0], size - len(data) + x[1], x[2], sample
        if len(data) >= size:
            return None
    return None


def footer_of(path):
    """The footer (the "traceprof" object) of a traceprof file, read from its
    end; None when it cannot be found that way."""
    try:
        x = _find(path)
    except (OSError, EOFError, ValueError, zlib.error, TraceError):
        # A damaged file: the events' path says what is wrong with it.
        return None
    return x[0] if x else None


# A part's file name: ".partK" before the extension (collector/parts.c,
# pt_part_name), or at the end of a name without one.
_PART = re.compile(r"\.part(\d+)(?=\.|$)")


def missing_parts(paths):
    """The one line saying which parts are missing of the windows split in
    parts (the footer's "part" k of "parts" n) of which paths hold some
    but not all, or None.  The files whose name says they are a part
    (".partK") are the ones asked (their footer read from their end); the
    window is the folder and the name less ".partK"."""
    groups = {}
    for p in paths:
        name = os.path.basename(p)
        m = list(_PART.finditer(name))
        if not m:
            continue
        ft = footer_of(p)
        n, k = (ft.get("parts"), ft.get("part")) if isinstance(ft, dict) else (None, None)
        if not (_is_n(n, 2) and _is_n(k, 1) and k <= n):
            continue
        cut = m[-1]
        base = os.path.join(os.path.dirname(p), name[:cut.start()] + name[cut.end():])
        groups.setdefault((base, n), set()).add(k)
    said = []
    for (base, n), have in sorted(groups.items()):
        gone = [str(k) for k in range(1, n + 1) if k not in have]
        if gone:
            said.append("%s: part%s %s of %d missing" % (
                base, "s" if len(gone) > 1 else "",
                ", ".join(gone[:8]) + (", ..." if len(gone) > 8 else ""), n))
    if not said:
        return None
    return ("a window split into parts is incomplete (%s): not using the summary tables; "
            "the rows count only the parts read" % "; ".join(said))


def _is_n(v, lo=0):
    return isinstance(v, int) and not isinstance(v, bool) and lo <= v < 1 << 64


def malformed(a):
    """What in a table does not have the form docs/trace-format.md gives,
    in words; None when nothing."""
    if a.get("version") != 1:
        return "its version is %r, not 1" % (a.get("version"),)
    for k in ("span_ns", "names_cut", "calls_cut", "steps_cut", "self_folded"):
        if not _is_n(a.get(k)):
            return "%s is %r, not a count" % (k, a.get(k))
    if not isinstance(a.get("rank"), int) or isinstance(a.get("rank"), bool):
        return "rank is %r, not an integer" % (a.get("rank"),)
    rows, steps = a.get("rows"), a.get("steps")
    if not isinstance(rows, list) or not isinstance(steps, list):
        return "rows or steps is not a list"
    # A job's tables hold up to 4,096 rows and 16,384 steps each: checked a
    # column at a time, at C speed (type() is int excludes bool).
    bad_row = "a row is not [name, category, calls, total, self, min, max]"
    if not _lists_of(rows, 7):
        return bad_row
    if rows:
        name, cat, calls, total, self_, lo, hi = zip(*rows)
        if not (_types(name) <= {str} and _types(cat) <= {str}
                and all(_counts(c) for c in (calls, total, self_, lo, hi))):
            return bad_row
        if min(calls) < 1 or not all(map(operator.le, self_, total)) \
                or not all(map(operator.le, lo, hi)):
            return "a row's counts are not calls >= 1, self <= total, min <= max"
    if not _lists_of(steps, 3):
        return "a step is not [step, duration, pid]"
    if steps:
        num, dur, pid = zip(*steps)
        if not (_counts(num) and _counts(dur) and _types(pid) <= {int}):
            return "a step is not [step, duration, pid]"
    return None


def _types(col):
    return set(map(type, col))


def _lists_of(x, n):
    """Whether x is a list of lists of n members."""
    return _types(x) <= {list} and set(map(len, x)) <= {n}


def _counts(col):
    """Whether every value is an integer in 0..2^64."""
    return _types(col) <= {int} and (not col or (min(col) >= 0 and max(col) < 1 << 64))


def _uncovered(cov, at, sample):
    """Why the bytes before the footer (at of them) are not those the
    table's covers describes, in words; None when they are."""
    if not isinstance(cov, dict):
        return "it does not say which events it covers (an older traceprof wrote it)"
    n, stride, size, crc = (cov.get(k) for k in ("samples", "stride", "bytes", "crc"))
    if not (_is_n(n) and _is_n(stride, L.DIGEST_STRIDE0) and _is_n(size) and _is_n(crc)
            and stride & (stride - 1) == 0 and n < L.DIGEST_MAX
            and n * stride + L.DIGEST_SAMPLE > size
            and (n == 0 or (n - 1) * stride + L.DIGEST_SAMPLE <= size)):
        return "its covers member is malformed"
    if size != at:
        return ("it covers %d bytes of events but the footer begins at byte %d: the file "
                "was edited, re-indented, joined to another or cut" % (size, at))
    got = []
    for k in range(n):
        c = sample(k * stride)
        if c is None:
            return "the file is shorter than the part the table covers"
        got.append(c)
    if zlib.crc32(b"".join(struct.pack("<I", c) for c in got)) != crc:
        return "the events' bytes differ from those it was computed from: the file was edited"
    return None


def covers(data, events):
    """The covers format/digest.c writes for the bytes data (everything
    before the footer) and the count of events: for tools and tests that
    write a table of their own."""
    stride = L.DIGEST_STRIDE0
    while (len(data) - L.DIGEST_SAMPLE) // stride + 1 >= L.DIGEST_MAX:
        stride *= 2
    n = (len(data) - L.DIGEST_SAMPLE) // stride + 1 if len(data) >= L.DIGEST_SAMPLE else 0
    crcs = [zlib.crc32(data[k * stride:k * stride + L.DIGEST_SAMPLE]) for k in range(n)]
    return {"bytes": len(data), "events": events, "stride": stride, "samples": n,
            "crc": zlib.crc32(b"".join(struct.pack("<I", c) for c in crcs))}


def check(path):
    """(table, footer, why): the table and footer of a file whose table
    belongs to its events (why None); (None, None, why) when the file has a
    table that cannot be used, why saying why in words; (None, None, None)
    when it has none (a merged file, another tool's trace)."""
    try:
        x = _find(path)
    except (OSError, EOFError, ValueError, zlib.error, TraceError):
        # A damaged file: the events' path says what is wrong with it.
        return None, None, None
    if x is None:
        return None, None, None
    ft, at, closed, sample = x
    a = ft.get("aggregate")
    if a is None:
        return None, None, None
    if not isinstance(a, dict):
        return None, None, "its table is not an object"
    if PFTRACE_RE.search(path):
        # A debug annotation holds no empty array: an empty list of rows
        # or steps comes back as a member without a value.
        for k in ("rows", "steps", "step_phases"):
            if k in a and a[k] is None:
                a[k] = []
    if not closed:
        return None, None, "text that is not the trace's end follows its footer"
    why = malformed(a)
    if why:
        return None, None, "its table is malformed: " + why
    try:
        why = _uncovered(a.get("covers"), at, sample)
    except OSError as e:
        why = "its events cannot be read (%s)" % (e.strerror or e)
    finally:
        if hasattr(sample, "close"):
            sample.close()
    if why:
        return None, None, why
    return a, ft, None


def aggregate_of(path, notes=None):
    """(aggregate, footer) of a file whose footer has a table that belongs
    to its events, else None; a table that cannot be used is said so in one
    traceprof: line, or appended to notes (a list) for the caller to print
    once the events were read."""
    a, ft, why = check(path)
    if why:
        line = "%s: not using its summary table: %s; reading the events" % (path, why)
        if notes is None:
            err(line)
        else:
            notes.append(line)
    return (a, ft) if a is not None else None


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


def table_paths(paths, notes=None):
    """{path: table} when every path's footer has a complete table, else
    None (then summary reads the events).  With notes (a list), the lines
    saying a table is not used are appended to it instead of printed: the
    caller prints them once the events were read, so that a file that
    fails has one line, its error.  A window of which some parts are
    missing (missing_parts) has no table: its events are read."""
    miss = missing_parts(paths)
    if miss:
        if notes is None:
            err(miss)
        else:
            notes.append(miss)
        return None
    out = {}
    for p in paths:
        if not os.path.isfile(p):
            return None
        x = aggregate_of(p, notes)
        if x is None:
            return None
        out[p] = x[0]
    return out
