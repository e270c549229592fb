"""Finishing a cut .pftrace (cli/recover_pf.py, issue 44): a temporary file
whose last packet is cut short anywhere, or followed by bytes that are no
packet, keeps every whole packet before it, and gets the trace's name and a
footer instant with its `cut` member, last; the file is named after the
last step it holds, and the Perfetto reader reads it.  The file is built
here packet by packet, as the writer lays it out (one sequence, a first
packet that clears its state, the header instant with traceprofWindow,
interned step names)."""

import gzip
import os

import pytest

from traceprof import layout as L
from traceprof.cli.recover import finish_pftrace
from traceprof.cli.recover_pf import doc_packet
from traceprof.traces.pftrace import PftraceReader
from traceprof.traces.wire import message, string, uint, varint

SEQ, TRACK = 1, 5


def packet(body):
    return varint(L.PF_TRACE_PACKET << 3 | 2) + varint(len(body)) + body


def slice_packets(name_iid, ts, dur, new_name=None):
    interned = b""
    if new_name is not None:
        interned = message(L.PF_PKT_INTERNED, message(
            L.PF_ID_NAMES, uint(L.PF_INTERNED_IID, name_iid) + string(L.PF_INTERNED_NAME, new_name)))
    begin = uint(L.PF_PKT_TIMESTAMP, ts) + uint(L.PF_PKT_CLOCK_ID, L.PF_CLOCK_MONOTONIC) + \
        uint(L.PF_PKT_SEQ_ID, SEQ) + message(L.PF_PKT_TRACK_EVENT, uint(L.PF_TE_TRACK_UUID, TRACK) +
                                              uint(L.PF_TE_TYPE, L.PF_TYPE_SLICE_BEGIN) +
                                              uint(L.PF_TE_NAME_IID, name_iid)) + interned
    end = uint(L.PF_PKT_TIMESTAMP, ts + dur) + uint(L.PF_PKT_CLOCK_ID, L.PF_CLOCK_MONOTONIC) + \
        uint(L.PF_PKT_SEQ_ID, SEQ) + message(L.PF_PKT_TRACK_EVENT, uint(L.PF_TE_TRACK_UUID, TRACK) +
                                              uint(L.PF_TE_TYPE, L.PF_TYPE_SLICE_END))
    return packet(begin), packet(end)


def temp_file(steps):
    """The bytes of a window's temporary file of `steps` steps, and the
    offsets where each step's packets end."""
    first = packet(uint(L.PF_PKT_SEQ_ID, SEQ) +
                   uint(L.PF_PKT_SEQ_FLAGS, L.PF_SEQ_INCREMENTAL_STATE_CLEARED))
    header = doc_packet(SEQ, TRACK, L.DOC_HEADER, {
        L.DI_RANK: 3, L.DOC_WINDOW: {L.WINDOW_NAME: "rank3.step{step}.trace.pftrace",
                                     L.WINDOW_PART: 1, L.WINDOW_FIRST_STEP: 1,
                                     L.WINDOW_HOST: "h", L.WINDOW_PID: 77, L.WINDOW_KEEP: -1}})
    data, ends = first + header, []
    for s in range(1, steps + 1):
        b, e = slice_packets(s, 1000 * s, 500, new_name="%s%d" % (L.STEP_PREFIX, s))
        data += b + e
        ends.append(len(data))
    return data, ends


def steps_in(path):
    got = []
    meta = {}
    for kind, a, b in PftraceReader(path).items():
        if kind == "events":
            got += [int(e["name"][len(L.STEP_PREFIX):]) for e in a
                    if e.get("ph") == "X" and e["name"].startswith(L.STEP_PREFIX)]
        elif kind == "meta":
            meta[a] = b
    return got, meta


@pytest.mark.parametrize("cut_at", ["boundary", "in_length", "in_packet", "garbage"])
@pytest.mark.parametrize("gz", [False, True])
def test_cut_pftrace_keeps_whole_packets(tmp_path, cut_at, gz):
    data, ends = temp_file(6)
    whole = ends[3]  # steps 1-4 whole
    tail = {"boundary": b"", "in_length": data[whole:whole + 1],
            "in_packet": data[whole:ends[4] - 3], "garbage": b"\x00\x07junk"}[cut_at]
    final = "rank3.step1.trace.pftrace" + (".gz" if gz else "")
    path = tmp_path / (".%s.tmp.77.0" % final)
    body = data[:whole] + tail
    if gz:
        # A gzip stream up to a sync point, then its cut rest: no trailer.
        import zlib
        c = zlib.compressobj(6, zlib.DEFLATED, 31)
        z = c.compress(data[:whole]) + c.flush(zlib.Z_SYNC_FLUSH)
        body = z + c.compress(tail) + (c.flush(zlib.Z_SYNC_FLUSH)[:2] if tail else b"")
    path.write_bytes(body)
    r = finish_pftrace(str(path), final, 77)
    assert r is not None
    assert os.path.basename(r["out"]) == "rank3.step4.trace.pftrace" + (".gz" if gz else "")
    assert not path.exists()
    got, meta = steps_in(r["out"])
    assert got == [1, 2, 3, 4]
    footer = meta[L.DOC_FOOTER]
    assert footer["steps"] == [1, 4] and footer["events_written"] == 4
    assert "pid 77" in footer[L.FOOTER_CUT]["reason"]
    assert meta[L.DOC_TRACE_NAME] == "rank3.step4.trace.pftrace"
    assert meta[L.DOC_DISTRIBUTED_INFO][L.DI_RANK] == 3
    if gz:
        gzip.decompress(open(r["out"], "rb").read())  # a whole stream


def test_no_header_is_nothing(tmp_path):
    data, _ = temp_file(1)
    path = tmp_path / ".rank3.step1.trace.pftrace.tmp.77.0"
    path.write_bytes(data[:5])  # the first packet, cut short
    assert finish_pftrace(str(path), "rank3.step1.trace.pftrace", 77) is None
    assert not any(p.name.startswith(".rank3.step1.trace.pftrace.recover") for p in tmp_path.iterdir())
