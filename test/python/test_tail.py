"""The one tail reader (traces/tail.py tail_bytes, issue 35): the last bytes
of a plain, .gz or .zst file are the same, with whether that is the whole
file; the footer of a compressed file is found from one decompression
(traces/aggtable.py footer_of)."""

import gzip
import os
import shutil
import subprocess

import pytest

from traceprof.traces import aggtable, reader, tail


@pytest.fixture
def files(tmp_path, monkeypatch):
    # Small chunks, so that the kept tail spans several of them.
    monkeypatch.setattr(tail, "CHUNK", 4096)
    data = bytes(range(256)) * 397 + b"end"
    plain = tmp_path / "t.bin"
    plain.write_bytes(data)
    out = [str(plain)]
    with gzip.open(str(plain) + ".gz", "wb") as g:
        g.write(data)
    out.append(str(plain) + ".gz")
    if shutil.which("zstd"):
        subprocess.run(["zstd", "-q", str(plain), "-o", str(plain) + ".zst"], check=True)
        out.append(str(plain) + ".zst")
    return data, out


@pytest.mark.parametrize("n", [1, 100, 4096, 5000, 12288, 101635, 101636, 1 << 20])
def test_tail_bytes(files, n):
    data, paths = files
    for p in paths:
        assert tail.tail_bytes(p, n) == (data[-n:], len(data) <= n), (p, n)
    assert tail.tail_text(paths[0], n) == data[-n:].decode("utf-8", "replace")


def test_footer_of_compressed_decompresses_once(tmp_path, monkeypatch):
    body = '{"traceEvents": [\n{"ph":"X","name":"a","ts":1.0,"dur":2.0,"pid":1,"tid":1}' \
           + ',\n{"ph":"i","name":"pad","ts":1.0,"pid":1,"tid":1}' * 20000 \
           + '\n  ],\n  "traceprof": {"aggregate": {"version": 1}, "pad": "%s"}\n}\n' % ("x" * 100000)
    p = tmp_path / "t.json.gz"
    with gzip.open(str(p), "wt") as g:
        g.write(body)
    opened = []
    real = reader.open_binary

    def counting(path):
        opened.append(path)
        return real(path)
    monkeypatch.setattr(tail, "open_binary", counting)
    monkeypatch.setattr(aggtable, "open_binary", counting)
    # The footer is longer than the first tail tried (64 KiB).
    assert aggtable.footer_of(str(p))["aggregate"] == {"version": 1}
    assert opened == [str(p)]


def test_tail_members_parse_each_member_once(monkeypatch):
    # A tail of 20,000 members after many ']': each member is parsed once
    # whichever ']' leads to it (parsing each ']''s members anew was
    # quadratic: 200 million parses here, hours for a MiB of them).
    import json
    calls = [0]

    class Counting(json.JSONDecoder):
        def raw_decode(self, s, idx=0):
            calls[0] += 1
            return super().raw_decode(s, idx)
    monkeypatch.setattr(tail.json, "JSONDecoder", Counting)
    n = 20000
    text = '{"traceEvents": [{"ph": "X"}], "a": 0' + "".join(
        ',"k%d":[%d]' % (i, i) for i in range(n)) + "}"
    meta = tail._tail_members(text)
    assert calls[0] <= 2 * 2 * n, "%d parses for %d members" % (calls[0], n)
    # The array's own ']' wins: every member after it, and the same as the
    # members of the whole document but traceEvents.
    doc = json.loads(text)
    del doc["traceEvents"]
    assert meta == doc


def test_tail_members_as_before():
    # The footer after the events, a later array member, a ']' inside a
    # string, and no footer at all.
    assert tail._tail_members('{"traceEvents": [{"a": [1]}\n  ],\n  "x": {"y": [2]}, '
                              '"deviceProperties": [], "s": "]"\n}\n') == \
        {"x": {"y": [2]}, "deviceProperties": [], "s": "]"}
    assert tail._tail_members('[{"a": [1]}]') == {}
    assert tail._tail_members('{"traceEvents": [], "t": 1') == {}
