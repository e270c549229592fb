"""pytest set-up for the command's unit tests: the package is imported
from the source tree's python/ (no install), and the tests find the
repository and its test data through the fixtures below."""

import os
import sys

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(TOP, "python")
if SCRIPTS not in sys.path:
    sys.path.insert(0, SCRIPTS)


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
