"""Reading Perfetto protobuf traces (.pftrace) as Chrome-style event
dicts, for `traceprof summary`: a small wire-format decoder, standard
library only."""

import re

from .reader import TraceError, open_binary

PFTRACE_RE = re.compile(r"\.pftrace(\.gz|\.zst)?$")


class PftraceReader:
    """Reads the slices of a Perfetto protobuf trace (.pftrace, perfetto.
    protos.Trace, ../shared/clients/perfetto_trace.proto) as Chrome-style
    event dicts, for `traceprof summary`: the subset traceprof's writer
    uses (format/perfetto_writer.c).  TrackEvent SLICE_BEGIN / SLICE_END
    pairs on one track become one "ph":"X" event (pid and tid: the track's
    uuid), instants "ph":"i"; names and categories inline or interned
    (InternedData, cleared with the sequence's incremental state);
    timestamps absolute or on an incremental clock (TracePacketDefaults,
    ClockSnapshot), in the clock of the first snapshot's clock 3
    (MONOTONIC) where there is one.  Packets are read one at a time.

    items() yields ("events", [dict, ...], None) batches, as TraceReader."""

    BATCH = 4096

    def __init__(self, path):
        self.path = path
        self.f = open_binary(path)
        self.at = 0

    def _read(self, n):
        d = self.f.read(n)
        while len(d) < n:
            more = self.f.read(n - len(d))
            if not more:
                raise TraceError("%s: truncated at byte %d: a packet is cut short"
                                 % (self.path, self.at + len(d)))
            d += more
        self.at += n
        return d

    def _stream_varint(self):
        """A varint from the stream; None at a clean end of file."""
        r = shift = 0
        while True:
            c = self.f.read(1)
            if not c:
                if shift:
                    raise TraceError("%s: truncated at byte %d" % (self.path, self.at))
                return None
            self.at += 1
            r |= (c[0] & 0x7F) << shift
            if c[0] < 0x80:
                return r
            shift += 7
            if shift > 63:
                raise TraceError("%s: not a Perfetto trace: a varint longer than 10 bytes "
                                 "at byte %d" % (self.path, self.at))

    def _bad(self, what):
        raise TraceError("%s: not a Perfetto trace (%s) in the packet before byte %d"
                         % (self.path, what, self.at))

    def fields(self, b):
        """(field, wire type, value) of one message: an int for varints and
        fixed widths, bytes for length-delimited fields."""
        i, n = 0, len(b)
        while i < n:
            key = shift = 0
            while True:
                if i >= n:
                    self._bad("a field cut short")
                c = b[i]
                i += 1
                key |= (c & 0x7F) << shift
                if c < 0x80:
                    break
                shift += 7
            field, wt = key >> 3, key & 7
            if wt == 0:
                v = shift = 0
                while True:
                    if i >= n:
                        self._bad("a varint cut short")
                    c = b[i]
                    i += 1
                    v |= (c & 0x7F) << shift
                    if c < 0x80:
                        break
                    shift += 7
            elif wt == 1:
                v = int.from_bytes(b[i:i + 8], "little")
                i += 8
            elif wt == 5:
                v = int.from_bytes(b[i:i + 4], "little")
                i += 4
            elif wt == 2:
                ln = shift = 0
                while True:
                    if i >= n:
                        self._bad("a length cut short")
                    c = b[i]
                    i += 1
                    ln |= (c & 0x7F) << shift
                    if c < 0x80:
                        break
                    shift += 7
                if i + ln > n:
                    self._bad("a field longer than its message")
                v = b[i:i + ln]
                i += ln
            else:
                self._bad("wire type %d" % wt)
            if i > n:
                self._bad("a field cut short")
            yield field, wt, v

    def _packets(self):
        while True:
            key = self._stream_varint()
            if key is None:
                return
            if key & 7 != 2:
                self._bad("a Trace field of wire type %d" % (key & 7))
            n = self._stream_varint()
            if n is None:
                self._bad("a packet without its length")
            data = self._read(n)
            if key >> 3 == 1:
                yield data

    def _interned(self, b, names, cats):
        for f, _, v in self.fields(b):
            if f in (1, 2) and isinstance(v, bytes):
                iid, name = None, ""
                for g, _, w in self.fields(v):
                    if g == 1:
                        iid = w
                    elif g == 2 and isinstance(w, bytes):
                        name = w.decode("utf-8", "replace")
                if iid is not None:
                    (cats if f == 1 else names)[iid] = name

    def items(self):
        names, cats = {}, {}
        snap = {}          # clock id -> its value in the first snapshot
        incremental = set()
        inc = {}           # incremental clock id -> its last value
        default_clock = None
        open_slices = {}   # track uuid -> [(name, cat, ts)]
        batch = []
        try:
            for pkt in self._packets():
                ts = clock = None
                te = None
                for f, _, v in self.fields(pkt):
                    if f == 8:
                        ts = v
                    elif f == 58:
                        clock = v
                    elif f == 11:
                        te = v
                    elif f == 12:
                        self._interned(v, names, cats)
                    elif f == 13 and v & 1:
                        names.clear()
                        cats.clear()
                    elif f == 59:
                        for g, _, w in self.fields(v):
                            if g == 58:
                                default_clock = w
                    elif f == 6:
                        for g, _, w in self.fields(v):
                            if g != 1:
                                continue
                            cid = val = None
                            is_inc = False
                            for h, _, x in self.fields(w):
                                if h == 1:
                                    cid = x
                                elif h == 2:
                                    val = x
                                elif h == 3:
                                    is_inc = bool(x)
                            if cid is None:
                                continue
                            if val is not None and cid not in snap:
                                snap[cid] = val
                            if is_inc:
                                incremental.add(cid)
                                inc[cid] = val or 0
                if te is None:
                    continue
                cid = clock if clock is not None else default_clock
                if ts is not None and cid in incremental:
                    inc[cid] = inc.get(cid, 0) + ts
                    ts = inc[cid]
                if ts is not None and cid in snap and 3 in snap:
                    ts = snap[3] + (ts - snap[cid])
                etype, name, cat, track = 0, None, None, 0
                for f, _, v in self.fields(te):
                    if f == 9:
                        etype = v
                    elif f == 10:
                        name = names.get(v, "iid %d" % v)
                    elif f == 23 and isinstance(v, bytes):
                        name = v.decode("utf-8", "replace")
                    elif f == 11:
                        track = v
                    elif f == 3:
                        if isinstance(v, bytes):  # packed
                            v = next((w for _, _, w in self.fields(b"\x08" + v)), None)
                        cat = cats.get(v, cat)
                    elif f == 22 and isinstance(v, bytes):
                        cat = v.decode("utf-8", "replace")
                us = ts / 1000.0 if ts is not None else None
                if etype == 1:
                    open_slices.setdefault(track, []).append((name, cat, us))
                elif etype == 2:
                    st = open_slices.get(track)
                    if not st:
                        continue  # an end without its begin (the window began after it)
                    bname, bcat, bus = st.pop()
                    if bus is None or us is None:
                        continue
                    batch.append({"ph": "X", "cat": bcat, "name": bname or "", "pid": track,
                                  "tid": track, "ts": bus, "dur": us - bus})
                elif etype == 3 and us is not None:
                    batch.append({"ph": "i", "cat": cat, "name": name or "", "pid": track,
                                  "tid": track, "ts": us})
                if len(batch) >= self.BATCH:
                    yield "events", batch, None
                    batch = []
            yield "events", batch, None
        finally:
            self.f.close()
