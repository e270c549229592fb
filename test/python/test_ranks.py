"""summary --by rank's verdict (cli/ranks.py, cli/summary_comm.py) on
hand-made traces, read from their events and from the footer's table
alike: robust step statistics (start-up in step 0 or one slow step decides
nothing), the split of each rank's steps into collectives and the rest (in
a synchronous job the rank that waits least holds the others back), and
the refusal to count several runs together."""

import csv
import io
import json

import pytest

from conftest import write_trace
from traceprof.cli import ranks
from traceprof.cli.summary import cmd_summary
from traceprof.cli.summary_comm import CommWait, is_collective
from traceprof.traces.aggtable import covers


def X(name, cat, ts, dur, pid=1, tid=1):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}


def write_with_table(path, events, rank, host="h", footer=None):
    """A trace in the library's layout: the events, then the footer with
    the table format/aggregate.c would write of them (ns; self = total:
    nothing here nests)."""
    rows, steps = {}, []
    for e in events:
        if e["name"].startswith("ProfilerStep#"):
            steps.append([int(e["name"][13:]), round(e["dur"] * 1e3), e["pid"]])
            continue
        ns = round(e["dur"] * 1e3)
        r = rows.setdefault((e["name"], e["cat"]), [e["name"], e["cat"], 0, 0, 0, ns, ns])
        r[2] += 1
        r[3] += ns
        r[4] += ns
        r[5], r[6] = min(r[5], ns), max(r[6], ns)
    agg = {"version": 1, "rank": rank, "span_ns": 10 ** 9, "names_cut": 0, "calls_cut": 0,
           "steps_cut": 0, "self_folded": 0, "rows": list(rows.values()), "steps": steps}
    head = ('{\n  "distributedInfo": %s,\n  "traceEvents": [\n' %
            json.dumps({"rank": rank, "world_size": 2})
            + ",\n".join(json.dumps(e) for e in events)).encode()
    # What the table covers, as the writer says it (a table without it is
    # not used: traces/aggtable.py).
    agg["covers"] = covers(head, len(events))
    with open(path, "wb") as f:
        f.write(head)
        f.write(('\n  ],\n  "traceprof": %s\n}\n' % json.dumps(
            dict({"hostname": host, "aggregate": agg}, **(footer or {})))).encode())
    return str(path)


def run(capsys, *argv):
    rc = cmd_summary(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def by_rank(capsys, folder, *more):
    """{rank: CSV row} and stderr, from the tables and from the events:
    both must print the same."""
    got = []
    for extra in ((), ("--from-events",)):
        rc, out, err = run(capsys, str(folder), "--by", "rank", "--csv", *(more + extra))
        assert rc == 0, err
        got.append((out, err))
    assert got[0] == got[1]
    return {int(x["rank"]): x for x in csv.DictReader(io.StringIO(got[0][0]))}, got[0][1]


def steps(pid, durs, first=0, extra=()):
    """ProfilerStep#first.. back to back, and extra events."""
    evs, ts = [], 0.0
    for i, d in enumerate(durs):
        evs.append(X("ProfilerStep#%d" % (first + i), "user_annotation", ts, d, pid=pid))
        ts += d
    return evs + list(extra)


def test_robust():
    assert ranks.robust([1, 2, 3, 4, 100]) == (3, 3.0, 1)
    assert ranks.robust([5]) == (5, 5.0, 0)
    assert ranks.robust([4, 6]) == (5.0, 5.0, 1.0)
    # One step 1,000 times the others moves none of the three.
    med, trim, mad = ranks.robust([10.0] * 7 + [10000.0])
    assert (med, trim, mad) == (10.0, 10.0, 0.0)


@pytest.mark.parametrize("tables", [True, False])
def test_startup_in_step_0_decides_nothing(capsys, tmp_path, tables):
    """No schedule: step 0 holds start-up (rank 0's is 5 s); rank 1 is
    20 ms slower in every step after it.  The mean named rank 0."""
    d = tmp_path / "job"
    d.mkdir()
    for r, evs in ((0, steps(10, [5e6] + [50e3] * 6)), (1, steps(11, [1e6] + [70e3] * 6))):
        if tables:
            write_with_table(d / ("rank%d.json" % r), evs, r)
        else:
            write_trace(d / ("rank%d.json" % r), evs, distributedInfo={"rank": r, "world_size": 2})
    rows, err = by_rank(capsys, d)
    assert err.startswith("straggler: rank 1 (median step 70.000ms"), err
    assert (rows[0]["median_us"], rows[0]["trimmed_mean_us"], rows[0]["mad_us"]) == \
        ("50000.000", "50000.000", "0.000")
    assert rows[1]["comm_us_per_step"] == ""


def ddp_rank(pid, step_us, wait_us, startup_wait_us=0.0, n=8):
    """A rank of a synchronous job: every step lasts step_us, of which
    wait_us in gloo's all-reduce (on its worker thread) and a c10d
    operator of 5 us on the main thread; a start-up broadcast of
    startup_wait_us before the steps."""
    extra = [X("gloo:broadcast", "user_annotation", 0, startup_wait_us, pid=pid, tid=2)] \
        if startup_wait_us else []
    for i in range(n):
        t0 = i * step_us
        extra.append(X("c10d::allreduce_", "cpu_op", t0 + 1, 5, pid=pid))
        extra.append(X("gloo:all_reduce", "user_annotation", t0 + step_us - wait_us,
                       wait_us, pid=pid, tid=2))
    extra.append(X("aten::mm", "cpu_op", 3, 50, pid=pid))          # no collective
    extra.append(X("ncclDevKernel_AllReduce", "kernel", 3, 9e9, pid=pid))  # GPU: not host time
    return steps(pid, [step_us] * n, extra=extra)


@pytest.mark.parametrize("tables", [True, False])
def test_the_rank_that_waits_least(capsys, tmp_path, tables):
    """DDP: each step lasts as long as the slowest rank's (the all-reduce
    waits); rank 1 does 4 times the work and waits least.  Its step is a
    hair shorter, so the step times named rank 0.  Rank 1 waited 30 s
    in start-up's broadcast: one call, which decides nothing."""
    d = tmp_path / "job"
    d.mkdir()
    spec = {0: ddp_rank(10, 100e3, 75e3), 1: ddp_rank(11, 99.9e3, 1e3, startup_wait_us=30e6),
            2: ddp_rank(12, 100e3, 74e3)}
    for r, evs in spec.items():
        if tables:
            write_with_table(d / ("rank%d.json" % r), evs, r)
        else:
            write_trace(d / ("rank%d.json" % r), evs, distributedInfo={"rank": r, "world_size": 3})
    rows, err = by_rank(capsys, d)
    assert err.startswith("straggler: rank 1 (waits 879.375us a step in collectives, the least"), err
    # 8 all-reduces and 8 c10d calls a rank, each name's longest left out:
    # (7 * 75000 + 7 * 5) / 8.
    assert rows[0]["comm_us_per_step"] == "%.3f" % ((7 * 75e3 + 7 * 5) / 8)
    assert rows[1]["comm_us_per_step"] == "%.3f" % ((7 * 1e3 + 7 * 5) / 8)


def test_collectives_by_name():
    assert is_collective("c10d::allreduce_", "cpu_op")
    assert is_collective("gloo:all_reduce", "user_annotation")
    assert is_collective("ncclAllReduce", "user_annotation")
    assert not is_collective("ncclDevKernel_AllReduce_Sum_f32", "kernel")
    assert not is_collective("aten::mm", "cpu_op")
    a, b = CommWait(), CommWait()
    for dur in (3.0, 9.0, 4.0):
        a.add_event("gloo:all_reduce", "user_annotation", dur)
    b.add_table([["gloo:all_reduce", "user_annotation", 3, 16000, 16000, 3000, 9000],
                 ["aten::mm", "cpu_op", 1, 5000, 5000, 5000, 5000]])
    assert a.rows == b.rows and a.wait() == b.wait() == 7.0 and a.calls() == 3


@pytest.mark.parametrize("tables", [True, False])
def test_runs_mixed(capsys, tmp_path, tables):
    """Three runs into one folder: rank 0 by three processes.  Refused with
    the processes and their files; --all-runs counts them together."""
    d = tmp_path / "job"
    d.mkdir()
    for i, pid in enumerate((100, 200, 300)):
        for r in (0, 1):
            evs = steps(pid + r, [10e3 + r] * 3, first=1)
            name = d / ("run%d.rank%d.json" % (i, r))
            if tables:
                write_with_table(name, evs, r)
            else:
                write_trace(name, evs, distributedInfo={"rank": r, "world_size": 2})
    for extra in ((), ("--from-events",)):
        rc, out, err = run(capsys, str(d), "--by", "rank", *extra)
        assert rc == 1 and out == "", out
        assert err.startswith("traceprof: these files mix runs: rank 0 was recorded by 3 "
                              "processes (pid 100"), err
        assert "run2.rank0.json" in err and "(and 1 more ranks alike)" in err
        assert "--all-runs" in err and len(err.splitlines()) == 1
    rows, _ = by_rank(capsys, d, "--all-runs")
    assert rows[0]["steps"] == "9"


def write_run(path, evs, rank, tables, run_id=None, start=None, id_from="TRACEPROF_RUN_ID"):
    """A rank's file with a footer of that run id and start time (None:
    left out, as in files of a library before them)."""
    ft = {k: v for k, v in (("run_id", run_id), ("start_unix_ns", start)) if v is not None}
    if run_id is not None:
        ft["run_id_from"] = id_from
    if tables:
        return write_with_table(path, evs, rank, footer=ft)
    return write_trace(path, evs, distributedInfo={"rank": rank, "world_size": 2},
                       traceprof=dict({"hostname": "h"}, **ft))


@pytest.mark.parametrize("tables", [True, False])
def test_run_ids_mixed(capsys, tmp_path, tables):
    """Three runs into one folder whose processes had the same pids (a
    container each) and whose step numbers do not repeat: only the footers'
    run ids tell them apart.  Refused, naming the ids; --all-runs counts
    them together."""
    d = tmp_path / "job"
    d.mkdir()
    for i in range(3):
        for r in (0, 1):
            write_run(d / ("run%d.rank%d.json" % (i, r)), steps(10 + r, [10e3] * 3, first=3 * i),
                      r, tables, run_id="run-%d" % i, start=(1700000000 + 60 * i) * 10 ** 9 + r)
    for extra in ((), ("--from-events",)):
        rc, out, err = run(capsys, str(d), "--by", "rank", *extra)
        assert rc == 1 and out == "", out
        assert err.startswith("traceprof: these files mix runs: 3 run ids (the footers' run_id: "
                              "run-0: run0.rank0.json, run0.rank1.json; run-1: "), err
        assert "--all-runs" in err and len(err.splitlines()) == 1, err
    rows, _ = by_rank(capsys, d, "--all-runs")
    assert rows[0]["steps"] == "9" and rows[1]["steps"] == "9"


@pytest.mark.parametrize("tables", [True, False])
def test_same_pid_started_twice(capsys, tmp_path, tables):
    """Files without run ids (another launcher's, or hand-picked) of one
    pid that started twice, 20 minutes apart: two processes, refused."""
    d = tmp_path / "job"
    d.mkdir()
    for i in (0, 1):
        write_run(d / ("run%d.json" % i), steps(7, [10e3] * 3, first=3 * i), 0, tables,
                  start=(1700000000 + 1200 * i) * 10 ** 9)
    rc, _, err = run(capsys, str(d), "--by", "rank")
    assert rc == 1 and "rank 0 was recorded by 2 processes (pid 7 on h started " in err, err
    assert "run1.json" in err and len(err.splitlines()) == 1, err


@pytest.mark.parametrize("tables", [True, False])
@pytest.mark.parametrize("ids", [("job-1", "job-1", "TORCHELASTIC_RUN_ID"),
                                 ("parent-h-50-7", "parent-h-51-8", "parent process")])
def test_one_run_two_processes(capsys, tmp_path, tables, ids):
    """The two ranks of one run: two pids started 3 s apart, a file each
    and rank 0's second window: accepted, not mixed.  With one run id, or
    with ids derived from each worker's parent, which one run's processes
    need not share (a node each): those decide nothing."""
    d = tmp_path / "job"
    d.mkdir()
    for r in (0, 1):
        start = (1700000000 + 3 * r) * 10 ** 9
        write_run(d / ("rank%d.step2.json" % r), steps(20 + r, [10e3] * 3), r, tables,
                  run_id=ids[r], start=start, id_from=ids[2])
    write_run(d / "rank0.step5.json", steps(20, [10e3] * 3, first=3), 0, tables,
              run_id=ids[0], start=1700000000 * 10 ** 9, id_from=ids[2])
    rows, err = by_rank(capsys, d)
    assert rows[0]["steps"] == "6" and rows[1]["steps"] == "3", rows
    assert "mix" not in err, err


def test_same_pid_twice(capsys, tmp_path):
    """Two runs whose rank 0 had the same pid (containers): the step
    numbers repeat."""
    d = tmp_path / "job"
    d.mkdir()
    for i in (0, 1):
        write_trace(d / ("run%d.json" % i), steps(7, [10e3] * 3),
                    distributedInfo={"rank": 0, "world_size": 1})
    rc, _, err = run(capsys, str(d), "--by", "rank")
    assert rc == 1 and "rank 0 was recorded by one process, its step numbers twice" in err, err


def test_merge_beside_its_inputs(capsys, tmp_path):
    """A merged file (no host of its own, the ranks' pids) beside the rank
    file it came from: one process, its steps twice, not two processes."""
    d = tmp_path / "job"
    d.mkdir()
    evs = steps(7, [10e3] * 3)
    write_with_table(d / "rank0.json", evs, 0, host="node1")
    write_trace(d / "merged.json", [{"ph": "M", "name": "process_name", "pid": 7, "tid": 0,
                                     "args": {"name": "rank 0: python (pid 7)"}}] + evs)
    rc, _, err = run(capsys, str(d), "--by", "rank")
    assert rc == 1 and "rank 0 was recorded by one process, its step numbers twice (pid 7 on " \
        "node1: merged.json, rank0.json: the same steps read twice" in err, err


@pytest.mark.parametrize("tables", [True, False])
def test_collectives_that_wait_for_nothing(capsys, tmp_path, tables):
    """Every rank enqueues collectives (a few ns each: asynchronous, or
    NCCL's host-side call) and rank 0's steps are 20 ms longer: the ns of
    difference in the collectives decide nothing, the steps do."""
    d = tmp_path / "job"
    d.mkdir()
    for r, step_us, call_us in ((0, 70e3, 0.02), (1, 50e3, 0.01)):
        extra = [X("ncclAllReduce", "user_annotation", i * step_us + 1, call_us, pid=10 + r)
                 for i in range(6)]
        evs = steps(10 + r, [step_us] * 6, extra=extra)
        if tables:
            write_with_table(d / ("rank%d.json" % r), evs, r)
        else:
            write_trace(d / ("rank%d.json" % r), evs, distributedInfo={"rank": r, "world_size": 2})
    rows, err = by_rank(capsys, d)
    assert err.startswith("straggler: rank 0 (median step 70.000ms"), err
    assert rows[1]["comm_us_per_step"] == "0.008"


def test_table_with_names_cut(capsys, tmp_path):
    """A table that left names out is still read (its steps are whole),
    with one line saying the collectives count the names kept."""
    d = tmp_path / "job"
    d.mkdir()
    for r in (0, 1):
        path = write_with_table(d / ("rank%d.json" % r), ddp_rank(10 + r, 100e3, 5e3), r)
        if r == 1:
            text = open(path).read().replace('"names_cut": 0', '"names_cut": 3')
            # Only the table is read: the events overwritten with spaces.
            head, tail = text.split('"traceEvents": [', 1)
            body, foot = tail.split("\n  ],\n", 1)
            open(path, "w").write(head + '"traceEvents": [' + " " * len(body) + "\n  ],\n" + foot)
    rc, out, err = run(capsys, str(d), "--by", "rank")
    assert rc == 0, err
    assert err.startswith("traceprof: note: 1 file (rank1.json) left names out of its table"), err


def test_startup_and_teardown_steps_left_out(tmp_path, capsys):
    """The library labels the span before the first step and after the
    last (args.phase; the table's step_phases): they are no iterations and
    count in no rank's statistics, from the events and the table alike.
    Here rank 0's start-up (5 s) and teardown (3 s) would make it the
    slowest by its max and its mean; its iterations are 10 ms, rank 1's
    12 ms."""
    def with_phases(pid, durs):
        evs = steps(pid, durs)
        evs[0].setdefault("args", {})["phase"] = "start-up"
        evs[-1].setdefault("args", {})["phase"] = "teardown"
        return evs
    for rank, durs in ((0, [5e6] + [10e3] * 8 + [3e6]), (1, [20e3] + [12e3] * 8 + [20e3])):
        evs = with_phases(rank + 1, durs)
        p = write_with_table(tmp_path / ("rank%d.trace.json" % rank), evs, rank)
        # The table names the edge steps as format/aggregate.c does.
        text = open(p).read()
        text = text.replace('"steps": [', '"step_phases": [[0, %d, "start-up"], [%d, %d, '
                            '"teardown"]], "steps": [' % (rank + 1, len(durs) - 1, rank + 1))
        open(p, "w").write(text)
    rows, err = by_rank(capsys, tmp_path)
    assert rows[0]["steps"] == "8" and rows[1]["steps"] == "8", rows
    assert float(rows[0]["max_us"]) == 10e3, rows[0]
    assert "4 start-up and teardown steps" in err, err
