"""traces/lines.py's _end: the array's closing line found from the first
line break followed by white space or "]" (bytes.find) must be the one
the regex finds scanning every line break."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "scripts"))
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402

from traceprof.traces import lines  # noqa: E402


def span(m):
    return None if m is None else m.span()


@settings(max_examples=400, deadline=None, database=None)
@given(st.lists(st.sampled_from([b"\n", b" ", b"\t", b"]", b"{", b"}", b",", b"a", b"\n  ]",
                                 b'{"ph":"X"},\n', b"\n{"]), max_size=40))
def test_end_is_the_regex(parts):
    buf = b"".join(parts)
    assert span(lines._end(buf)) == span(lines._END.search(buf))


def test_end_of_the_writers_layout():
    body = b'{"ph":"X","ts":1},\n' * 1000 + b'{"ph":"X","ts":2}\n  ],\n  "traceprof": {}\n}\n'
    at = body.index(b"\n  ]")
    assert span(lines._end(body)) == (at, at + 4)
    assert lines._end(body[:at]) is None
