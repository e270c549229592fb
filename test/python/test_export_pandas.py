"""Issue 43 item 2: `export --parquet` and summary's columnar reading do
not import pandas (pyarrow imports it on its first conversion of a Python
value, 0.17 CPU s, to ask whether the value is a pandas object;
traces/arrow.py refuses that one import), and pandas stays importable
after."""
import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.torchvenv

pytest.importorskip("pyarrow")
pytest.importorskip("numpy")
pytest.importorskip("pandas")  # without it the test cannot fail

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python")

CODE = """
import sys
sys.path.insert(0, sys.argv[1])
from traceprof.cli import export, summary
if sys.argv[3] == "summary":
    rc = summary.cmd_summary(["--json-reader", "arrow", "--by", "api", sys.argv[2]])
else:
    rc = export.cmd_export(["--parquet", sys.argv[3], sys.argv[2]])
print(rc, "pandas" in sys.modules)
import pandas
print("importable", bool(pandas.__version__))
"""


def _run(tmp_path, what):
    ev = [{"ph": "X", "cat": "cuda_runtime", "name": "cudaMalloc", "pid": 1, "tid": 2,
           "ts": 10.5 + i, "dur": 0.25, "args": {"bytes": 64}} for i in range(50)]
    ev.append({"ph": "X", "cat": "kernel", "name": "k", "pid": 1, "tid": 3, "ts": 5.0,
               "dur": 1.0, "args": {"grid": [1, 2, 3], "block": [32, 1, 1]}})
    path = tmp_path / "rank0.trace.json"
    path.write_text('{"traceEvents": [\n' + ",\n".join(json.dumps(e) for e in ev)
                    + '\n  ]\n}\n')
    out = subprocess.run([sys.executable, "-c", CODE, SCRIPTS, str(path), what],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[-2] == "0 False", out.stdout   # written, and pandas not imported
    assert lines[-1] == "importable True", out.stdout
    return out.stdout


def test_export_without_pandas(tmp_path):
    _run(tmp_path, str(tmp_path / "ds"))


def test_summary_columns_without_pandas(tmp_path):
    out = _run(tmp_path, "summary")
    assert "cudaMalloc" in out, out   # the table was printed
