"""`python -m traceprof ...`, and `python python/traceprof ...` from the
source tree (a folder with __main__.py runs as a script): the command."""

import os
import sys

if not __package__:
    # Run as a folder: its parent (python/) holds the package, and the
    # folder itself, which Python put first on the path, must not make the
    # package's modules importable by their bare names.
    _here = os.path.dirname(os.path.realpath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.realpath(p or os.curdir) != _here]
    sys.path.insert(0, os.path.dirname(_here))
    # The source tree stays clean: no __pycache__.
    sys.dont_write_bytecode = True

from traceprof.cli.main import entry  # noqa: E402  (after the path is set)

entry()
