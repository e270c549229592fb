"""traces/aggtable.py check(): a table is used only when the file proves it
belongs to the events beside it (issue 43).  Hand-made traces with covers()
(the writer's rule, format/digest.c, in Python): the table is used as
written; any change of length before the footer, a changed sample, text
after the footer, a malformed table or a missing covers makes check() say
why; compressed files alike, with a footer longer than the first tail."""

import gzip
import json
import zlib

import pytest

from traceprof.traces import aggtable


def trace(n_events=3000, pad=0):
    events = [{"ph": "X", "cat": "cuda_runtime", "name": "cudaMalloc", "pid": 1, "tid": 1,
               "ts": float(i), "dur": 0.5} for i in range(n_events)]
    head = ('{\n  "traceEvents": [\n' + ",\n".join(json.dumps(e) for e in events)).encode()
    agg = {"version": 1, "rank": 0, "span_ns": n_events * 1000, "names_cut": 0, "calls_cut": 0,
           "steps_cut": 0, "self_folded": 0,
           "rows": [["cudaMalloc", "cuda_runtime", n_events, 500 * n_events, 500 * n_events,
                     500, 500]], "steps": [],
           "covers": aggtable.covers(head, n_events)}
    foot = ('\n  ],\n  "traceprof": %s\n}\n' % json.dumps({"pad": "x" * pad,
                                                           "aggregate": agg})).encode()
    return head, foot


def put(tmp_path, name, data):
    p = tmp_path / name
    if name.endswith(".gz"):
        with gzip.open(str(p), "wb") as g:
            g.write(data)
    else:
        p.write_bytes(data)
    return str(p)


def flip(data, at):
    """data with the byte at `at` changed (same length)."""
    return data[:at] + (b"#" if data[at:at + 1] != b"#" else b"$") + data[at + 1:]


def stream_rule(data):
    """format/digest.c's streaming rule, sample by sample."""
    stride, crcs = 4096, []
    k = 0
    while k * stride + 64 <= len(data):
        crcs.append(zlib.crc32(data[k * stride:k * stride + 64]))
        k += 1
        if len(crcs) == 64:
            crcs, stride, k = crcs[::2], stride * 2, 32
    return stride, len(crcs)


@pytest.mark.parametrize("n", [0, 63, 64, 4160, 63 * 4096 + 63, 63 * 4096 + 64, 10 ** 6 + 3])
def test_covers_is_the_streaming_rule(n):
    data = bytes(range(256)) * (n // 256) + bytes(n % 256)
    c = aggtable.covers(data, 0)
    assert (c["stride"], c["samples"]) == stream_rule(data)


@pytest.mark.parametrize("name,pad", [("t.json", 0), ("t.json.gz", 0), ("t.json.gz", 200000),
                                      ("t.json", 200000)])
def test_the_writers_table_is_used(tmp_path, name, pad):
    head, foot = trace(pad=pad)
    a, ft, why = aggtable.check(put(tmp_path, name, head + foot))
    assert why is None and a["rows"][0][2] == 3000


@pytest.mark.parametrize("edit,why", [
    (lambda h, f: (h[:-40] + f), "footer begins at byte"),
    (lambda h, f: (b" " + h + f), "footer begins at byte"),
    (lambda h, f: (h + f + h + f), "footer begins at byte"),
    (lambda h, f: flip(h, 3 * aggtable.covers(h, 0)["stride"] + 5) + f, "bytes differ"),
    (lambda h, f: (h + f + b"{}"), "not the trace's end"),
    (lambda h, f: (h + f.replace(b'"covers"', b'"kovers"')), "does not say which events"),
    (lambda h, f: (h + f.replace(b'"cudaMalloc", "cuda_runtime", 3000',
                                 b'null, "cuda_runtime", 3000')), "malformed"),
    (lambda h, f: (h + f.replace(b'"cudaMalloc", "cuda_runtime", 3000',
                                 b'"cudaMalloc", "cuda_runtime", "3000"')), "malformed"),
])
@pytest.mark.parametrize("name", ["t.json", "t.json.gz"])
def test_an_edit_refuses_the_table(tmp_path, edit, why, name):
    head, foot = trace()
    a, ft, got = aggtable.check(put(tmp_path, name, edit(head, foot)))
    assert a is None and why in got, got


def test_between_samples_is_not_seen(tmp_path):
    """The documented limit: a same-length change between samples."""
    head, foot = trace()
    edited = flip(head, 3 * aggtable.covers(head, 0)["stride"] + 64 + 100)
    a, _, why = aggtable.check(put(tmp_path, "t.json", edited + foot))
    assert why is None and a is not None
