"""Issue 43 item 4: the JSON and Perfetto readers (traces/reader.py,
traces/pftrace.py) take time linear in the input and bounded memory
whatever its shape: a value that spans many chunks is retried after its
text doubles, not after every chunk; a value over the limit (max_value,
--max-value-mb) is refused before it is held whole; an error inside the
text is reported where it is, without reading the rest of the file."""

import gzip
import json

import pytest

from traceprof.traces import reader
from traceprof.traces.pftrace import PftraceReader
from traceprof.traces.reader import TraceError, TraceReader

from test_readers import read_all


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of 64 KiB, so that a value of a few MiB spans a hundred of
    them (the quadratic cost shows at a small size); the limit restored
    after the test."""
    monkeypatch.setattr(reader, "CHUNK", 1 << 16)
    monkeypatch.setattr(reader, "max_value", reader.max_value)


def counting(monkeypatch):
    """Counts the characters of text that decode() parses: a value's when
    it succeeds, the rest of the buffer when it fails (cut short, it parsed
    to the end): the work of every attempt."""
    seen = [0]
    real = TraceReader.decode

    def decode(self, text, pos):
        try:
            v, end = real(self, text, pos)
        except ValueError:
            seen[0] += len(text) - pos
            raise
        seen[0] += end - pos
        return v, end
    monkeypatch.setattr(TraceReader, "decode", decode)
    return seen


def huge_name_doc(n, events_after=2):
    ev = [{"ph": "X", "name": "x" * n, "pid": 1, "tid": 1, "ts": 1, "dur": 2}]
    ev += [{"ph": "X", "name": "k%d" % i, "pid": 1, "tid": 1, "ts": 3 + i, "dur": 1}
           for i in range(events_after)]
    return {"schemaVersion": 1, "traceEvents": ev, "tail": "y" * n}


@pytest.mark.parametrize("suffix", [".json", ".json.gz"])
def test_huge_value_decoded_in_linear_work(tmp_path, monkeypatch, small_chunks, suffix):
    # An event's name and a top-level member of 8 MiB each, over 128 chunks:
    # retried after each chunk, the parser is handed 64 times the text (the
    # old reader: 1.1 GB of attempts for these 16 MiB); retried after it
    # doubles, at most 4 times.
    n = 8 << 20
    doc = huge_name_doc(n)
    path = str(tmp_path / ("big" + suffix))
    with (gzip.open if suffix.endswith(".gz") else open)(path, "wb") as f:
        f.write(json.dumps(doc).encode())
    seen = counting(monkeypatch)
    meta, events = read_all(TraceReader(path))
    assert events == doc["traceEvents"]
    assert meta == {"schemaVersion": 1, "tail": doc["tail"]}
    assert seen[0] <= 4 * 2 * n, "decode() parsed %d MiB for 16 MiB of values" % (seen[0] >> 20)


def test_value_over_the_limit_refused(tmp_path, small_chunks):
    # A name of 3 MiB with a limit of 2: refused, not decoded, having read
    # no more than the limit and a few chunks.
    reader.set_max_value_mb(2)
    path = str(tmp_path / "t.json")
    with open(path, "w") as f:
        json.dump(huge_name_doc(3 << 20), f)
    r = TraceReader(path)
    with pytest.raises(TraceError) as e:
        read_all(r)
    assert "t.json: a value at byte 37 is larger than 2 MiB: not read" in str(e.value)
    assert "--max-value-mb" in str(e.value)
    assert r.bytes_read <= (2 << 20) + 4 * reader.CHUNK
    # Raised, it is read.
    reader.set_max_value_mb(4)
    assert len(read_all(TraceReader(path))[1]) == 3


def test_gzip_bomb_refused_reading_little(tmp_path):
    # 1 GiB of a name in 1 MB of gzip (one member per MiB of "a"): refused
    # after reading the limit (16 MiB) and a chunk or two, not 1 GiB.
    one = gzip.compress(b"a" * (1 << 20), 9)
    path = str(tmp_path / "bomb.json.gz")
    with open(path, "wb") as f:
        f.write(gzip.compress(b'{"traceEvents": [{"ph": "X", "name": "'))
        for _ in range(1024):
            f.write(one)
        f.write(gzip.compress(b'", "ts": 1, "dur": 1}]}'))
    r = TraceReader(path)
    with pytest.raises(TraceError, match="larger than 16 MiB"):
        read_all(r)
    assert r.bytes_read <= (16 << 20) + 3 * reader.CHUNK


def test_error_inside_the_text_reported_at_once(tmp_path, small_chunks):
    # An invalid event followed by 4 MiB of valid ones: the error is where
    # it is, found without reading the rest of the file (the old reader read
    # it all, chunk by chunk, retrying the event each time).
    ev = ['{"ph": "X", "name": "a", "ts": 1, "dur": 1}'] * 3 + ['{"ph": "X", "name": nope}']
    ev += ['{"ph": "X", "name": "b", "ts": 2, "dur": 1}'] * 100000
    path = str(tmp_path / "bad.json")
    with open(path, "w") as f:
        f.write('{"traceEvents": [' + ", ".join(ev) + "]}")
    r = TraceReader(path)
    with pytest.raises(TraceError) as e:
        read_all(r)
    at = len('{"traceEvents": [' + ", ".join(ev[:3]) + ', {"ph": "X", "name": ')
    assert str(e.value) == "%s: invalid JSON at byte %d: an event: Expecting value" % (path, at)
    assert r.bytes_read <= 2 * reader.CHUNK


def test_deep_nesting_refused(tmp_path):
    path = str(tmp_path / "deep.json")
    with open(path, "w") as f:
        f.write('{"traceEvents": [' + "[" * 2000000)
    with pytest.raises(TraceError, match="nested deeper than"):
        read_all(TraceReader(path))


def test_cut_values_still_read(tmp_path, small_chunks):
    # Values cut by a chunk's end at every point of their text (string,
    # escape, number, literal, nesting) still read as the whole file does.
    doc = {"a": [1.5, -2e-3, True, None, "q\\u00e9\u00e9\"x"], "traceEvents": [
        {"ph": "X", "name": "n\u00e9%d" % i, "ts": i * 1.25, "dur": 1, "args": {"v": [i, None]}}
        for i in range(30000)], "b": {"c": [False, 123456789012]}}
    path = str(tmp_path / "cut.json")
    with open(path, "w") as f:
        json.dump(doc, f, ensure_ascii=False)
    meta, events = read_all(TraceReader(path))
    assert events == doc["traceEvents"]
    assert meta == {"a": doc["a"], "b": doc["b"]}


def test_pftrace_packet_over_the_limit_refused(tmp_path):
    # A Trace packet whose length says 1 TiB: refused at once, not read.
    path = str(tmp_path / "bomb.pftrace")
    n = 1 << 40
    length = bytearray()
    while n >= 0x80:
        length.append((n & 0x7F) | 0x80)
        n >>= 7
    length.append(n)
    with open(path, "wb") as f:
        f.write(bytes([1 << 3 | 2]) + bytes(length) + b"\0" * 1000)
    with pytest.raises(TraceError, match=r"bomb.pftrace: a value at byte \d+ is larger than"):
        read_all(PftraceReader(path))


def test_small_file_events_in_batches(tmp_path, monkeypatch):
    # A file read whole in one chunk, in the writer's layout, whose footer
    # holds "},": the events are one batch parse, not event by event (the
    # batch failed on the footer's "}," and the reader decoded every event
    # alone, retrying the batch every 256 events: 1 s per MB).
    ev = [{"ph": "X", "name": "k%d" % i, "pid": 1, "tid": 1, "ts": i, "dur": 1,
           "args": {"correlation": i}} for i in range(5000)]
    path = str(tmp_path / "small.json")
    with open(path, "w") as f:
        f.write('{\n  "schemaVersion": 1,\n  "traceEvents": [\n')
        f.write(",\n".join(json.dumps(e, separators=(",", ":")) for e in ev))
        f.write('\n  ],\n  "traceprof": {"threads": [{"tid": 1}, {"tid": 2}]}\n}\n')
    seen = counting(monkeypatch)
    meta, events = read_all(TraceReader(path))
    assert events == ev
    assert meta == {"schemaVersion": 1, "traceprof": {"threads": [{"tid": 1}, {"tid": 2}]}}
    assert seen[0] < 4096, "%d characters decoded event by event" % seen[0]
