"""summary's tables (cli/summary.py, cli/table.py, cli/ranks.py) on
hand-made traces: calls, total and self times, the window's percent, the
groups of --by, steps and ranks."""

import csv
import io

import pytest

from conftest import write_trace
from traceprof.cli.summary import cmd_summary
from traceprof.cli.table import fmt_time, print_table


def X(name, cat, ts, dur, pid=1, tid=1):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}


EVENTS = [
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}},
    X("ProfilerStep#1", "user_annotation", 0, 100),
    X("ProfilerStep#2", "user_annotation", 100, 50),
    X("work", "user_annotation", 0, 100),
    X("cudaMalloc", "cuda_runtime", 10, 20),
    X("cudaMalloc", "cuda_runtime", 50, 10),
    X("load", "user_annotation,io", 110, 40),         # a marker with categories
    X("k", "kernel", 20, 30, pid=2, tid=7),
    {"ph": "i", "cat": "user_annotation", "name": "tick", "pid": 1, "tid": 1, "ts": 5},
]


def run(capsys, *argv):
    rc = cmd_summary(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def rows(text):
    return {r["name"]: r for r in csv.DictReader(io.StringIO(text))}


@pytest.fixture
def trace(tmp_path):
    return write_trace(tmp_path / "t.json", EVENTS)


def test_all(capsys, trace):
    rc, out, _ = run(capsys, trace, "--csv")
    assert rc == 0
    r = rows(out)
    assert set(r) == {"work", "cudaMalloc", "load", "k"}     # steps apart, instants not events
    assert (r["work"]["calls"], r["work"]["total_us"], r["work"]["self_us"]) == \
        ("1", "100.000", "70.000")                           # 100 minus its two calls
    assert (r["cudaMalloc"]["calls"], r["cudaMalloc"]["total_us"], r["cudaMalloc"]["min_us"],
            r["cudaMalloc"]["max_us"], r["cudaMalloc"]["avg_us"]) == \
        ("2", "30.000", "10.000", "20.000", "15.000")
    assert r["k"]["self_us"] == "30.000"                     # another track: not nested
    assert r["work"]["percent_window"] == "66.67"            # window 0 .. 150
    # Sorted by total time.
    assert [x["name"] for x in csv.DictReader(io.StringIO(out))] == ["work", "load", "cudaMalloc", "k"]


@pytest.mark.parametrize("by, names", [
    ("api", {"cudaMalloc"}),
    ("kernel", {"k"}),
    ("marker", {"work", "load"}),
])
def test_by(capsys, trace, by, names):
    rc, out, _ = run(capsys, trace, "--by", by, "--csv")
    assert rc == 0 and set(rows(out)) == names


def test_top_and_text_table(capsys, trace):
    rc, out, _ = run(capsys, trace, "--top", "1")
    assert rc == 0
    lines = out.splitlines()
    assert lines[1].split()[:2] == ["Name", "Calls"]
    assert lines[3].split() == ["work", "1", "100.000us", "70.000us", "100.000us", "100.000us",
                                "100.000us", "66.67%"]
    assert "all events: 4 names, 5 calls, top 1 shown; window 150.000us" in out


def test_steps(capsys, trace):
    rc, out, _ = run(capsys, trace, "--by", "step", "--csv")
    assert rc == 0
    got = {r[0]: r[1] for r in csv.reader(io.StringIO(out))}
    assert (got["1"], got["2"], got["mean"], got["min"], got["max"]) == \
        ("100.000", "50.000", "75.000", "50.000", "100.000")
    assert got["stddev"] == "35.355"


def phased(name, ts, dur, phase):
    e = X(name, "user_annotation", ts, dur)
    e["args"] = {"phase": phase}
    return e


def test_steps_leave_out_startup_and_teardown(capsys, tmp_path):
    # Issue 42 item 3: args.phase marks the start-up and teardown steps;
    # the statistics are the iterations', and the line names the others.
    p = write_trace(tmp_path / "p.json", [
        phased("ProfilerStep#0", 0, 5000, "start-up"),
        X("ProfilerStep#1", "user_annotation", 5000, 100),
        X("ProfilerStep#2", "user_annotation", 5100, 50),
        phased("ProfilerStep#3", 5150, 900, "teardown")])
    rc, out, _ = run(capsys, p, "--by", "step")
    assert rc == 0
    last = out.strip().splitlines()[-1]
    assert last.startswith("steps: 2; mean 75.000us,"), last
    assert last.endswith("; left out: ProfilerStep#0 (start-up, 5.000ms), "
                         "ProfilerStep#3 (teardown, 900.000us)"), last
    rc, out, err = run(capsys, p, "--by", "step", "--csv")
    got = {r[0]: r[1] for r in csv.reader(io.StringIO(out))}
    assert "0" not in got and "3" not in got and got["mean"] == "75.000"
    assert "leave out ProfilerStep#0 (start-up" in err


def test_steps_only_the_whole_run(capsys, tmp_path):
    p = write_trace(tmp_path / "w.json", [phased("ProfilerStep#0", 0, 700, "whole run")])
    rc, out, _ = run(capsys, p, "--by", "step")
    assert rc == 0
    assert out.strip().splitlines()[-1].endswith(
        "; only the whole run: no whole iteration between two step calls")


def test_steps_phases_from_the_footer(capsys, tmp_path):
    # A file whose events carry no args (a .pftrace's, as summary reads
    # them) takes the phases from its table's step_phases.
    p = write_trace(tmp_path / "f.json", [
        X("ProfilerStep#0", "user_annotation", 0, 5000, pid=9),
        X("ProfilerStep#1", "user_annotation", 5000, 100, pid=9)],
        traceprof={"aggregate": {"step_phases": [[0, 9, "start-up"]]}})
    rc, out, _ = run(capsys, p, "--by", "step", "--from-events")
    assert rc == 0
    assert out.strip().splitlines()[-1].startswith("steps: 1; mean 100.000us"), out


def test_nothing_to_show(capsys, tmp_path):
    p = write_trace(tmp_path / "e.json", [X("x", "user_annotation", 0, 1)])
    rc, _, err = run(capsys, p, "--by", "kernel")
    assert rc == 1 and "nothing to show" in err


def test_ranks(capsys, tmp_path):
    d = tmp_path / "job"
    d.mkdir()
    for rank, durs in ((0, (100, 110)), (1, (100, 300))):
        evs = [X("ProfilerStep#%d" % (i + 1), "user_annotation", 1000 * i, du, pid=10 + rank)
               for i, du in enumerate(durs)]
        write_trace(d / ("rank%d.json" % rank), evs,
                    distributedInfo={"rank": rank, "world_size": 2})
    rc, out, err = run(capsys, str(d), "--by", "rank", "--csv")
    assert rc == 0
    r = {x["rank"]: x for x in csv.DictReader(io.StringIO(out))}
    assert (r["0"]["steps"], r["0"]["mean_us"], r["0"]["max_us"]) == ("2", "105.000", "110.000")
    assert (r["1"]["mean_us"], r["1"]["slowest_step"]) == ("200.000", "2")
    # Job median step 105 (100, 100, 110, 300): rank 1's slowest is 300/105.
    assert r["1"]["slowest_vs_job_median"] == "2.857"
    assert "straggler: rank 1" in err


@pytest.mark.parametrize("us, text", [
    (0.5, "0.500us"), (999.9994, "999.999us"), (1500, "1.500ms"), (2.5e6, "2.500s"),
])
def test_fmt_time(us, text):
    assert fmt_time(us) == text


def test_print_table(capsys):
    print_table(["Name", "N"], [["a" * 70, "1"], ["b", "22"]])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "-" * 60 + "  " + "--"
    assert lines[3] == "a" * 57 + "...   1"              # names cut at 60 columns
    assert lines[4] == "b" + " " * 59 + "  22"
    assert lines[5] == lines[0]


def test_job_median_without_one_list():
    """--by rank's job median, merged from the ranks' sorted durations, is
    the median of all the steps: odd and even counts, ties, empty ranks."""
    import random
    from traceprof.cli import ranks
    rnd = random.Random(31)
    for _ in range(300):
        steps = {}
        for r in range(rnd.randint(1, 6)):
            st = ranks._Steps()
            st.extend(((rnd.choice([rnd.random(), 1.0, 2.0]), i) for i in range(rnd.randint(0, 9))),
                      None, r, "rank%d.json" % r)
            steps[r] = st
        every = [d for lst in steps.values() for d, _ in lst]
        want = ranks._median(every) if every else 0.0
        assert ranks._job_median(steps) == want, every
