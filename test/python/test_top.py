"""traceprof top's model (cli/top_live.py) at fixed times: the checks of a
live file, each status word and its boundaries, which open call a stalled
process is shown in, the straggler, and where the live files are looked
for."""

import json
import os
import statistics

import pytest

from traceprof.cli import top_live
from traceprof.cli.top_live import (LiveError, check, describe_stuck, judge, live_dirs,
                                    pick_run, snapshot, stuck_in)

import genlive  # noqa: E402  (test/lib: pytest.ini's pythonpath)

S = 1000000000
NOW = 1800000000 * S


def live(**kw):
    d = genlive.doc("h", kw.pop("pid", 1), kw.pop("rank", 0), 2, **kw)
    d["_path"] = "h.%d.json" % d["pid"]
    return d


def test_check_accepts_a_live_file_and_names_what_is_wrong():
    d = live()
    d.pop("_path")
    assert check(d) is None
    assert check(dict(d, traceprofLive=2)).startswith("not a traceprof live file")
    assert check([1]).startswith("not a traceprof live file")
    bad = dict(d)
    del bad["threads"]
    assert check(bad) == 'no "threads"'
    # JSON's true is not a pid, and 1 is not a bool.
    assert check(dict(d, pid=True)) == '"pid" is true'
    assert check(dict(d, recording=1)) == '"recording" is 1'
    assert check(dict(d, rank=None)) is None
    assert check(dict(d, rank="0")) == '"rank" is "0"'
    assert check(dict(d, state="paused")) == '"state" is "paused"'
    assert check(dict(d, steps=[1, -2])).startswith('"steps" holds')
    assert check(dict(d, steps=[1.5])).startswith('"steps" holds')


def test_status_words_and_their_boundaries():
    base = dict(updated_ns=NOW, interval_ms=1000, step=7, step_started_ns=NOW - 10 * S,
                steps=[100, 300, 200])
    r = judge(live(**base), NOW, 60.0)
    assert (r["status"], r["detail"], r["median_step_ns"], r["last_step_ns"]) == \
        ("running", "running", 200, 200)
    assert judge(live(**dict(base, recording=True)), NOW, 60.0)["status"] == "recording"
    # Stalled from --stall-after on, judged from the step's start.
    assert judge(live(**base), NOW, 10.0)["status"] == "stalled"
    assert judge(live(**base), NOW, 10.5)["status"] == "running"
    # Stale: 5 update periods, at least 3 s (interval 1 s: 5 s; 100 ms: 3 s).
    assert judge(live(**dict(base, updated_ns=NOW - 5 * S)), NOW, 60.0)["status"] == "running"
    r = judge(live(**dict(base, updated_ns=NOW - 5 * S - 1)), NOW, 60.0)
    assert (r["status"], r["detail"]) == ("stale", "stale: no update for 5 s")
    fast = dict(base, interval_ms=100)
    assert judge(live(**dict(fast, updated_ns=NOW - 3 * S)), NOW, 60.0)["status"] == "running"
    assert judge(live(**dict(fast, updated_ns=NOW - 3 * S - 1)), NOW, 60.0)["status"] == "stale"
    # Stale comes before stalled; finished before both.
    assert judge(live(**dict(base, updated_ns=NOW - 9 * S)), NOW, 1.0)["status"] == "stale"
    r = judge(live(**dict(base, updated_ns=NOW - 99 * S, state="finished", exit_status=3)),
              NOW, 1.0)
    assert (r["status"], r["detail"]) == ("finished", "finished, exit 3")
    # Before the first step nothing is late.
    r = judge(live(**dict(base, step=-1, step_started_ns=None, steps=[])), NOW, 1.0)
    assert (r["status"], r["median_step_ns"]) == ("running", None)


def _open(kind, name, since, payload=None):
    return {"kind": kind, "name": name, "since_ns": since, "payload": payload or {}}


def test_stuck_in_prefers_the_call_entered_in_this_step_open_longest():
    step0 = NOW - 30 * S
    threads = [
        {"tid": 1, "name": "main", "open": [
            _open("module", "Model", step0 + S),
            _open("nvtx", "ncclAllReduce", step0 + 2 * S, {"op": "sum", "bytes": 64, "peer": None}),
            _open("cuda", "cudaStreamSynchronize", step0 + 3 * S)]},
        # Open since before the step began: not where the step waits.
        {"tid": 2, "name": "loader", "open": [_open("nvtx", "epoch", step0 - 100 * S)]},
        # Entered later than the main thread's call.
        {"tid": 3, "name": "pin", "open": [_open("cuda", "cudaMemcpy", step0 + 20 * S)]},
        {"tid": 4, "name": "idle", "open": []}]
    d = live(step=3, step_started_ns=step0, threads=threads, updated_ns=NOW)
    s = stuck_in(d, NOW)
    assert (s["thread"], s["name"], s["kind"], s["seconds"]) == (1, "cudaStreamSynchronize",
                                                                "cuda", 27.0)
    assert [p["name"] for p in s["path"]] == ["Model", "ncclAllReduce", "cudaStreamSynchronize"]
    assert describe_stuck(s, 30.0) == \
        "stalled 27 s in cudaStreamSynchronize, inside ncclAllReduce {op=sum, bytes=64}"
    r = judge(d, NOW, 10.0)
    assert r["detail"] == describe_stuck(s, 30.0) and r["in"]["name"] == "cudaStreamSynchronize"
    # Only ranges older than the step: the one open longest.
    d = live(step=3, step_started_ns=step0, threads=threads[1:2], updated_ns=NOW)
    assert stuck_in(d, NOW)["name"] == "epoch"
    # Nothing open.
    d = live(step=3, step_started_ns=step0, threads=[], updated_ns=NOW)
    assert stuck_in(d, NOW) is None
    assert judge(d, NOW, 10.0)["detail"] == "stalled 30 s (no open call or range)"


def _py(*funcs):
    return {"depth": len(funcs) + 2, "inner_unknown": 2,
            "frames": [{"func": f, "file": "/job/train.py"} for f in funcs]}


def test_stalled_line_names_the_python_stack_of_the_waiting_thread():
    step0 = NOW - 30 * S
    threads = [
        {"tid": 1, "name": "main", "open": [_open("cuda", "cudaStreamSynchronize", step0 + S)],
         "python": _py("sync", "train_step", "main", "<module>")},
        # Another thread's stack: not the one that waits.
        {"tid": 2, "name": "loader", "open": [], "python": _py("fetch", "run")}]
    d = live(pid=1, step=3, step_started_ns=step0, threads=threads, updated_ns=NOW)
    s = stuck_in(d, NOW)
    assert [f["func"] for f in s["python"]] == ["sync", "train_step", "main", "<module>"]
    assert judge(d, NOW, 10.0)["detail"] == ("stalled 29 s in cudaStreamSynchronize; "
                                             "python: sync < train_step < main < <module>")
    # At most five functions on the line; --json keeps them all.
    threads[0]["python"] = _py("a", "b", "c", "d", "e", "f")
    r = judge(d, NOW, 10.0)
    assert r["detail"].endswith("python: a < b < c < d < e < ...") and len(r["in"]["python"]) == 6
    # Nothing open but Python stacks: the main thread's (tid == pid) is shown.
    threads = [{"tid": 2, "name": "loader", "open": [], "python": _py("fetch")},
               {"tid": 1, "name": "main", "open": [], "python": _py("wait_here", "main")}]
    d = live(pid=1, step=3, step_started_ns=step0, threads=threads, updated_ns=NOW)
    assert judge(d, NOW, 10.0)["detail"] == \
        "stalled 30 s (no open call or range); python: wait_here < main"
    # A writer without "python" (or a malformed one): no stack, no error.
    threads = [{"tid": 1, "name": "main", "open": [_open("cuda", "cudaMemcpy", step0)]},
               {"tid": 3, "name": "x", "open": [], "python": {"frames": "?"}}]
    d = live(pid=1, step=3, step_started_ns=step0, threads=threads, updated_ns=NOW)
    assert judge(d, NOW, 10.0)["detail"] == "stalled 30 s in cudaMemcpy"


def _snap(tmp_path, docs, **kw):
    d = tmp_path / "job" / ".live"
    d.mkdir(parents=True, exist_ok=True)
    for x in docs:
        genlive.write(str(d), x)
    return snapshot([str(d)], str(d), now_ns=NOW, **kw)


def test_straggler_is_summary_by_ranks_and_skips_stalled_and_stale(tmp_path):
    def proc(rank, med, **kw):
        kw.setdefault("updated_ns", NOW)
        kw.setdefault("step_started_ns", NOW - S)
        return genlive.doc("h", 100 + rank, rank, 4, step=9, steps=[med - 1, med, med + 1] * 3,
                           **kw)
    snap = _snap(tmp_path, [proc(0, 100), proc(1, 150), proc(2, 100),
                            proc(3, 900, step_started_ns=NOW - 99 * S)])
    st = {p["rank"]: p["status"] for p in snap["processes"]}
    assert st == {0: "running", 1: "running", 2: "running", 3: "stalled"}
    s = snap["straggler"]
    assert (s["rank"], s["median_step_ns"], s["median_rank_step_ns"]) == (1, 150, 100)
    assert s["vs_median_rank"] == 1.5
    # The job's median counts every process's steps, the stalled one's too.
    every = [m + k for m in (100, 150, 100, 900) for k in (-1, 0, 1) * 3]
    assert snap["job"]["median_step_ns"] == statistics.median(every) == 125
    assert snap["job"]["status"] == {"running": 3, "stalled": 1}
    # Fewer than two candidates: none named.
    snap = _snap(tmp_path / "b", [proc(0, 100), proc(3, 900, updated_ns=NOW - 60 * S)])
    assert snap["straggler"] is None


def test_runs_and_skipped_files(tmp_path):
    d = tmp_path / "job" / ".live"
    d.mkdir(parents=True)
    genlive.write(str(d), genlive.doc("h", 1, 0, 1, run="old", updated_ns=NOW - 9 * S))
    genlive.write(str(d), genlive.doc("h", 2, 0, 1, run="new", updated_ns=NOW))
    (d / "h.3.json").write_text('{"traceprofLive":1')
    (d / ".h.4.json.tmp").write_text("{")
    snap = snapshot([str(d)], str(d), now_ns=NOW)
    assert (snap["run"], snap["other_runs"], len(snap["processes"])) == ("new", ["old"], 1)
    assert [os.path.basename(x["file"]) for x in snap["skipped"]] == ["h.3.json"]
    assert snapshot([str(d)], str(d), run="old", now_ns=NOW)["processes"][0]["pid"] == 1
    every = snapshot([str(d)], str(d), every=True, now_ns=NOW)
    assert (every["run"], len(every["processes"])) == (None, 2)
    with pytest.raises(LiveError, match="no live file of run 'x'"):
        snapshot([str(d)], str(d), run="x", now_ns=NOW)
    assert pick_run([], None, False) == ([], None, [])


def test_where_top_looks(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for run in ("a", "b"):
        os.makedirs("traceprof_traces/%s/.live" % run)
    env = {}
    assert live_dirs(None, env)[0] == ["traceprof_traces/a/.live", "traceprof_traces/b/.live"]
    assert live_dirs(None, {"TRACEPROF_RUN_NAME": "b"})[0] == ["traceprof_traces/b/.live"]
    # A launcher's job id names the run, as the library takes it.
    assert live_dirs(None, {"TORCHELASTIC_RUN_ID": "a"})[0] == ["traceprof_traces/a/.live"]
    assert live_dirs(None, {"TRACEPROF_FOLDER": "traceprof_traces/{run_name}/{rank}",
                            "TRACEPROF_RUN_NAME": "a"})[0] == []
    assert live_dirs(None, {"TRACEPROF_LIVE_DIR": "traceprof_traces/b/.live"}) == \
        (["traceprof_traces/b/.live"], "traceprof_traces/b/.live (TRACEPROF_LIVE_DIR)")
    # TRACEPROF_LIVE_DIR is a template too, as the library takes it.
    assert live_dirs(None, {"TRACEPROF_LIVE_DIR": "traceprof_traces/{run_name}/.live"})[0] == \
        ["traceprof_traces/a/.live", "traceprof_traces/b/.live"]
    assert live_dirs(None, {"TRACEPROF_LIVE_DIR": "traceprof_traces/{run_name}/.live",
                            "SLURM_JOB_ID": "b"})[0] == ["traceprof_traces/b/.live"]
    with pytest.raises(LiveError, match="TRACEPROF_LIVE_DIR=x} is not a folder template"):
        live_dirs(None, {"TRACEPROF_LIVE_DIR": "x}"})
    with pytest.raises(LiveError, match="TRACEPROF_FOLDER=x{ is not a folder template"):
        live_dirs(None, {"TRACEPROF_FOLDER": "x{"})
    assert live_dirs("traceprof_traces")[0] == ["traceprof_traces/a/.live",
                                                "traceprof_traces/b/.live"]
    assert live_dirs("traceprof_traces/a")[0] == ["traceprof_traces/a/.live"]
    assert live_dirs("traceprof_traces/a/.live")[0] == ["traceprof_traces/a/.live"]
    os.makedirs("loose")
    genlive.write("loose", genlive.doc("h", 1, 0, 1))
    assert live_dirs("loose")[0] == ["loose"]
    with pytest.raises(LiveError, match="'nope' is not a folder"):
        live_dirs("nope")
    assert json.load(open("loose/h.1.json"))["traceprofLive"] == 1
    assert top_live.STALE_INTERVALS == 5
