"""The trace readers that merge and summary share (traces/reader.py,
traces/pftrace.py, traces/tail.py) on small hand-made traces: JSON plain,
gzip and zstd (through the zstd command), and Perfetto's protobuf."""

import gzip
import json
import shutil
import subprocess

import pytest

from traceprof.traces import wire
from traceprof.traces.pftrace import PftraceReader
from traceprof.traces.reader import TraceError, TraceReader
from traceprof.traces.tail import footer_drops, load_meta

EVENTS = [
    {"ph": "X", "cat": "user_annotation", "name": "forward", "pid": 1, "tid": 2,
     "ts": 10.5, "dur": 4.25},
    {"ph": "i", "cat": "user_annotation", "name": "tick", "pid": 1, "tid": 2, "ts": 12},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaMalloc", "pid": 1, "tid": 2,
     "ts": 11, "dur": 1, "args": {"result": 0}},
]
DOC = {"schemaVersion": 1, "baseTimeNanoseconds": 1700000000000000000,
       "traceEvents": EVENTS, "traceprof": {"version": "0.1.0", "events_dropped": 7}}
TEXT = json.dumps(DOC).encode()


def read_all(reader):
    meta, events = {}, []
    for kind, a, b in reader.items():
        if kind == "meta":
            meta[a] = b
        else:
            assert kind == "events"
            events.extend(a)
    return meta, events


def check_json(path):
    meta, events = read_all(TraceReader(str(path)))
    assert events == EVENTS
    assert meta["schemaVersion"] == 1
    assert meta["baseTimeNanoseconds"] == 1700000000000000000
    assert meta["traceprof"]["events_dropped"] == 7


def test_json_plain(tmp_path):
    p = tmp_path / "t.json"
    p.write_bytes(TEXT)
    check_json(p)
    # The footer from the file's end, without reading its events.
    assert footer_drops(str(p)) == 7
    assert load_meta(str(p))["baseTimeNanoseconds"] == 1700000000000000000


def test_json_gzip(tmp_path):
    p = tmp_path / "t.json.gz"
    p.write_bytes(gzip.compress(TEXT))
    check_json(p)


@pytest.mark.skipif(shutil.which("zstd") is None, reason="no zstd command")
def test_json_zstd(tmp_path):
    p = tmp_path / "t.json.zst"
    p.write_bytes(subprocess.run(["zstd", "-q", "-c"], input=TEXT, stdout=subprocess.PIPE,
                                 check=True).stdout)
    check_json(p)


def test_json_bare_array_and_batches(tmp_path):
    many = [dict(EVENTS[0], ts=i) for i in range(10000)]
    p = tmp_path / "a.json"
    p.write_text(json.dumps(many))
    _, events = read_all(TraceReader(str(p)))
    assert [e["ts"] for e in events] == list(range(10000))


@pytest.mark.parametrize("text, what", [
    (b'{"traceEvents": [{"ph": "X"}', "end of file"),
    (b'{"traceEvents": []} x', "extra data"),
    (b'{"traceEvents": [1,]}', "invalid JSON"),
])
def test_json_errors(tmp_path, text, what):
    p = tmp_path / "bad.json"
    p.write_bytes(text)
    with pytest.raises(TraceError) as e:
        read_all(TraceReader(str(p)))
    assert what in str(e.value) and str(p) in str(e.value)


def packet(*fields):
    return wire.message(1, b"".join(fields))


def pftrace_bytes():
    """A trace as format/perfetto_writer.c writes one, in little: a thread
    track, interned names and categories, a slice and an instant."""
    seq = wire.uint(10, 1)
    track = wire.message(60, wire.uint(1, 99) + wire.message(
        4, wire.uint(1, 1) + wire.uint(2, 2) + wire.string(5, "main")))
    interned = wire.message(12, wire.message(1, wire.uint(1, 1) + wire.string(2, "user_annotation"))
                            + wire.message(2, wire.uint(1, 1) + wire.string(2, "forward")))
    begin = wire.message(11, wire.uint(9, 1) + wire.uint(10, 1) + wire.uint(3, 1) + wire.uint(11, 99))
    end = wire.message(11, wire.uint(9, 2) + wire.uint(11, 99))
    instant = wire.message(11, wire.uint(9, 3) + wire.string(23, "tick")
                           + wire.string(22, "user_annotation,io") + wire.uint(11, 99))
    return b"".join([
        packet(seq, wire.uint(13, 1), track, interned),
        packet(seq, wire.uint(8, 10500), begin),
        packet(seq, wire.uint(8, 12000), instant),
        packet(seq, wire.uint(8, 14750), end),
    ])


def test_pftrace(tmp_path):
    p = tmp_path / "t.pftrace"
    p.write_bytes(pftrace_bytes())
    _, events = read_all(PftraceReader(str(p)))
    names = [e for e in events if e["ph"] == "M"]
    assert names == [{"ph": "M", "name": "thread_name", "pid": 1, "tid": 2,
                      "args": {"name": "main"}}]
    x = [e for e in events if e["ph"] == "X"]
    assert x == [{"ph": "X", "cat": "user_annotation", "name": "forward", "pid": 1, "tid": 2,
                  "ts": 10.5, "dur": 4.25}]
    i = [e for e in events if e["ph"] == "i"]
    assert i == [{"ph": "i", "cat": "user_annotation,io", "name": "tick", "pid": 1, "tid": 2,
                  "ts": 12.0}]


def test_pftrace_truncated(tmp_path):
    p = tmp_path / "t.pftrace"
    p.write_bytes(pftrace_bytes()[:-3])
    with pytest.raises(TraceError) as e:
        read_all(PftraceReader(str(p)))
    assert "truncated" in str(e.value)


def test_wire_roundtrip():
    b = wire.uint(1, 300) + wire.string(2, "é") + wire.field(3, 1, -1)
    got = list(wire.fields(b))
    assert got[0] == (1, 0, 300)
    assert got[1] == (2, 2, "é".encode())
    assert wire.int64(got[2][2]) == -1
    assert wire.varint(-1) == b"\xff" * 9 + b"\x01"
    with pytest.raises(wire.Malformed):
        list(wire.fields(b"\x0a\x05ab"))
