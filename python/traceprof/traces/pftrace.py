"""Reading Perfetto protobuf traces (.pftrace) as Chrome-style event
dicts, for `traceprof summary`, and their packets one at a time, for
`traceprof merge`; standard library only (wire.py)."""

import re
import struct

from .. import layout as L
from . import reader
from .reader import TraceError, open_binary
from .wire import Malformed, fields, int64

PFTRACE_RE = re.compile(r"\.pftrace(\.gz|\.zst)?$")


_DA_BYTES = (L.PF_DA_NAME, L.PF_DA_STRING, L.PF_DA_DICT, L.PF_DA_ARRAY)


def annotation(b):
    """(name, value) of a DebugAnnotation with an inline name (as the
    writer's documents have them); dicts and arrays as dicts and lists."""
    name, val, d, arr = None, None, None, None
    for f, wt, v in fields(b):
        # Each field's value has the wire type its kind needs: bytes for
        # names, strings, dicts and arrays, 8 bytes for a double.
        if f in _DA_BYTES and not isinstance(v, bytes) or f == L.PF_DA_DOUBLE and wt != 1:
            raise Malformed("a debug annotation's field %d has wire type %d" % (f, wt))
        if f == L.PF_DA_NAME:
            name = v.decode("utf-8", "replace")
        elif f == L.PF_DA_INT:
            val = int64(v)
        elif f == L.PF_DA_UINT:
            val = v
        elif f == L.PF_DA_BOOL:
            val = bool(v)
        elif f == L.PF_DA_DOUBLE:
            val = struct.unpack("<d", v.to_bytes(8, "little"))[0]
        elif f == L.PF_DA_STRING:
            val = v.decode("utf-8", "replace")
        elif f == L.PF_DA_DICT:
            k, x = annotation(v)
            d = d if d is not None else {}
            d[k] = x
        elif f == L.PF_DA_ARRAY:
            arr = arr if arr is not None else []
            arr.append(annotation(v)[1])
    return name, d if d is not None else arr if arr is not None else val


def header_meta(h):
    """("key", value) of the JSON's top-level members from the fields of a
    header instant (DOC_HEADER, format/perfetto_writer.c)."""
    if isinstance(h.get(L.DOC_BASE_TIME), int):
        yield L.DOC_BASE_TIME, h[L.DOC_BASE_TIME]
    if isinstance(h.get(L.DI_RANK), int):
        yield L.DOC_DISTRIBUTED_INFO, {
            L.DI_BACKEND: h.get(L.HEADER_LAUNCHER, L.LAUNCHER_NONE), L.DI_RANK: h[L.DI_RANK],
            L.DI_WORLD_SIZE: h.get(L.DI_WORLD_SIZE), L.DI_LOCAL_RANK: h.get(L.DI_LOCAL_RANK),
            L.DI_LOCAL_WORLD_SIZE: h.get(L.DI_LOCAL_WORLD_SIZE),
            L.DI_NODE_RANK: h.get(L.DI_NODE_RANK)}


# The writer's documents: instants whose annotations are the JSON's
# top-level members ("traceprof" the footer object itself).
DOCS = (L.DOC_FOOTER, L.DOC_HEADER, L.DOC_DEVICE_PROPERTIES, L.DOC_TRACE_NAME,
        L.DOC_STACK_FRAMES)


class _Sequence:
    """One packet sequence's state: its interned names and its clocks."""

    def __init__(self):
        self.names, self.cats = {}, {}
        # Interned debug annotation names and string values: read for the
        # steps' args only (_step_args).
        self.keys, self.strs = {}, {}
        self.snap = {}          # clock id -> its value in the first snapshot
        self.incremental = set()
        self.inc = {}           # incremental clock id -> its last value
        self.default_clock = None

    def time(self, ts, clock):
        """A packet's timestamp in the trace's clock: BOOTTIME (6) where the
        sequence's snapshot has it, as Perfetto does, else MONOTONIC (3),
        else as it is."""
        if ts is None:
            return None
        cid = clock if clock is not None else self.default_clock
        if cid in self.incremental:
            self.inc[cid] = self.inc.get(cid, 0) + ts
            ts = self.inc[cid]
        ref = L.PF_CLOCK_BOOTTIME if L.PF_CLOCK_BOOTTIME in self.snap else L.PF_CLOCK_MONOTONIC
        if cid in self.snap and ref in self.snap:
            ts = self.snap[ref] + (ts - self.snap[cid])
        return ts


class PftraceReader:
    """Reads the slices of a Perfetto protobuf trace (.pftrace, perfetto.
    protos.Trace, ../shared/clients/perfetto_trace.proto) as Chrome-style
    event dicts, for `traceprof summary`: the subset traceprof's writer
    uses (format/perfetto_writer.c) and `traceprof merge` writes
    (pfmerge.py).  TrackEvent SLICE_BEGIN / SLICE_END pairs on one track
    become one "ph":"X" event (pid and tid: the thread's, or the track's
    uuid for other tracks), instants "ph":"i", process and thread names
    "ph":"M" process_name / thread_name events; names and categories
    inline or interned (InternedData, per packet sequence, cleared with the
    sequence's incremental state);
    timestamps absolute or on an incremental clock (TracePacketDefaults,
    ClockSnapshot, per sequence), in BOOTTIME where a sequence's snapshot
    ties its clocks to it, else MONOTONIC.  Packets are read one at a time.

    items() yields ("events", [dict, ...], None) batches, as TraceReader,
    and ("meta", key, value) for the JSON's top-level members that the
    writer's document instants carry (DOCS: the "traceprof" footer,
    distributedInfo and baseTimeNanoseconds from the header, ...)."""

    BATCH = 4096

    def __init__(self, path):
        self.path = path
        self.f = open_binary(path)
        self.at = 0

    # At most this much is asked of the file at once: a damaged length
    # (up to 2^64) must fail as a packet cut short, not allocate its size.
    READ_MAX = 1 << 24

    def _read(self, n):
        d = self.f.read(min(n, self.READ_MAX))
        while len(d) < n:
            more = self.f.read(min(n - len(d), self.READ_MAX))
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
        """(field, wire type, value) of one message (wire.fields), with a
        malformed message reported against this file."""
        try:
            yield from fields(b)
        except Malformed as e:
            self._bad(str(e))

    def packets(self):
        """The Trace's packets (field 1), each as its bytes, read one at a
        time; the bytes read so far are self.at."""
        while True:
            key = self._stream_varint()
            if key is None:
                return
            if key & 7 != 2:
                self._bad("a Trace field of wire type %d" % (key & 7))
            n = self._stream_varint()
            if n is None:
                self._bad("a packet without its length")
            if n > reader.max_value:
                # Not read: a length past the limit is a corrupt file or a
                # bomb, and reading it would hold it whole.
                raise reader.too_big(self.path, self.at)
            data = self._read(n)
            if key >> 3 == L.PF_TRACE_PACKET:
                yield data

    def _interned(self, b, sq):
        tables = {L.PF_ID_CATEGORIES: sq.cats, L.PF_ID_NAMES: sq.names,
                  L.PF_ID_ANNOTATION_NAMES: sq.keys, L.PF_ID_STRING_VALUES: sq.strs}
        for f, _, v in self.fields(b):
            if f in tables and isinstance(v, bytes):
                iid, name = None, ""
                for g, _, w in self.fields(v):
                    if g == L.PF_INTERNED_IID:
                        iid = w
                    elif g == L.PF_INTERNED_NAME and isinstance(w, bytes):
                        name = w.decode("utf-8", "replace")
                if iid is not None:
                    tables[f][iid] = name

    def _step_args(self, anns, sq):
        """A step slice's args (its phase), names and strings interned or
        inline; ints as they are."""
        args = {}
        for a in anns:
            key = val = None
            for f, _, v in self.fields(a):
                if f == L.PF_DA_NAME and isinstance(v, bytes):
                    key = v.decode("utf-8", "replace")
                elif f == L.PF_DA_NAME_IID:
                    key = sq.keys.get(v)
                elif f == L.PF_DA_STRING and isinstance(v, bytes):
                    val = v.decode("utf-8", "replace")
                elif f == L.PF_DA_STRING_IID:
                    val = sq.strs.get(v)
                elif f in (L.PF_DA_UINT, L.PF_DA_INT) and isinstance(v, int):
                    val = v
            if key is not None:
                args[key] = val
        return args

    def _snapshot(self, b, sq):
        for g, _, w in self.fields(b):
            if g != L.PF_SNAP_CLOCKS:
                continue
            cid = val = None
            is_inc = False
            for h, _, x in self.fields(w):
                if h == L.PF_CLOCK_ID:
                    cid = x
                elif h == L.PF_CLOCK_TS:
                    val = x
                elif h == L.PF_CLOCK_INCREMENTAL:
                    is_inc = bool(x)
            if cid is None:
                continue
            if val is not None and cid not in sq.snap:
                sq.snap[cid] = val
            if is_inc:
                sq.incremental.add(cid)
                sq.inc[cid] = val or 0

    def _doc(self, name, anns):
        """The ("meta", key, value) items of a document instant."""
        try:
            doc = dict(annotation(a) for a in anns)
        except Malformed as e:
            self._bad(str(e))
        if name == L.DOC_FOOTER:
            yield "meta", L.DOC_FOOTER, doc
        elif name == L.DOC_HEADER:
            for k, v in header_meta(doc):
                yield "meta", k, v
        else:
            for k, v in doc.items():
                yield "meta", k, v

    def _descriptor(self, b, where, batch):
        """A TrackDescriptor: where a thread's or process's track is, and
        its name as a "process_name" or "thread_name" metadata event."""
        uuid, thread, proc = None, None, None
        for f, _, v in self.fields(b):
            if f == L.PF_TD_UUID:
                uuid = v
            elif f == L.PF_TD_THREAD:
                thread = dict((g, w) for g, _, w in self.fields(v))
            elif f == L.PF_TD_PROCESS:
                proc = dict((g, w) for g, _, w in self.fields(v))
        if uuid is None:
            return
        if thread and L.PF_THD_PID in thread and L.PF_THD_TID in thread:
            pid, tid = where[uuid] = (int64(thread[L.PF_THD_PID]), int64(thread[L.PF_THD_TID]))
            name = thread.get(L.PF_THD_NAME)
            if isinstance(name, bytes):
                batch.append({"ph": "M", "name": L.META_THREAD_NAME, "pid": pid, "tid": tid,
                              "args": {"name": name.decode("utf-8", "replace")}})
        elif proc and L.PF_PD_PID in proc:
            pid = int64(proc[L.PF_PD_PID])
            where[uuid] = (pid, 0)
            name = proc.get(L.PF_PD_NAME)
            if isinstance(name, bytes):
                batch.append({"ph": "M", "name": L.META_PROCESS_NAME, "pid": pid, "tid": 0,
                              "args": {"name": name.decode("utf-8", "replace")}})

    def items(self):
        """The events and documents, as TraceReader.items(); a packet whose
        fields do not have the types the schema gives (a damaged file)
        fails as TraceError, never with a Python error."""
        try:
            yield from self._items()
        except (TypeError, AttributeError, OverflowError, KeyError, IndexError,
                RecursionError) as e:
            raise TraceError("%s: not a Perfetto trace: a packet before byte %d does not "
                             "have the schema's types (%s)" % (self.path, self.at, e))

    def _items(self):
        seqs = {}          # trusted_packet_sequence_id -> its _Sequence
        open_slices = {}   # track uuid -> [(name, cat, ts)]
        where = {}         # track uuid -> (pid, tid) of a thread's or process's track
        batch = []
        try:
            for pkt in self.packets():
                # One pass over the packet's fields; its sequence's state is
                # known only once its id is read, so what changes that
                # state is applied after: a cleared state first, then the
                # packet's own interned names, defaults and snapshot.
                ts = clock = te = None
                seq_id = cleared = defaults = snapshot = 0
                interned = []
                for f, _, v in self.fields(pkt):
                    if f == L.PF_PKT_TIMESTAMP:
                        ts = v
                    elif f == L.PF_PKT_CLOCK_ID:
                        clock = v
                    elif f == L.PF_PKT_TRACK_EVENT:
                        te = v
                    elif f == L.PF_PKT_SEQ_ID:
                        seq_id = v
                    elif f == L.PF_PKT_INTERNED:
                        interned.append(v)
                    elif f == L.PF_PKT_SEQ_FLAGS:
                        cleared = v & L.PF_SEQ_INCREMENTAL_STATE_CLEARED
                    elif f == L.PF_PKT_DEFAULTS:
                        defaults = v
                    elif f == L.PF_PKT_CLOCK_SNAPSHOT:
                        snapshot = v
                    elif f == L.PF_PKT_TRACK_DESC:
                        self._descriptor(v, where, batch)
                sq = seqs.get(seq_id)
                if sq is None:
                    sq = seqs[seq_id] = _Sequence()
                names, cats = sq.names, sq.cats
                if cleared:
                    for t in (names, cats, sq.keys, sq.strs):
                        t.clear()
                for v in interned:
                    self._interned(v, sq)
                if defaults:
                    for g, _, w in self.fields(defaults):
                        if g == L.PF_DEFAULTS_CLOCK_ID:
                            sq.default_clock = w
                if snapshot:
                    self._snapshot(snapshot, sq)
                if te is None:
                    continue
                ts = sq.time(ts, clock)
                etype, name, cat, track = 0, None, None, 0
                anns = []
                for f, _, v in self.fields(te):
                    if f == L.PF_TE_TYPE:
                        etype = v
                    elif f == L.PF_TE_ANNOTATIONS and etype in (L.PF_TYPE_INSTANT,
                                                                L.PF_TYPE_SLICE_BEGIN):
                        anns.append(v)
                    elif f == L.PF_TE_NAME_IID:
                        name = names.get(v, "iid %d" % v)
                    elif f == L.PF_TE_NAME and isinstance(v, bytes):
                        name = v.decode("utf-8", "replace")
                    elif f == L.PF_TE_TRACK_UUID:
                        track = v
                    elif f == L.PF_TE_CATEGORY_IIDS:
                        if isinstance(v, bytes):  # packed
                            v = next((w for _, _, w in self.fields(b"\x08" + v)), None)
                        cat = cats.get(v, cat)
                    elif f == L.PF_TE_CATEGORIES and isinstance(v, bytes):
                        cat = v.decode("utf-8", "replace")
                us = ts / 1000.0 if ts is not None else None
                pid, tid = where.get(track, (track, track))
                if etype == L.PF_TYPE_SLICE_BEGIN:
                    # A step's args (its phase: start-up, teardown) are
                    # read; other slices' are not, as before (speed).
                    args = None
                    if anns and name and name.startswith(L.STEP_PREFIX):
                        args = self._step_args(anns, sq)
                    open_slices.setdefault(track, []).append((name, cat, us, args))
                elif etype == L.PF_TYPE_SLICE_END:
                    st = open_slices.get(track)
                    if not st:
                        continue  # an end without its begin (the window began after it)
                    bname, bcat, bus, bargs = st.pop()
                    if bus is None or us is None:
                        continue
                    ev = {"ph": "X", "cat": bcat, "name": bname or "", "pid": pid,
                          "tid": tid, "ts": bus, "dur": us - bus}
                    if bargs:
                        ev["args"] = bargs
                    batch.append(ev)
                elif etype == L.PF_TYPE_INSTANT and us is not None:
                    batch.append({"ph": "i", "cat": cat, "name": name or "", "pid": pid,
                                  "tid": tid, "ts": us})
                if etype == L.PF_TYPE_INSTANT and name in DOCS and anns:
                    yield "events", batch, None
                    batch = []
                    yield from self._doc(name, anns)
                if len(batch) >= self.BATCH:
                    yield "events", batch, None
                    batch = []
            yield "events", batch, None
        finally:
            self.f.close()
