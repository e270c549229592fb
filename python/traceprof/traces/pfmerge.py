"""`traceprof merge` of Perfetto files (.pftrace): the inputs' packet
sequences one after the other in one Trace, rewritten so that Perfetto
reads them as one job.

Each input is one sequence of traceprof's writer (format/perfetto_writer.c:
trusted_packet_sequence_id 1, track uuids counted from 1, clocks tied to
the host's MONOTONIC).  Laid side by side as they are, their interned
names, tracks, processes, arrows and clocks would collide.  Per input:
  - its own sequence id (interned names and the incremental clock are per
    sequence, so they stay as written);
  - track uuids from what each track describes (the rank's pid, the tid, a
    counter's name): the windows and parts of one thread share a track,
    two ranks never do;
  - pids kept apart per rank as the JSON merge keeps them (the same pid in
    another rank gets a new one), process names prefixed "rank N: ",
    sort indexes that group processes by rank;
  - flow ids (launch -> kernel arrows) in a range of their own;
  - clocks aligned through REALTIME, as the JSON merge aligns through
    baseTimeNanoseconds: hosts' MONOTONIC clocks are unrelated, so an
    input's MONOTONIC becomes a clock of its own sequence (65), and its
    snapshot's BOOTTIME, the clock Perfetto lays the trace on, is set to
    its REALTIME less one offset common to every input.
A track named "traceprof merge" comes first (how a later merge of the
folder knows this output) and carries, at the end, an instant with the
report the JSON merge writes as traceprof_merge."""

import hashlib
import struct

from . import wire
from .. import layout as L
from .pftrace import PftraceReader, annotation, header_meta
from ..util import err, version

# Short names for scripts/layout.spec's field numbers and clock ids
# (traceprof/layout.py, written from it).
# TracePacket
P_CLOCK_SNAPSHOT, P_TIMESTAMP = L.PF_PKT_CLOCK_SNAPSHOT, L.PF_PKT_TIMESTAMP
P_SEQ_ID, P_TRACK_EVENT = L.PF_PKT_SEQ_ID, L.PF_PKT_TRACK_EVENT
P_CLOCK_ID, P_TRACK_DESC = L.PF_PKT_CLOCK_ID, L.PF_PKT_TRACK_DESC
# ClockSnapshot / Clock
SNAP_CLOCKS, CLK_ID, CLK_TS = L.PF_SNAP_CLOCKS, L.PF_CLOCK_ID, L.PF_CLOCK_TS
CLOCK_REALTIME, CLOCK_MONOTONIC = L.PF_CLOCK_REALTIME, L.PF_CLOCK_MONOTONIC
CLOCK_BOOTTIME = L.PF_CLOCK_BOOTTIME
HOST_MONOTONIC = L.PF_CLOCK_SEQ_HOST_MONOTONIC  # sequence-scoped: an input's own MONOTONIC
# TrackEvent
TE_ANNOTATIONS, TE_TYPE = L.PF_TE_ANNOTATIONS, L.PF_TE_TYPE
TE_TRACK_UUID, TE_NAME = L.PF_TE_TRACK_UUID, L.PF_TE_NAME
TE_FLOW_IDS, TE_TERMINATING_FLOW_IDS = L.PF_TE_FLOW_IDS, L.PF_TE_TERMINATING_FLOW_IDS
TE_INSTANT = L.PF_TYPE_INSTANT
# TrackDescriptor, ProcessDescriptor, ThreadDescriptor
TD_UUID, TD_NAME, TD_PROCESS = L.PF_TD_UUID, L.PF_TD_NAME, L.PF_TD_PROCESS
TD_THREAD, TD_PARENT = L.PF_TD_THREAD, L.PF_TD_PARENT
PD_PID, PD_SORT, PD_NAME = L.PF_PD_PID, L.PF_PD_SORT, L.PF_PD_NAME
THD_PID, THD_TID = L.PF_THD_PID, L.PF_THD_TID
# DebugAnnotation
DA_BOOL, DA_UINT, DA_INT = L.PF_DA_BOOL, L.PF_DA_UINT, L.PF_DA_INT
DA_DOUBLE, DA_STRING = L.PF_DA_DOUBLE, L.PF_DA_STRING
DA_NAME, DA_DICT, DA_ARRAY = L.PF_DA_NAME, L.PF_DA_DICT, L.PF_DA_ARRAY

MERGE_TRACK = L.DOC_MERGE_TRACK
FLOW_ID_SHIFT = L.FLOW_ID_BITS  # as the JSON merge's (mergewrite.py)
HEADER_SCAN = 64    # packets read for an input's clocks and header


def _uuid(*key):
    """A track uuid from what the track is, the same for every input that
    describes the same track; never 0."""
    h = hashlib.blake2b(repr(key).encode(), digest_size=8).digest()
    return int.from_bytes(h, "little") | 1


def _field_int64(b, f):
    """Field f of message b, an int64 varint; None when absent."""
    return next((wire.int64(v) for g, _, v in wire.fields(b) if g == f), None)


def scan(path):
    """What the merge needs to know of an input before writing it, from its
    first packets: {"clocks": {id: ns} of its first ClockSnapshot, "header":
    the header instant's fields (L.DOC_HEADER), "merged": whether it is a
    merge's output}."""
    r = PftraceReader(path)
    out = {"clocks": {}, "header": {}, "merged": False}
    try:
        for i, pkt in enumerate(r.packets()):
            for f, _, v in r.fields(pkt):
                if f == P_CLOCK_SNAPSHOT and not out["clocks"]:
                    for g, _, c in r.fields(v):
                        if g == SNAP_CLOCKS:
                            cl = dict((h, x) for h, _, x in r.fields(c))
                            if CLK_ID in cl and CLK_TS in cl:
                                out["clocks"][cl[CLK_ID]] = cl[CLK_TS]
                elif f == P_TRACK_DESC:
                    for g, _, x in r.fields(v):
                        if g == TD_NAME and x == MERGE_TRACK.encode():
                            out["merged"] = True
                elif f == P_TRACK_EVENT:
                    te = list(r.fields(v))
                    if any(g == TE_NAME and x == L.DOC_HEADER.encode() for g, _, x in te):
                        for g, _, x in te:
                            if g == TE_ANNOTATIONS:
                                k, val = annotation(x)
                                if k:
                                    out["header"][k] = val
            if out["header"] or out["merged"] or i >= HEADER_SCAN:
                break
    except wire.Malformed as e:
        r._bad(str(e))
    except (TypeError, AttributeError, OverflowError, KeyError, IndexError,
            RecursionError) as e:
        # A field of another wire type than the schema's (a damaged file).
        r._bad("a field of an unexpected type: %s" % e)
    finally:
        r.f.close()
    return out


def meta_of(sc):
    """The JSON-style metadata rank_of() and the report read."""
    return dict(header_meta(sc["header"]))


class _Input:
    """One input's rewriting: its sequence id, pid and uuid maps, flow id
    offset and clock offset."""

    def __init__(self, m, x, pos, seq):
        self.m, self.x, self.seq = m, x, seq
        self.rank = x["rank"]
        self.flow_base = pos << FLOW_ID_SHIFT if m.n_inputs > 1 else 0
        self.uuids = {}     # uuid in the input -> uuid in the merge
        self.pids = {}      # pid in the input -> pid in the merge
        self.order = {}     # pid in the input -> its place among the input's processes
        self.unknown = 0    # uuids used before any descriptor named them
        self.events = 0
        self.enc_uuids = {}  # uuid in the input -> its track_uuid field in the merge
        self.enc_seq = wire.uint(P_SEQ_ID, seq)

    def pid(self, p):
        op = self.pids.get(p)
        if op is None:
            op = self.m.claim((self.rank, p), p)
            self.pids[p] = op
            self.order.setdefault(p, len(self.order))
        return op

    def uuid(self, u):
        nu = self.uuids.get(u)
        if nu is None:
            nu = self.uuids[u] = _uuid("input", self.seq, u)
            self.unknown += 1
        return nu

    def clock_snapshot(self, b):
        out = bytearray()
        for f, wt, v in wire.fields(b):
            if f != SNAP_CLOCKS:
                out += wire.field(f, wt, v)
                continue
            cl = dict((h, x) for h, _, x in wire.fields(v))
            cid = cl.get(CLK_ID)
            if cid == CLOCK_MONOTONIC:
                cl[CLK_ID] = HOST_MONOTONIC
            elif cid == CLOCK_BOOTTIME and self.x["boot"] is not None:
                cl[CLK_TS] = self.x["boot"]
            body = bytearray()
            for h, _, x in wire.fields(v):
                body += wire.uint(h, cl[h]) if h in (CLK_ID, CLK_TS) else wire.uint(h, x)
            out += wire.message(f, bytes(body))
        return bytes(out)

    def track_desc(self, b):
        fs = list(wire.fields(b))
        uuid = parent = None
        proc = thread = None
        name = None
        for f, _, v in fs:
            if f == TD_UUID:
                uuid = v
            elif f == TD_PARENT:
                parent = v
            elif f == TD_PROCESS:
                proc = dict((g, x) for g, _, x in wire.fields(v))
            elif f == TD_THREAD:
                thread = dict((g, x) for g, _, x in wire.fields(v))
            elif f == TD_NAME:
                name = v
        if proc is not None and PD_PID in proc:
            key = ("process", self.pid(wire.int64(proc[PD_PID])))
        elif thread is not None and THD_PID in thread and THD_TID in thread:
            p = wire.int64(thread[THD_PID])
            key = ("thread", self.pid(p), self._tid(p, wire.int64(thread[THD_TID])))
        elif parent is not None:
            key = ("child", self.uuid(parent), name)
        else:
            key = ("input", self.seq, uuid)
        if uuid is not None:
            self.uuids[uuid] = _uuid(*key)
        out = bytearray()
        for f, wt, v in fs:
            if f == TD_UUID:
                out += wire.uint(f, self.uuids[uuid])
            elif f == TD_PARENT:
                out += wire.uint(f, self.uuid(v))
            elif f == TD_PROCESS:
                out += wire.message(f, self._process(v))
            elif f == TD_THREAD:
                out += wire.message(f, self._thread(v))
            else:
                out += wire.field(f, wt, v)
        return bytes(out)

    def _tid(self, pid, tid):
        # A process's main thread (tid == pid) follows its pid.
        return self.pid(pid) if tid == pid else tid

    def _process(self, b):
        out = bytearray()
        pid = _field_int64(b, PD_PID)
        for f, wt, v in wire.fields(b):
            if f == PD_PID:
                out += wire.uint(f, self.pid(pid))
            elif f == PD_NAME:
                nm = v.decode("utf-8", "replace")
                label = "rank %d" % self.rank
                if not nm.startswith(label + ":") and not nm.startswith(label + " "):
                    nm = "%s: %s" % (label, nm)
                out += wire.string(f, nm)
            elif f == PD_SORT:
                out += wire.uint(f, self.rank * L.MERGE_SORT_RANK_STRIDE +
                                min(self.order.get(pid, 0), L.MERGE_SORT_RANK_STRIDE - 1))
            else:
                out += wire.field(f, wt, v)
        return bytes(out)

    def _thread(self, b):
        out = bytearray()
        pid = _field_int64(b, THD_PID)
        for f, wt, v in wire.fields(b):
            if f == THD_PID:
                out += wire.uint(f, self.pid(pid))
            elif f == THD_TID and pid is not None:
                out += wire.uint(f, self._tid(pid, wire.int64(v)))
            else:
                out += wire.field(f, wt, v)
        return bytes(out)

    def track_event(self, b):
        # The hot loop (one call an event): fields copied as written but
        # the track's uuid and the flow ids.
        out = []
        for f, wt, v, start, end in wire.spans(b):
            if f == TE_TRACK_UUID:
                enc = self.enc_uuids.get(v)
                if enc is None:
                    enc = self.enc_uuids[v] = wire.uint(f, self.uuid(v))
                out.append(enc)
            elif f in (TE_FLOW_IDS, TE_TERMINATING_FLOW_IDS) and self.flow_base:
                if wt == 2:  # packed fixed64
                    ids = [int.from_bytes(v[i:i + 8], "little") for i in range(0, len(v), 8)]
                    out.append(wire.message(f, b"".join(
                        ((i + self.flow_base) & ((1 << 64) - 1)).to_bytes(8, "little")
                        for i in ids)))
                else:
                    out.append(wire.field(f, wt, v + self.flow_base))
            else:
                out.append(b[start:end])
        return b"".join(out)

    def packet(self, b):
        out = []
        for f, wt, v, start, end in wire.spans(b):
            if f == P_SEQ_ID:
                out.append(self.enc_seq)
            elif f == P_TRACK_EVENT:
                self.events += 1
                out.append(wire.message(f, self.track_event(v)))
            elif f == P_TRACK_DESC:
                self.enc_uuids.clear()  # a uuid's meaning may change with its descriptor
                out.append(wire.message(f, self.track_desc(v)))
            elif f == P_CLOCK_ID and v == CLOCK_MONOTONIC:
                out.append(wire.uint(f, HOST_MONOTONIC))
            elif f == P_CLOCK_SNAPSHOT:
                out.append(wire.message(f, self.clock_snapshot(v)))
            else:
                out.append(b[start:end])
        return b"".join(out)


class PftraceMerge:
    """The merged Trace, written to w (output.py's writer)."""

    def __init__(self, w, inputs):
        self.w = w
        self.n_inputs = len(inputs)
        self.inputs = inputs
        self.claimed = set()
        self.proc_pid = {}       # (rank, pid in its input) -> pid in the merge
        self.next_synth = L.MERGE_PID_BASE

    def claim(self, key, pid):
        op = self.proc_pid.get(key)
        if op is None:
            if pid in self.claimed:
                while self.next_synth in self.claimed:
                    self.next_synth += 1
                op = self.next_synth
            else:
                op = pid
            self.claimed.add(op)
            self.proc_pid[key] = op
        return op

    def _packet(self, body):
        self.w.write(wire.message(1, body))

    def _merge_track(self, seq):
        uuid = _uuid("merge")
        self._packet(wire.uint(P_SEQ_ID, seq) + wire.message(
            P_TRACK_DESC, wire.uint(TD_UUID, uuid) + wire.string(TD_NAME, MERGE_TRACK)))
        return uuid

    def write(self, prog, report_of):
        """Writes every input, then the report (report_of(per-input
        stats) gives it); returns the number of track events written."""
        seq = 1
        track = self._merge_track(seq)
        first_boot = None
        stats = []
        for pos, x in enumerate(self.inputs):
            seq += 1
            inp = _Input(self, x, pos, seq)
            if first_boot is None and x["boot"] is not None:
                first_boot = x["boot"]
            r = PftraceReader(x["path"])
            try:
                for pkt in r.packets():
                    prog(len(pkt))
                    self._packet(inp.packet(pkt))
            finally:
                r.f.close()
            stats.append({"events": inp.events, "sequence": seq,
                          "pid_map": {str(k): v for k, v in inp.pids.items() if k != v},
                          "flow_id_offset": inp.flow_base,
                          "tracks_without_descriptor": inp.unknown})
        report = report_of(stats)
        ann = b"".join(wire.message(TE_ANNOTATIONS, _encode_annotation(k, v))
                       for k, v in report.items())
        te = (wire.uint(TE_TRACK_UUID, track) + wire.uint(TE_TYPE, TE_INSTANT) +
              wire.string(TE_NAME, "traceprof_merge") + ann)
        ts = wire.uint(P_TIMESTAMP, first_boot or 0) + wire.uint(P_CLOCK_ID, CLOCK_BOOTTIME)
        self._packet(ts + wire.uint(P_SEQ_ID, 1) + wire.message(P_TRACK_EVENT, te))
        return sum(s["events"] for s in stats)


def _encode_annotation(name, v):
    """A DebugAnnotation: name (None inside arrays) and a JSON-like value."""
    out = wire.string(DA_NAME, name) if name is not None else b""
    if isinstance(v, bool):
        out += wire.uint(DA_BOOL, int(v))
    elif isinstance(v, int):
        out += wire.uint(DA_INT, v)
    elif isinstance(v, float):
        out += wire.field(DA_DOUBLE, 1, int.from_bytes(struct.pack("<d", v), "little"))
    elif isinstance(v, dict):
        for k, x in v.items():
            out += wire.message(DA_DICT, _encode_annotation(str(k), x))
    elif isinstance(v, (list, tuple)):
        for x in v:
            out += wire.message(DA_ARRAY, _encode_annotation(None, x))
    elif v is None:
        out += wire.string(DA_STRING, "null")
    else:
        out += wire.string(DA_STRING, str(v))
    return out


def write_pftrace(w, inputs, prog):
    """Writes the merge of inputs (merge.py's, each with its scan()) to w.
    The clocks: each input's BOOTTIME becomes its REALTIME less the first
    input's REALTIME - BOOTTIME, so that every input lies on one clock,
    aligned as the JSON merge aligns them."""
    offset = None
    for x in inputs:
        c = x["scan"]["clocks"]
        if CLOCK_REALTIME in c and CLOCK_BOOTTIME in c:
            offset = c[CLOCK_REALTIME] - c[CLOCK_BOOTTIME]
            break
    for x in inputs:
        c = x["scan"]["clocks"]
        x["boot"] = (c[CLOCK_REALTIME] - offset
                     if offset is not None and CLOCK_REALTIME in c else None)
        if x["boot"] is None and len(inputs) > 1:
            err("%s: no REALTIME clock in its first packet; its times are taken as they are "
                "(same host)" % x["path"])

    def report(stats):
        entries = []
        for x, s in zip(inputs, stats):
            e = {"file": x["path"], "rank": x["rank"], "rank_from": "traceprof header or file "
                 "name" if x["rank_known"] else "input order"}
            if x["base"] is not None:
                e["baseTimeNanoseconds"] = x["base"]
            if x["boot"] is not None:
                e["shift_ns"] = x["boot"] - x["scan"]["clocks"].get(CLOCK_BOOTTIME, x["boot"])
            e.update(s)
            entries.append(e)
        return {"version": version(), "inputs": entries}

    return {"events": PftraceMerge(w, inputs).write(prog, report)}
