"""pyarrow, imported with pandas refused while pyarrow first looks for it.

pyarrow imports pandas the first time it converts a Python value or a
numpy array (pa.array, pa.scalar, pc.equal(column, "X"), to_numpy), only to
ask whether the value is a pandas object: 0.17 CPU s, 8% of a 100 MB file's
export (bench/RESULTS.md, the readers' row).  export and summary make no
pandas objects.  pyarrow remembers the failed import for the process, so
the refusal is needed once, while pyarrow tries it, and pandas is allowed
again after (a program that imports this package can still use it)."""

import importlib
import sys


class _NoPandas:
    """A meta path finder that refuses to import pandas."""

    def find_spec(self, name, path=None, target=None):
        if name == "pandas":
            raise ImportError("traceprof's readers make no pandas objects")
        return None


def load(*modules):
    """pyarrow, after importing each of modules (e.g. "pyarrow.parquet"),
    with its pandas probe answered "no" unless pandas is already loaded.
    ImportError when pyarrow (or one of modules) is missing."""
    block = "pandas" not in sys.modules
    finder = _NoPandas()
    if block:
        sys.meta_path.insert(0, finder)
    try:
        import pyarrow
        for m in modules:
            importlib.import_module(m)
        pyarrow.array([0])  # the first conversion: the probe runs now
    finally:
        if block:
            sys.meta_path.remove(finder)
    return pyarrow
