"""pytest set-up for the command's unit tests: the package is imported
from the source tree's python/ (no install; pytest.ini's `pythonpath`), and
the tests find the repository and its test data through the fixtures
below."""

import os

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def top():
    """The repository's root."""
    return TOP


def write_trace(path, events, **meta):
    """A small JSON trace: meta's members, then traceEvents."""
    import json
    doc = dict(meta)
    doc["traceEvents"] = events
    with open(path, "w") as f:
        json.dump(doc, f)
    return str(path)
