"""`traceprof top [FOLDER]`: a running job's processes from their live
files, one row each (rank, host, step, last and median step time, ratio
to the job's median, status), the job's steps per second and its
straggler; a terminal view refreshed every second (top_screen.py), or one
snapshot as text (--once) or JSON (--json).  The model is top_live.py."""

import argparse
import json
import sys
import time

from .table import fmt_time
from .top_live import LiveError, live_dirs, snapshot
from ..util import err, fail

# The orders the view offers: its key, what the header says, the sort key.
# "slowest" puts the processes that do not advance first (stalled, stale:
# the longest wait), then the longest median step.
_RANK_NONE = 1 << 62


def _rank_key(r):
    return (r["rank"] if r["rank"] is not None else _RANK_NONE, r["host"], r["pid"])


def _slow_key(r):
    stuck = r["status"] in ("stalled", "stale")
    wait = r["step_s"] if r["status"] == "stalled" else r["updated_s_ago"]
    return (0 if stuck else 1, -(wait or 0.0) if stuck else -(r["median_step_ns"] or -1),
            _rank_key(r))


SORTS = {"slowest": _slow_key, "rank": _rank_key}


def ns_time(ns):
    return "-" if ns is None else fmt_time(ns / 1e3)


def rank_word(r):
    return "rank %s" % ("-" if r["rank"] is None else r["rank"])


def row_cells(r):
    """The columns of one process: rank, host, pid, step, last step time,
    median step time, ratio to the job's median, status (with what a
    stalled process is inside)."""
    return [rank_word(r), r["host"], "pid %d" % r["pid"],
            "step %s" % (r["step"] if r["step"] >= 0 else "-"),
            "last " + ns_time(r["last_step_ns"]), "median " + ns_time(r["median_step_ns"]),
            "%.2fx" % r["vs_job"] if r["vs_job"] is not None else "-", r["detail"]]


def header_lines(snap):
    """The lines above the rows: which run and where, the job's figures, and
    the straggler."""
    job = snap["job"]
    run = "every run" if snap["run"] is None else "run %s" % snap["run"]
    others = snap["other_runs"]
    first = "%s: %d process%s in %s, %s UTC" % (
        run, job["processes"], "" if job["processes"] == 1 else "es",
        ", ".join(snap["folders"]),
        time.strftime("%H:%M:%S", time.gmtime(snap["now_ns"] / 1e9)))
    if snap["run"] is not None and others:
        first += " (also: %s%s; --run NAME or --all)" % (
            ", ".join(others[:3]), ", ..." if len(others) > 3 else "")
    counts = ", ".join("%d %s" % (n, w) for w, n in sorted(job["status"].items()))
    second = "job: median step %s, %s steps/s; %s" % (
        ns_time(job["median_step_ns"]),
        "%.2f" % job["steps_per_s"] if job["steps_per_s"] else "-", counts)
    return [first, second]


def straggler_line(snap):
    s = snap["straggler"]
    if s is None:
        return "straggler: none (fewer than two processes with steps that are not stalled)"
    return ("straggler: rank %s (median step %s, %+.1f%% against the median rank's %s; "
            "%.2fx the job median; host %s, pid %d)" % (
                "-" if s["rank"] is None else s["rank"], ns_time(s["median_step_ns"]),
                100.0 * (s["vs_median_rank"] - 1.0) if s["vs_median_rank"] else 0.0,
                ns_time(s["median_rank_step_ns"]), s["vs_job"] or 0.0, s["host"], s["pid"]))


def align(rows):
    """Rows of cells as lines of aligned columns (the last one as it is)."""
    if not rows:
        return []
    n = len(rows[0])
    w = [max(len(r[i]) for r in rows) for i in range(n - 1)]
    return ["  ".join([c.ljust(w[i]) for i, c in enumerate(r[:-1])] + [r[-1]]) for r in rows]


def print_once(snap, sort):
    out = header_lines(snap)
    out += align([row_cells(r) for r in sorted(snap["processes"], key=SORTS[sort])])
    out.append(straggler_line(snap))
    sys.stdout.write("\n".join(out) + "\n")


def note_skipped(snap):
    sk = snap["skipped"]
    if sk:
        err("note: %d live file%s skipped (%s: %s)" % (
            len(sk), "" if len(sk) == 1 else "s", sk[0]["file"], sk[0]["why"]))


def cmd_top(argv):
    p = argparse.ArgumentParser(
        prog="traceprof top",
        description="Watches a running job: one row per traced process from the live files "
                    "each writes about once a second into <trace folder>/.live/ (rank, host, "
                    "step, last and median step time of its recent steps, ratio to the job's "
                    "median, status: running, recording, finished, stalled (its step has not "
                    "advanced for --stall-after seconds; the row names the call or range it "
                    "is inside), stale (its file has not been rewritten for 5 of its "
                    "update periods: the process was killed or its node is gone) or worker "
                    "(a forked child that never stepped, e.g. a DataLoader worker)), the "
                    "job's steps per second and its straggler, refreshed every second.  "
                    "Keys: s slowest first (default), r by rank, arrows and PgUp/PgDn "
                    "scroll, q quits.")
    p.add_argument("folder", nargs="?", metavar="FOLDER",
                   help="the job's trace folder, its .live folder, or a folder of run folders "
                        "(default: TRACEPROF_LIVE_DIR, else the folder traceprof run writes "
                        "to: TRACEPROF_FOLDER, default traceprof_traces/{run_name})")
    p.add_argument("--once", action="store_true",
                   help="print one snapshot as text and exit")
    p.add_argument("--json", action="store_true",
                   help="print one snapshot as JSON and exit")
    p.add_argument("--stall-after", type=float, default=60.0, metavar="SECONDS",
                   help="a process whose step has not advanced for this long is stalled "
                        "(default 60)")
    p.add_argument("--run", metavar="NAME",
                   help="the run to show when the folder holds several (default: the one "
                        "updated last)")
    p.add_argument("--all", action="store_true", help="show the processes of every run")
    p.add_argument("--sort", choices=sorted(SORTS), default="slowest",
                   help="row order: slowest (default; stalled and stale first) or rank")
    a = p.parse_args(argv)
    if not a.stall_after > 0:
        p.error("--stall-after must be a number of seconds above 0")
    if a.run is not None and a.all:
        p.error("--run and --all choose differently; give one")
    try:
        dirs, where = live_dirs(a.folder)
        take = lambda: snapshot(dirs, where, a.run, a.all, a.stall_after)  # noqa: E731
        snap = take()
    except LiveError as e:
        fail(str(e), 1)
    if a.json:
        note_skipped(snap)
        snap["processes"].sort(key=SORTS[a.sort])
        json.dump(snap, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    if a.once:
        note_skipped(snap)
        print_once(snap, a.sort)
        return 0
    if not sys.stdout.isatty() or not sys.stdin.isatty():
        fail("top: the view needs a terminal; use --once (text) or --json for a snapshot")
    from .top_screen import run_screen
    return run_screen(take, snap, a.sort)
