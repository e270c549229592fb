"""Cut windows (issue 44, traces/cut.py): summary, summary --by rank,
merge and export read a file that `traceprof recover` finished from a dead
process's temporary file, and each says so in one `traceprof:` line naming
the file and the time after which its events are missing; a whole window
gets no such line."""

import gzip
import json
import shutil

import pytest

from traceprof.cli.export import cmd_export
from traceprof.cli.merge import cmd_merge
from traceprof.cli.summary import cmd_summary

CUT = {"reason": "the process (pid 7) ended before the window did",
       "last_write": "2026-11-28T22:43:10.123+00:00", "events_missing": None}
NOTE = ": a cut window (its process died; events after 22:43:10 UTC are missing)"


def X(name, cat, ts, dur):
    return {"ph": "X", "cat": cat, "name": name, "pid": 7, "tid": 7, "ts": ts, "dur": dur}


def trace(path, rank, cut, gz=False, head=True):
    """head: the cut file's head says it is cut too (recover's; an older
    recover's file has only the footer)."""
    footer = {"version": "test", "part": 1, "parts": 1, "steps": [1, 2], "events_written": 3}
    if cut:
        footer["cut"] = CUT
    # As the writer and recover lay it out: readers find the footer by
    # its "\n  ],\n  \"traceprof\": {" (traces/aggtable.py).
    events = [X("ProfilerStep#1", "user_annotation", 0, 100),
              X("ProfilerStep#2", "user_annotation", 100, 50),
              X("work", "user_annotation", 10, 80)]
    cut_head = ('  "traceprofCut": {"last_write": "%s"},\n' % CUT["last_write"]) if cut and head else ""
    data = ('{\n  "distributedInfo": {"rank": %d},\n  "baseTimeNanoseconds": 1000,\n%s'
            '  "traceEvents": [\n%s\n  ],\n  "traceprof": %s\n}\n'
            % (rank, cut_head, ",\n".join(json.dumps(e) for e in events), json.dumps(footer))).encode()
    if gz:
        data = gzip.compress(data)
    with open(path, "wb") as f:
        f.write(data)
    return str(path)


@pytest.fixture
def job(tmp_path):
    d = tmp_path / "job"
    d.mkdir()
    return (trace(d / "rank0.step2.trace.json", 0, False),
            trace(d / "rank1.step2.trace.json", 1, True), str(d))


def notes(err):
    return [line for line in err.splitlines() if "cut window" in line]


@pytest.mark.parametrize("gz", [False, True])
def test_summary(capsys, tmp_path, gz):
    whole = trace(tmp_path / ("w.json" + (".gz" if gz else "")), 0, False, gz)
    cut = trace(tmp_path / ("c.json" + (".gz" if gz else "")), 0, True, gz)
    assert cmd_summary([whole]) in (0, None)
    out = capsys.readouterr()
    assert notes(out.err) == [] and "work" in out.out
    assert cmd_summary([cut]) in (0, None)
    out = capsys.readouterr()
    assert notes(out.err) == ["traceprof: " + cut + NOTE]
    assert "work" in out.out  # read as any other


def test_summary_by_rank(capsys, job):
    assert cmd_summary(["--by", "rank", job[2]]) in (0, None)
    out = capsys.readouterr()
    assert notes(out.err) == ["traceprof: " + job[1] + NOTE]


def test_merge(capsys, job, tmp_path):
    out_path = str(tmp_path / "merged.json")
    assert cmd_merge(["-o", out_path, job[0], job[1]]) in (0, None)
    err = capsys.readouterr().err
    assert notes(err) == ["traceprof: " + job[1] + NOTE]
    names = [e["name"] for e in json.load(open(out_path))["traceEvents"] if e.get("ph") == "X"]
    assert names.count("work") == 2


@pytest.mark.torchvenv
def test_export(capsys, job, tmp_path):
    pytest.importorskip("pyarrow")
    d = str(tmp_path / "pq")
    assert cmd_export(["--parquet", d, job[2]]) in (0, None)
    err = capsys.readouterr().err
    assert notes(err) == ["traceprof: " + job[1] + NOTE]
    shutil.rmtree(d)


def test_footer_only(capsys, tmp_path):
    """A plain cut file whose head does not say so is read from its footer."""
    cut = trace(tmp_path / "c.json", 0, True, head=False)
    assert cmd_summary([cut]) in (0, None)
    assert notes(capsys.readouterr().err) == ["traceprof: " + cut + NOTE]


@pytest.mark.parametrize("codec", ["gz", "zst"])
def test_library_finished_compressed(capsys, tmp_path, codec):
    """A compressed cut file the next run's library finished
    (collector/cut_codec.c) has its head as written, without traceprofCut:
    its frames (gzip members) as the writer ends them at each flush, then
    one with the footer; the footer's cut is read from the file's last
    frames, not by decompressing it whole.  A whole compressed file of the
    same frames, its footer without cut, gets no line."""
    if codec == "zst" and not shutil.which("zstd"):
        pytest.skip("no zstd command")
    import subprocess
    from traceprof.traces.cut import cut_of

    def frame(b):
        if codec == "gz":
            return gzip.compress(b)
        return subprocess.run(["zstd", "-q", "-c", "--check"], input=b, capture_output=True,
                              check=True).stdout
    for cut in (True, False):
        plain = open(trace(tmp_path / "t.json", 3, cut, head=False), "rb").read()
        at = plain.index(b"\n  ],")
        # Frames: the head and events in pieces, the end in its own, and
        # enough events before it that the last frames are a small tail.
        body = [plain[:200], plain[200:at]]
        path = str(tmp_path / ("c%d.json.%s" % (cut, codec)))
        with open(path, "wb") as f:
            for b in body:
                f.write(frame(b))
            f.write(frame(b" " * 40000))  # past the tail the reader looks at
            f.write(frame(plain[at:]))
        got = cut_of(path)
        assert (got == CUT) if cut else got is None
        assert cmd_summary([path]) in (0, None)
        assert len(notes(capsys.readouterr().err)) == (1 if cut else 0)
    from traceprof.traces.cut import library_cut
    assert library_cut(path) is None  # recovered_by: not a library's
