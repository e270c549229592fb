"""Finishing a cut Perfetto window (.pftrace, .pftrace.gz, .pftrace.zst)
for `traceprof recover` (recover.py does the JSON and the finding).

The Perfetto writer (format/perfetto_writer.c) hands the sink whole
TracePackets at each of the flush thread's drains, so the temporary file of
a process that died is a Trace message (a run of length-delimited packets,
field 1) up to its last drain, and maybe a packet cut short after it.  Its
first TrackEvent is the header instant (layout.DOC_HEADER), whose annotations carry
the window (layout.DOC_WINDOW: final name with the step left open, part,
first step, host, pid, rotation) and the rank.  This module keeps every
whole packet as it is (the sequence's interned names and clocks stay
valid), then adds what the writer's end adds: a layout.DOC_TRACE_NAME instant
and, last, the footer instant whose `cut` member says why, when
and what may be missing, on the header's track and sequence, at the last
packet's time (a timestamp delta of 0 on the sequence's incremental clock).
"""

import struct
import subprocess
import zlib

from .. import layout as L
from ..traces.pftrace import annotation
from ..traces.wire import Malformed, field, fields, message, string, uint, varint


def _chunks(path, final):
    """The decompressed bytes of a possibly cut file, in chunks, up to where
    its compressed stream is cut (no error)."""
    if final.endswith(".zst"):
        proc = subprocess.Popen(["zstd", "-dcq", "--", path], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL)
        try:
            while True:
                b = proc.stdout.read(1 << 20)
                if not b:
                    return
                yield b
        finally:
            proc.stdout.close()
            proc.kill()
            proc.wait()
    with open(path, "rb") as f:
        if final.endswith(".gz"):
            yield from gunzip_chunks(f)
            return
        while True:
            b = f.read(1 << 20)
            if not b:
                return
            yield b


def gunzip_chunks(f):
    """The decompressed bytes of the gzip stream read from f, in chunks, up
    to where it is cut or broken (no error).  Every member: the writer ends
    one at each drain (format/sink_codec.c), and a file is their
    concatenation."""
    d = zlib.decompressobj(31)
    while True:
        b = f.read(1 << 20)
        if not b:
            return
        while b:
            try:
                out = d.decompress(b)
            except zlib.error:
                return
            if out:
                yield out
            b = b""
            if d.eof:
                b = d.unused_data
                d = zlib.decompressobj(31)


def _varint_at(buf, i):
    """(value, next index) of the varint at buf[i], or (None, i) when the
    buffer ends inside it (or it is longer than 10 bytes)."""
    v = shift = 0
    n = len(buf)
    while i < n and shift < 70:
        c = buf[i]
        i += 1
        v |= (c & 0x7F) << shift
        if c < 0x80:
            return v, i
        shift += 7
    return None, i


def packets(path, final):
    """(raw bytes, payload) of each whole TracePacket of a possibly cut
    file, in order; ends at the first packet cut short or at anything
    that is not a packet (the bytes a death left half written)."""
    buf = b""
    for chunk in _chunks(path, final):
        buf = buf + chunk if buf else chunk
        i = 0
        while True:
            key, j = _varint_at(buf, i)
            if key is None:
                break
            if key != (L.PF_TRACE_PACKET << 3 | 2):
                return
            n, k = _varint_at(buf, j)
            if n is None or k + n > len(buf):
                break
            yield buf[i:k + n], buf[k:k + n]
            i = k + n
        buf = buf[i:]


def _anno(name, value):
    """A DebugAnnotation of name (None: an array element) and a JSON-like
    value, as the writer's documents are written (format/perfetto_annos.c);
    None values are left out by the caller."""
    b = string(L.PF_DA_NAME, name) if name is not None else b""
    if isinstance(value, bool):
        return b + uint(L.PF_DA_BOOL, int(value))
    if isinstance(value, int):
        return b + uint(L.PF_DA_INT, value) if value >= 0 else \
            b + field(L.PF_DA_INT, 0, value + (1 << 64))
    if isinstance(value, float):
        return b + field(L.PF_DA_DOUBLE, 1, struct.unpack("<Q", struct.pack("<d", value))[0])
    if isinstance(value, dict):
        for k, v in value.items():
            if v is not None:
                b += message(L.PF_DA_DICT, _anno(k, v))
        return b
    if isinstance(value, (list, tuple)):
        for v in value:
            b += message(L.PF_DA_ARRAY, _anno(None, v))
        return b
    return b + string(L.PF_DA_STRING, str(value))


def doc_packet(seq_id, track, name, doc):
    """A document instant (name, its members as annotations) on track, at
    the previous packet's time (delta 0 on the sequence's default,
    incremental clock)."""
    te = uint(L.PF_TE_TRACK_UUID, track) + uint(L.PF_TE_TYPE, L.PF_TYPE_INSTANT) + \
        string(L.PF_TE_NAME, name)
    for k, v in doc.items():
        if v is not None:
            te += message(L.PF_TE_ANNOTATIONS, _anno(k, v))
    body = uint(L.PF_PKT_TIMESTAMP, 0) + uint(L.PF_PKT_SEQ_ID, seq_id) + \
        message(L.PF_PKT_TRACK_EVENT, te)
    return varint(L.PF_TRACE_PACKET << 3 | 2) + varint(len(body)) + body


class Scan:
    """What finishing needs from the packets, read as they are copied: the
    header (window, rank, track, sequence), the events written (slices,
    instants and counters, not the documents) and the last step ended."""

    def __init__(self):
        self.window, self.rank = {}, None
        self.track = self.seq_id = None
        self.events = 0
        self.last_step = None
        self.names = {}
        self.open = {}  # track -> the names of its slices begun, not ended

    def packet(self, payload):
        """Reads one packet; False when it is not one (then it is left out,
        with all that follows)."""
        try:
            te, seq, interned, cleared = None, 0, [], False
            for f, _, v in fields(payload):
                if f == L.PF_PKT_TRACK_EVENT:
                    te = v
                elif f == L.PF_PKT_SEQ_ID:
                    seq = v
                elif f == L.PF_PKT_INTERNED:
                    interned.append(v)
                elif f == L.PF_PKT_SEQ_FLAGS:
                    cleared = v & L.PF_SEQ_INCREMENTAL_STATE_CLEARED
            if cleared:
                self.names = {}
            for v in interned:
                for f, _, t in fields(v):
                    if f == L.PF_ID_NAMES and isinstance(t, bytes):
                        d = dict((g, w) for g, _, w in fields(t))
                        if isinstance(d.get(L.PF_INTERNED_NAME), bytes):
                            self.names[d.get(L.PF_INTERNED_IID)] = \
                                d[L.PF_INTERNED_NAME].decode("utf-8", "replace")
            if te is None:
                return True
            etype, name, track, anns = 0, None, None, []
            for f, _, v in fields(te):
                if f == L.PF_TE_TYPE:
                    etype = v
                elif f == L.PF_TE_NAME and isinstance(v, bytes):
                    name = v.decode("utf-8", "replace")
                elif f == L.PF_TE_NAME_IID:
                    name = self.names.get(v)
                elif f == L.PF_TE_TRACK_UUID:
                    track = v
                elif f == L.PF_TE_ANNOTATIONS and isinstance(v, bytes):
                    anns.append(v)
            if etype == L.PF_TYPE_INSTANT and name == L.DOC_HEADER and self.track is None:
                doc = dict(annotation(a) for a in anns)
                w = doc.get(L.DOC_WINDOW)
                self.window = w if isinstance(w, dict) else {}
                r = doc.get(L.DI_RANK)
                self.rank = r if isinstance(r, int) and not isinstance(r, bool) else None
                self.track, self.seq_id = track, seq
                return True
            if etype == L.PF_TYPE_INSTANT and name in (L.DOC_DEVICE_PROPERTIES,
                                                        L.DOC_STACK_FRAMES):
                return True
            if etype in (L.PF_TYPE_INSTANT, L.PF_TYPE_COUNTER):
                self.events += 1
            # A step counts once its slice ended (the writer puts the end
            # right after the begin, but a death can come between them).
            if etype == L.PF_TYPE_SLICE_BEGIN:
                st = self.open.setdefault(track, [])
                if len(st) < 256:
                    st.append(name)
            elif etype == L.PF_TYPE_SLICE_END and self.open.get(track):
                name = self.open[track].pop()
                self.events += 1  # a slice, whole: as readers count it
                if name and name.startswith(L.STEP_PREFIX):
                    try:
                        self.last_step = int(name[len(L.STEP_PREFIX):])
                    except ValueError:
                        pass
        except (Malformed, TypeError, ValueError, KeyError):
            return False
        return True


def head_window(path, final, max_packets=64):
    """The DOC_WINDOW of a .pftrace's header instant (a dict), or None."""
    s = Scan()
    try:
        for i, (_, payload) in enumerate(packets(path, final)):
            if not s.packet(payload) or i >= max_packets:
                break
            if s.track is not None:
                return s.window
    except OSError:
        return None
    return None


def copy(path, final, out):
    """Copies every whole packet of path into out (a binary writer);
    returns the Scan of them, or None when no header instant is among them
    (the process died as the file began: nothing to keep)."""
    s = Scan()
    for raw, payload in packets(path, final):
        if not s.packet(payload):
            break
        out.write(raw)
    return s if s.track is not None else None


def end(s, trace_name, footer):
    """The packets a finished cut window ends with: its name, and the
    footer last (read from the file's end: traces/aggtable.py).  Its
    devices are those of the header, if any (the writer's end adds those
    known later: not known here)."""
    return doc_packet(s.seq_id, s.track, L.DOC_TRACE_NAME, {L.DOC_TRACE_NAME: trace_name}) + \
        doc_packet(s.seq_id, s.track, L.DOC_FOOTER, footer)
