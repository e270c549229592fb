"""summary's streaming reading (traces/rowacc.py, issue 35 item 2): the
rows, self times and steps of a file read as a stream, sorted in bounded
runs spilled to temporary files, equal the in-memory reading's
(test/lib/sumref.py, the reading before), whatever the order of the events
in the file: start order, the library's end order (a parent after its
children), reversed, shuffled, with exact ties; plain, .gz and .zst."""

import gzip
import json
import os
import random
import shutil
import subprocess

import pytest

from conftest import write_trace
from traceprof.cli.summary import cmd_summary
from traceprof.traces import rowacc


def X(name, cat, ts, dur, pid=1, tid=1):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}


def nested_events(seed, n_steps=40):
    """Steps holding markers holding API calls on two threads, kernels on
    another track, zero-length and identical twins, instants."""
    rnd = random.Random(seed)
    ev = []
    t = 0.0
    for s in range(n_steps):
        step_dur = 100.0 + rnd.randrange(20)
        ev.append(X("ProfilerStep#%d" % s, "user_annotation", t, step_dur))
        for tid in (1, 2):
            u = t + 1
            ev.append(X("forward", "user_annotation", u, 60.0, tid=tid))
            ev.append(X("twin", "user_annotation", u, 60.0, tid=tid))  # identical but the name
            for k in range(5):
                c = u + 2 + 10 * k
                ev.append(X("cudaLaunchKernel", "cuda_runtime", c, 3.0 + rnd.random(), tid=tid))
                ev.append(X("cudaPeek", "cuda_runtime", c, 0.0, tid=tid))  # zero length
                ev.append(X("gemm", "kernel", c + 4, 5.5, pid=9, tid=7))
            ev.append({"ph": "i", "cat": "user_annotation", "name": "tick", "pid": 1,
                       "tid": tid, "ts": u + 3})
        # Overlapping, not nested: clipped at the parent's end.
        ev.append(X("late", "cuda_runtime", t + step_dur - 2, 5.0))
        t += step_dur + 1
    return ev


def orders(ev):
    rnd = random.Random(7)
    shuffled = list(ev)
    rnd.shuffle(shuffled)
    by_end = sorted(ev, key=lambda e: (e.get("ts", 0) + e.get("dur", 0)))
    return {"start": ev, "end": by_end, "reversed": list(reversed(ev)), "shuffled": shuffled}


def summary_csv(capsys, path, by):
    assert cmd_summary([path, "--by", by, "--csv", "--top", "0", "--from-events"]) == 0
    return capsys.readouterr().out


def reference_csv(capsys, path, by):
    import sumref  # test/lib (pytest.ini's pythonpath)
    assert sumref.table(path, by) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("order", ["start", "end", "reversed", "shuffled"])
@pytest.mark.parametrize("run", [0, 7, 100])
def test_same_as_in_memory(capsys, monkeypatch, tmp_path, top, order, run):
    # run 7 and 100: the events sorted in runs of that size, spilled and
    # merged; 0: the default size (one run in memory).
    if run:
        monkeypatch.setattr(rowacc, "RUN", run)
    path = write_trace(tmp_path / "t.json", orders(nested_events(len(order)))[order])
    for by in ("all", "api", "kernel", "marker", "step"):
        assert summary_csv(capsys, path, by) == reference_csv(capsys, path, by), (order, run, by)


def test_spills(monkeypatch, tmp_path):
    """A run that fills goes to a temporary file (and the files are closed
    once read)."""
    monkeypatch.setattr(rowacc, "RUN", 5)
    st = rowacc.SelfTimes()
    for i in range(23):
        st.add(("1", "1"), float(i), 1.0, i)
    assert len(st.spilled) == 4 and len(st.buf) == 3
    files = list(st.spilled)
    assert sorted(st.results()) == [(i, 1.0) for i in range(23)]
    assert all(f.closed for f in files) and st.spilled == []


def test_nesting_whatever_the_order():
    """A parent written after its children (the library's order) still
    loses their time; siblings do not nest."""
    for order in ([0, 1, 2], [2, 1, 0], [1, 2, 0]):
        ev = [(0.0, 10.0, 0), (1.0, 2.0, 1), (5.0, 3.0, 2)]  # parent, two children
        st = rowacc.SelfTimes(run=2)
        for i in order:
            ts, dur, kid = ev[i]
            st.add(("p", "t"), ts, dur, kid)
        assert dict(st.results()) == {0: 5.0, 1: 2.0, 2: 3.0}


@pytest.mark.parametrize("comp", [".gz", ".zst"])
def test_compressed(capsys, tmp_path, top, comp):
    plain = write_trace(tmp_path / "t.json", orders(nested_events(3))["shuffled"])
    path = str(tmp_path / ("t.json" + comp))
    if comp == ".gz":
        with open(plain, "rb") as f, gzip.open(path, "wb") as g:
            g.write(f.read())
    else:
        if shutil.which("zstd") is None:
            pytest.skip("no zstd")
        subprocess.run(["zstd", "-q", "-o", path, plain], check=True)
    for by in ("all", "step"):
        assert summary_csv(capsys, path, by) == summary_csv(capsys, plain, by)


def test_bare_array_torch_style(capsys, tmp_path, top):
    """A bare event array (no top-level object) reads the same way."""
    path = tmp_path / "t.json"
    path.write_text(json.dumps(orders(nested_events(5))["end"]))
    assert summary_csv(capsys, str(path), "all") == reference_csv(capsys, str(path), "all")


def test_no_temporary_file(capsys, monkeypatch, tmp_path):
    """Where no temporary file can be written, one line says so and the
    events are sorted in memory: the same table."""
    path = write_trace(tmp_path / "t.json", orders(nested_events(2))["shuffled"])
    want = summary_csv(capsys, path, "all")
    monkeypatch.setattr(rowacc, "RUN", 50)
    calls = []

    def full(*a, **k):
        calls.append(1)
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(rowacc.tempfile, "TemporaryFile", full)
    assert cmd_summary([path, "--csv", "--top", "0", "--from-events"]) == 0
    out = capsys.readouterr()
    assert out.out == want
    assert out.err.count("traceprof: cannot write a temporary file") == 1, out.err
    assert "No space left on device" in out.err and len(calls) == 1
