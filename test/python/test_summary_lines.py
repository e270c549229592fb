"""Issue 43 item 5: `summary --from-events` parses a file in the writer's
one-event-per-line layout with pyarrow's JSON reader (traces/lines.py) and
computes its table from the columns (traces/rowcols.py): the output must be
the per-event reading's (`--json-reader python`), byte for byte, for every
--by; files not in that layout, or with a value only the per-event reading
reads as it should, are left to it, with the same output."""

import contextlib
import io
import json
import random

import pytest

# pyarrow and numpy: the torch venv's (make check-python leaves this file out).
pytestmark = pytest.mark.torchvenv
pa = pytest.importorskip("pyarrow")
pytest.importorskip("numpy")

from traceprof.cli import summary  # noqa: E402
from traceprof.traces import lines, rowacc, rowcols  # noqa: E402

BYS = ["all", "api", "kernel", "marker", "step"]


def events(n_steps=3, per_step=40, seed=1):
    """Steps on two threads, API calls nested in markers, kernels, copies,
    instants, flows, counters, metadata, and what the per-event reading
    handles with care: no ts, no dur, a negative dur, an integer ts, zero
    lengths at one time, a name with escapes, a marker with categories,
    a start-up step (args.phase), identical twins, events out of order."""
    rnd = random.Random(seed)
    ev = [{"ph": "M", "name": "process_name", "pid": 7, "tid": 0,
           "args": {"name": "rank 0: train"}},
          {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#0", "pid": 7, "tid": 7,
           "ts": 1, "dur": 5, "args": {"phase": "start-up"}}]
    ts = 10.0
    for s in range(1, n_steps + 1):
        for tid in (7, 9):
            ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % s,
                       "pid": 7, "tid": tid, "ts": ts, "dur": 100.0 * per_step + tid})
        ev.append({"ph": "X", "cat": "user_annotation,train", "name": "fwd \"x\"\u00e9",
                   "pid": 7, "tid": 7, "ts": ts + 0.5, "dur": 50.0 * per_step})
        for i in range(per_step):
            t = ts + 100.0 * i + 0.125
            d = rnd.choice([4.333, 0.001, 7.0, 0.0])
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                       "pid": 7, "tid": 7 if i % 3 else 9, "ts": t, "dur": d,
                       "args": {"cbid": 211, "correlation": s * 1000 + i}})
            ev.append({"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernel",
                       "pid": 7, "tid": 7 if i % 3 else 9, "ts": t + d / 3, "dur": d / 2})
            ev.append({"ph": "X", "cat": "kernel", "name": "gemm_%d" % (i % 3),
                       "pid": 1000000000, "tid": 7, "ts": t + 5, "dur": 3.0 + i % 5})
            ev.append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD",
                       "pid": 1000000000, "tid": 8, "ts": t + 9,
                       "dur": -1.0 if i % 7 == 0 else 2.5})
            ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::zero", "pid": 7, "tid": 7,
                       "ts": t + 1, "dur": 0.0})
            ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::zero", "pid": 7, "tid": 7,
                       "ts": t + 1, "dur": 0.0})
            ev.append({"ph": "s", "cat": "ac2g", "name": "ac2g", "id": i, "pid": 7, "tid": 7,
                       "ts": t})
            ev.append({"ph": "i", "cat": "user_annotation", "name": "tick", "pid": 7,
                       "tid": 7, "ts": t + 1, "s": "t"})
            ev.append({"ph": "C", "name": "mem", "pid": 7, "ts": t, "args": {"v": 1.5}})
        ev.append({"ph": "X", "cat": "user_annotation", "name": "no ts", "pid": 7, "tid": 7})
        ev.append({"ph": "X", "cat": "user_annotation", "name": "no dur", "pid": 7, "tid": 7,
                   "ts": ts + 3})
        ts += 100.0 * per_step + 50.0
    # The library writes a call when it ends: parents after children.
    ev[2:] = sorted(ev[2:], key=lambda e: e.get("ts", 0) + e.get("dur", 0))
    return ev


def write(path, evs, layout="lines", footer=None):
    footer = footer or {"version": "0.1.0", "steps": [1, 3]}
    if layout == "lines":
        text = ('{\n  "schemaVersion": 1,\n  "traceEvents": [\n'
                + ",\n".join(json.dumps(e, separators=(",", ":"), ensure_ascii=False)
                             for e in evs)
                + '\n  ],\n  "traceprof": %s\n}\n' % json.dumps(footer))
    else:
        text = json.dumps({"schemaVersion": 1, "traceEvents": evs, "traceprof": footer},
                          indent=2)
    with open(path, "w") as f:
        f.write(text)
    return path


def run(path, by, reader):
    out, errs = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(errs):
        try:
            rc = summary.cmd_summary([path, "--from-events", "--by", by, "--top", "0",
                                      "--csv", "--json-reader", reader])
        except SystemExit as e:
            rc = e.code
    return rc, out.getvalue(), errs.getvalue()


def columns_taken(path, by, reader="arrow"):
    a = type("A", (), {"json_reader": reader, "by": by, "file": path})()
    got = summary._from_columns(a, {})
    if got is not None and got[0].self_times is not None:
        got[0].close()
    return got is not None


@pytest.mark.parametrize("by", BYS)
def test_same_table(tmp_path, by):
    path = write(str(tmp_path / "t.json"), events())
    assert columns_taken(path, by), "the one-event-per-line file was not read by columns"
    new, old = run(path, by, "arrow"), run(path, by, "python")
    assert old[0] == 0 and old[1].count("\n") > 2, old
    assert new == old


@pytest.mark.parametrize("by", ["all", "api"])
def test_spilled_runs_and_small_blocks(tmp_path, monkeypatch, by):
    # Many blocks of text, and the sort records spilled to SelfTimes' runs
    # in temporary files (a file larger than COL_RUN events): the same.
    monkeypatch.setattr(lines, "BLOCK", 1 << 14)
    monkeypatch.setattr(rowcols, "COL_RUN", 3000)
    monkeypatch.setattr(rowacc, "RUN", 1000)
    path = write(str(tmp_path / "t.json"), events(n_steps=8, per_step=200, seed=3))
    new, old = run(path, by, "arrow"), run(path, by, "python")
    assert old[0] == 0
    assert new == old


@pytest.mark.parametrize("case", ["indented", "null name", "string pid", "float pid",
                                  "string ts", "NaN ts", "missing comma", "duplicate key",
                                  "args not an object", "phase a number", "bool dur"])
def test_left_to_the_per_event_reading(tmp_path, case):
    evs = events(n_steps=1, per_step=6)
    k = next(i for i, e in enumerate(evs) if e.get("name") == "ProfilerStep#1")
    layout = "lines"
    if case == "indented":
        layout = "indent"
    elif case == "null name":
        evs[5]["name"] = None
    elif case == "string pid":
        evs[5]["pid"] = "7"
    elif case == "float pid":
        evs[5]["pid"] = 7.0
    elif case == "string ts":
        evs[5]["ts"] = "12"
    elif case == "bool dur":
        evs[5]["dur"] = True
    elif case == "args not an object":
        evs[k]["args"] = 5
    elif case == "phase a number":
        evs[k]["args"] = {"phase": 1}
    path = write(str(tmp_path / "t.json"), evs, layout)
    with open(path) as f:
        text = f.read()
    if case == "missing comma":
        text = text.replace("},\n", "}\n", 1)
    elif case == "duplicate key":
        text = text.replace('"ph":"X",', '"ph":"X","ph":"X",', 1)
    elif case == "NaN ts":
        text = text.replace('"ts":', '"ts":NaN,"x":', 1)
    with open(path, "w") as f:
        f.write(text)
    for by in ("all", "step"):
        # pyarrow reads NaN as Python does (a float, then skipped): either
        # reading may take it.
        if case != "NaN ts" and (case not in ("args not an object", "phase a number")
                                 or by == "step"):
            assert not columns_taken(path, by), (case, by)
        assert run(path, by, "arrow") == run(path, by, "python"), (case, by)


@pytest.mark.parametrize("by", ["all", "kernel", "step"])
def test_same_floats(tmp_path, monkeypatch, by):
    # The rows to the last bit, not only as printed: durations and starts
    # of random doubles, whose sums depend on the order of the additions
    # (each name's total and self time are added in file order, as the
    # per-event reading does), over many blocks.
    monkeypatch.setattr(lines, "BLOCK", 1 << 13)
    rnd = random.Random(7)
    evs = events(n_steps=2, per_step=30, seed=5)
    for e in evs:
        if "dur" in e and e["dur"] > 0:
            e["dur"] = e["dur"] * (1 + rnd.random()) + rnd.random() / 3
        if "ts" in e:
            e["ts"] += rnd.random() / 7
    path = write(str(tmp_path / "t.json"), evs)
    from traceprof.traces.reader import TraceReader
    old = rowacc.EventRows(by, want_self=by != "step")
    for kind, batch, _ in TraceReader(path).items():
        if kind == "events":
            old.add_batch(batch)
    old_rows = old.finish()
    new = rowacc.EventRows(by, want_self=False)
    if by != "step":
        new.self_times = rowcols.ColSelf()
    for t in lines.line_tables(path, pa, rowcols.schema(by)):
        rowcols.add_table(new, t)
    new_rows = rowcols.finish(new)
    assert (old_rows or old.steps) and new_rows == old_rows
    assert (new.lo, new.hi, new.complete, new.keyed, new.steps) == \
        (old.lo, old.hi, old.complete, old.keyed, old.steps)


def test_auto_from_a_size(tmp_path, monkeypatch):
    # --json-reader auto: pyarrow for a file of COLUMNS_FROM bytes or more
    # (its import costs what Python's reading of about 30 MB does), Python
    # below; a compressed file counts four times its size.
    path = write(str(tmp_path / "t.json"), events(n_steps=1, per_step=5))
    size = __import__("os").path.getsize(path)
    monkeypatch.setattr(summary, "COLUMNS_FROM", size + 1)
    assert not columns_taken(path, "all", "auto")
    assert columns_taken(path, "all", "arrow")
    monkeypatch.setattr(summary, "COLUMNS_FROM", size)
    assert columns_taken(path, "all", "auto")
    assert not columns_taken(path, "all", "python")
