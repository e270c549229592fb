"""Issue 43 item 5: `export --parquet` reads files in the writer's
one-event-per-line layout with pyarrow's JSON reader (cli/export.py's
export_file_lines, traces/lines.py) and writes the same Parquet file, byte
for byte, as the per-event reading (export_file); files not in that layout,
or with an event only the per-event reading writes as it should, are left to
it (export_file_lines returns None and leaves no file)."""

import gzip
import json
import os
import shutil
import subprocess

import pytest

# pyarrow and numpy: the torch venv's (make check-python leaves this file out).
pytestmark = pytest.mark.torchvenv
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("numpy")

from traceprof.cli import export  # noqa: E402

BASE = 1700000000000000000


def schema():
    return pa.schema([("pid", pa.int64()), ("tid", pa.int64()), ("step", pa.int64()),
                      ("name", pa.string()), ("category", pa.string()),
                      ("start_ns", pa.int64()), ("duration_ns", pa.int64()),
                      ("kernel", pa.string()), ("grid", pa.string()), ("block", pa.string()),
                      ("bytes", pa.int64()), ("stream", pa.int64()),
                      ("correlation", pa.int64()), ("result", pa.int64())])


def events(n_steps=3, per_step=40):
    """Steps with API calls, kernels (grid, block, with and without
    args.kernel), copies, instants, counters, flows, metadata, and the
    awkward values the per-event reading handles: a missing ts, a negative
    and a missing dur, an "i" with a dur, names with escapes and non-ASCII,
    a step name with a trailing newline, events between steps."""
    ev = [{"ph": "M", "name": "process_name", "pid": 7, "tid": 0,
           "args": {"name": "rank 0: train"}},
          {"ph": "X", "cat": "cuda_runtime", "name": "before", "pid": 7, "tid": 7,
           "ts": 1.0, "dur": 0.5}]
    ts = 10.0
    for s in range(n_steps):
        ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % s,
                   "pid": 7, "tid": 7, "ts": ts, "dur": 100.0 * per_step})
        for i in range(per_step):
            t = ts + 100.0 * i + 0.125
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                       "pid": 7, "tid": 7, "ts": t, "dur": 4.333,
                       "args": {"cbid": 211, "correlation": s * 1000 + i, "result": 0}})
            k = {"ph": "X", "cat": "kernel", "name": "gemm<\u00e9\\\"%d>" % (i % 3),
                 "pid": 1000000000, "tid": 7, "ts": t + 5, "dur": 3.0,
                 "args": {"device": 0, "stream": 7, "correlation": s * 1000 + i,
                          "grid": [i + 1, 2, 1], "block": [128, 1, 1]}}
            if i % 4 == 0:
                k["args"]["kernel"] = "named_%d" % i
            if i % 5 == 0:
                k["args"]["grid"] = []
            ev.append(k)
            ev.append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "pid": 1000000000,
                       "tid": 8, "ts": t + 9, "dur": -1.0 if i % 7 == 0 else 2.5,
                       "args": {"bytes": 4096 * i, "stream": 8}})
            ev.append({"ph": "s", "cat": "ac2g", "name": "ac2g", "id": i, "pid": 7, "tid": 7,
                       "ts": t})
            ev.append({"ph": "i", "cat": "user_annotation", "name": "tick", "pid": 7,
                       "tid": 7, "ts": t + 1, "dur": 9.0, "s": "t"})
            ev.append({"ph": "C", "name": "mem", "pid": 7, "ts": t, "args": {"v": 1.5}})
        ev.append({"ph": "X", "cat": "user_annotation", "name": "no ts", "pid": 7, "tid": 7})
        ev.append({"ph": "X", "cat": "user_annotation", "name": "no dur", "pid": 7, "tid": 7,
                   "ts": ts + 3})
        ev.append({"ph": "I", "name": "ProfilerStep#99\n", "pid": 7, "tid": 7, "ts": ts + 2})
        ts += 100.0 * per_step + 50.0
    return ev


def write(path, evs, layout="lines", footer=None):
    head = '{\n  "schemaVersion": 1,\n  "baseTimeNanoseconds": %d,\n  "traceEvents": [\n' % BASE
    footer = footer or {"version": "0.1.0", "threads": [{"tid": 7}, {"tid": 8}]}
    if layout == "lines":
        body = ",\n".join(json.dumps(e, separators=(",", ":"), ensure_ascii=False)
                          for e in evs)
        text = head + body + '\n  ],\n  "traceprof": %s\n}\n' % json.dumps(footer)
    else:
        text = json.dumps({"schemaVersion": 1, "baseTimeNanoseconds": BASE,
                           "traceEvents": evs, "traceprof": footer}, indent=1)
    data = text.encode()
    if path.endswith(".gz"):
        data = gzip.compress(data)
    elif path.endswith(".zst"):
        data = subprocess.run(["zstd", "-q", "-c"], input=data, stdout=subprocess.PIPE,
                              check=True).stdout
    with open(path, "wb") as f:
        f.write(data)
    return path


def both(tmp_path, path):
    """(the per-event file's bytes, export_file_lines' count, its bytes or
    None when it left the file to the per-event reading)."""
    old, new = str(tmp_path / "old.parquet"), str(tmp_path / "new.parquet")
    n_old = export.export_file(pa, pq, path, old, schema(), BASE, False)
    n_new = export.export_file_lines(pa, pq, path, new, schema(), BASE)
    with open(old, "rb") as f:
        b_old = f.read()
    if n_new is None:
        assert not os.path.exists(new)
        return b_old, n_old, None
    assert n_new == n_old
    with open(new, "rb") as f:
        return b_old, n_old, f.read()


@pytest.mark.parametrize("suffix", [".json", ".json.gz", ".json.zst"])
def test_same_parquet(tmp_path, suffix):
    if suffix == ".json.zst" and not shutil.which("zstd"):
        pytest.skip("no zstd command")
    path = write(str(tmp_path / ("t" + suffix)), events())
    old, n, new = both(tmp_path, path)
    assert new is not None, "the one-event-per-line file was not read by pyarrow"
    assert n > 100
    assert new == old


def test_row_groups_as_written(tmp_path, monkeypatch):
    # Several blocks of text and several row groups: the same groups.
    monkeypatch.setattr(export, "ROWS", 1000)
    monkeypatch.setattr(export, "KEEP", 0)
    from traceprof.traces import lines
    monkeypatch.setattr(lines, "BLOCK", 1 << 16)
    path = write(str(tmp_path / "t.json"), events(n_steps=6, per_step=200))
    old, n, new = both(tmp_path, path)
    assert new is not None and n > 4000
    assert pq.ParquetFile(pa.BufferReader(new)).metadata.num_row_groups == -(-n // 1000)
    assert new == old


@pytest.mark.parametrize("case", ["indented", "null name", "string pid", "two on a line",
                                  "missing comma", "duplicate key", "bare array",
                                  "pid past int64"])
def test_left_to_the_per_event_reading(tmp_path, case):
    evs = events(n_steps=1, per_step=5)
    layout = "lines"
    path = str(tmp_path / "t.json")
    if case == "indented":
        layout = "indent"
    elif case == "null name":
        evs[3]["name"] = None
    elif case == "string pid":
        evs[3]["pid"] = "7"
    elif case == "pid past int64":
        evs[3]["pid"] = 1 << 64
    write(path, evs, layout)
    with open(path) as f:
        text = f.read()
    if case == "two on a line":
        text = text.replace("},\n", "},", 1)
    elif case == "missing comma":
        text = text.replace("},\n", "}\n", 1)
    elif case == "duplicate key":
        text = text.replace('"ph":"X",', '"ph":"X","ph":"X",', 1)
    elif case == "bare array":
        text = "[\n" + ",\n".join(json.dumps(e) for e in evs) + "\n]\n"
    with open(path, "w") as f:
        f.write(text)
    new = str(tmp_path / "new.parquet")
    assert export.export_file_lines(pa, pq, path, new, schema(), BASE) is None
    assert not os.path.exists(new)


@pytest.mark.parametrize("cut", [0.5, 0.999])
def test_corrupt_gzip_left_to_the_per_event_reading(tmp_path, cut):
    # A .json.gz cut short or with a corrupt byte: no traceback from the
    # columnar reading; the per-event reading says what is wrong.
    path = write(str(tmp_path / "t.json.gz"), events())
    with open(path, "rb") as f:
        data = bytearray(f.read())
    if cut < 0.9:
        data = data[:int(len(data) * cut)]
    else:
        data[len(data) // 2] ^= 0xFF
    with open(path, "wb") as f:
        f.write(bytes(data))
    new = str(tmp_path / "new.parquet")
    try:
        n = export.export_file_lines(pa, pq, path, new, schema(), BASE)
    except export.TraceError:
        n = None
    assert n is None
    assert not os.path.exists(new)
    with pytest.raises(export.TraceError):
        export.export_file(pa, pq, path, str(tmp_path / "old.parquet"), schema(), BASE, False)


@pytest.mark.parametrize("escaped", [False, True])
def test_first_reading_parses_the_steps_lines_only(tmp_path, monkeypatch, escaped):
    # A file past PICK_FROM: the first reading (the steps) parses only the
    # lines that hold "ProfilerStep#", over many blocks; a block where an
    # escape could spell it (\u0050rofilerStep#2) is parsed whole.  The
    # same Parquet file as the per-event reading.
    monkeypatch.setattr(export, "PICK_FROM", 0)
    monkeypatch.setattr(export, "KEEP", 0)
    from traceprof.traces import lines
    monkeypatch.setattr(lines, "BLOCK", 1 << 14)
    path = write(str(tmp_path / "t.json"), events(n_steps=6, per_step=60))
    if escaped:
        with open(path) as f:
            text = f.read()
        assert '"name":"ProfilerStep#2"' in text
        with open(path, "w") as f:
            f.write(text.replace('"name":"ProfilerStep#2"', '"name":"\\u0050rofilerStep#2"'))
    seen = []
    real = lines._parse
    monkeypatch.setattr(lines, "_parse", lambda *a: seen.append(len(a[2])) or real(*a))
    steps, kept = export._line_steps(pa, __import__("pyarrow.compute").compute, path,
                                     export._in_schema(pa))
    assert [s[2] for s in steps] == [0, 1, 2, 3, 4, 5]
    assert sum(seen) < (os.path.getsize(path) if escaped else os.path.getsize(path) // 20)
    old, n, new = both(tmp_path, path)
    assert new is not None and n > 1000
    assert new == old
