"""`traceprof summary`: torch's key_averages() table for one trace (JSON
or .pftrace), or the steps' durations; --by rank is ranks.py's."""

import argparse
import math
import os
import sys

from . import readopts
from ..traces import aggtable, arrow
from ..traces.cut import note_cut
from ..traces.events import STEP_RE
from .inputs import regular, summary_file, summary_folders
from ..layout import DOC_FOOTER, STEP_PREFIX
from ..traces.pftrace import PFTRACE_RE, PftraceReader
from .ranks import summary_ranks
from .summary_comm import comm_batch, print_comm
from ..traces.lines import NotLines, line_tables
from ..traces.reader import TraceError, TraceReader
from ..traces.rowacc import EventRows
from .table import fmt_time, print_table, write_csv
from ..util import err, fail


def cmd_summary(argv):
    p = argparse.ArgumentParser(
        prog="traceprof summary",
        description="Prints the table of torch's key_averages().table() for one trace: "
                    "name, calls, total, self (total minus nested events on the same "
                    "thread), average, min, max and percent of the window (first to last "
                    "event).  --by step prints each step's duration and their spread.  "
                    "--by rank takes a job's per-rank files (or their folder, or a merged "
                    "file) and prints one row per rank (median step, trimmed mean, MAD, time "
                    "in collectives) and names the straggler: the rank that waits least in "
                    "collectives where every rank has some, else the longest median step; "
                    "files of several runs are refused without --all-runs.  --by comm "
                    "prints NCCL's collectives (its NVTX ranges): calls, time and bytes.")
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="a trace, or a run's folder holding one (or the folder of runs "
                        "holding one run); with --by rank also several, a run's folder, "
                        "or the folder of runs holding one run")
    p.add_argument("--by", choices=["all", "api", "kernel", "marker", "step", "rank", "comm"],
                   default="all",
                   help="events to group: all (default; every complete event but "
                        "steps), api (CUDA runtime/driver calls), kernel (GPU kernels, "
                        "copies, sets), marker (user annotations), step (ProfilerStep#N), "
                        "rank (step times per rank of a job), comm (NCCL collectives: "
                        "calls, time and bytes from NCCL's NVTX ranges)")
    p.add_argument("--top", type=int, default=30, metavar="N",
                   help="rows to print, by total time (default 30; 0: all)")
    p.add_argument("--csv", action="store_true", help="CSV instead of a text table")
    p.add_argument("--all-runs", action="store_true",
                   help="--by rank: count the steps of several runs together (without it, "
                        "files of more than one run, such as a rank recorded by two "
                        "processes, are refused with the list of runs)")
    p.add_argument("--from-events", action="store_true",
                   help="read every event, even where the files carry their own summary "
                        "table (traceprof's footer \"aggregate\"; without this option the "
                         "tables are used when every input has a complete one that provably "
                         "belongs to its events: docs/trace-format.md)")
    p.add_argument("--json-reader", choices=["auto", "arrow", "python"], default="auto",
                   help="reading the events: arrow: a JSON file with one event on a line (as "
                        "traceprof writes it) is parsed by pyarrow's JSON reader when this "
                        "Python has pyarrow, any other event by event in Python; auto "
                        "(default): arrow for files of %d MB or more (importing pyarrow "
                        "costs what Python's reading of about that much does), python for "
                        "smaller ones; python: every file event by event (the same table)"
                        % (COLUMNS_FROM >> 20))
    readopts.add(p)
    a = p.parse_args(argv)
    readopts.apply(p, a)
    if a.top < 0:
        p.error("--top must be >= 0")
    # Names are printed as they are; a lone surrogate ("\ud800" in the
    # file) has no UTF-8 form and is printed escaped.
    try:
        sys.stdout.reconfigure(errors="backslashreplace")
    except (AttributeError, ValueError):
        pass
    if a.by == "rank":
        a.files = summary_folders(a.files, all_runs=a.all_runs)
        return summary_ranks(a)
    if len(a.files) > 1:
        p.error("one FILE (several only with --by rank)")
    a.file = summary_file(a.files[0], a.by)
    if os.path.exists(a.file) and not os.path.isdir(a.file) and not regular(a.file):
        fail("%s: not a regular file (a FIFO, device or socket); only regular files are "
             "read" % a.file)
    if regular(a.file):
        note_cut(a.file)

    notes = []  # why a table is not used: said once the events were read
    miss = aggtable.missing_parts([a.file])
    if miss:
        notes.append(miss)
    if not a.from_events and a.by != "comm" and not miss:
        tab = aggtable.table_paths([a.file], notes)
        if tab is not None:
            t = tab[a.file]
            if a.by == "step":
                ev = aggtable.step_events(t)
                if ev:
                    return print_steps(a, ev, t["span_ns"] / 1e3)
            else:
                x = aggtable.summary_rows(t, a.by)
                if x is not None and x[0]:
                    return print_rows(a, x[0], x[1])
    if a.by == "comm" and PFTRACE_RE.search(a.file):
        fail("%s: --by comm reads JSON traces only (it needs the events' args, which "
             "summary does not read from Perfetto files); record with --format json" % a.file)
    # Read as a stream: running aggregates, and self time from the complete
    # events sorted in bounded runs (traces/rowacc.py), never every event.
    meta = {}
    got = _from_columns(a, meta)
    acc = got[0] if got else EventRows(a.by, want_self=a.by not in ("step", "comm"))
    comm = {}  # --by comm: name -> [calls, time, bytes, calls with bytes]
    try:
        if got:
            rows = got[1]
            raise _Done()
        reader = PftraceReader(a.file) if PFTRACE_RE.search(a.file) else TraceReader(a.file)
        for kind, batch, b in reader.items():
            if kind != "events":
                if kind == "meta":
                    meta[batch] = b
                continue
            if a.by == "comm":
                comm_batch(comm, batch)
                acc.has_events = True
                continue
            acc.add_batch(batch)
        rows = acc.finish()
    except _Done:
        pass
    except TraceError as e:
        fail(str(e), 1)
    for n in notes:
        err(n)
    window = acc.window()
    if a.by == "comm":
        if not comm:
            err("%s: nothing to show: no NCCL ranges (NVTX domain \"NCCL\"): the program "
                "made no NCCL call while recording" % a.file)
            return 1
        return print_comm(a, comm)
    if not acc.has_events or not acc.keyed:
        err("%s: nothing to show: %s" % (a.file, empty_reason(a.by, acc.has_events,
                                                             acc.complete, meta)))
        return 1
    if a.by == "step":
        return print_steps(a, acc.steps, window, footer_phases(meta))
    return print_rows(a, rows, window)


# The smallest file (in bytes of text) that --json-reader auto parses with
# pyarrow: importing pyarrow and numpy costs about 0.4 CPU s, what Python's
# per-event reading spends on 30 MB (2.3 CPU s for 100 MB against 1.5).
COLUMNS_FROM = 32 << 20


class _Done(Exception):
    """The columnar reading read the events."""


def _from_columns(a, meta):
    """(EventRows, its rows) of a.file's events parsed by pyarrow's JSON
    reader (traces/lines.py, traces/rowcols.py), its top-level members
    into meta; None where that reading does not apply (--json-reader
    python, --by comm, a .pftrace, no pyarrow or numpy, a file not in the
    one-event-per-line layout, a value only the per-event reading reads as
    it should): then TraceReader reads the file, with the same result."""
    if a.json_reader == "python" or a.by == "comm" or PFTRACE_RE.search(a.file):
        return None
    if a.json_reader == "auto":
        try:
            size = os.path.getsize(a.file)
        except OSError:
            return None
        # A compressed file holds several times its size of text.
        if size * (4 if a.file.endswith((".gz", ".zst")) else 1) < COLUMNS_FROM:
            return None
    try:
        pa = arrow.load("pyarrow.json", "pyarrow.compute")
        from ..traces import rowcols
    except ImportError:
        return None
    acc = EventRows(a.by, want_self=False)
    if a.by != "step":
        acc.self_times = rowcols.ColSelf()
    m = {}
    try:
        for t in line_tables(a.file, pa, rowcols.schema(a.by), m):
            rowcols.add_table(acc, t)
        rows = rowcols.finish(acc)
    except (NotLines, rowcols.NotColumns, TraceError, pa.ArrowException, UnicodeDecodeError,
            OverflowError, ValueError):
        # TraceReader reads the file again and says what is wrong with it.
        acc.close()
        return None
    meta.update(m)
    return acc, rows


def print_rows(a, rows, window):
    """The table of rows {name: [calls, total, self, min, max]} (us)."""
    order = sorted(rows.items(), key=lambda kv: (-kv[1][1], kv[0]))
    shown = order if a.top == 0 else order[:a.top]
    head = ["Name", "Calls", "Total", "Self", "Avg", "Min", "Max", "% window"]
    if a.csv:
        out = [["name", "calls", "total_us", "self_us", "avg_us", "min_us", "max_us",
                "percent_window"]]
        for name, r in shown:
            out.append([name, str(r[0]), "%.3f" % r[1], "%.3f" % r[2], "%.3f" % (r[1] / r[0]),
                        "%.3f" % r[3], "%.3f" % r[4],
                        "%.2f" % (100.0 * r[1] / window if window else 0.0)])
        write_csv(out)
        return 0
    table = []
    for name, r in shown:
        table.append([name, str(r[0]), fmt_time(r[1]), fmt_time(r[2]), fmt_time(r[1] / r[0]),
                      fmt_time(r[3]), fmt_time(r[4]),
                      "%.2f%%" % (100.0 * r[1] / window if window else 0.0)])
    title = {"all": "all events", "api": "CUDA API calls", "kernel": "GPU activity",
             "marker": "markers"}[a.by]
    print_table(head, table)
    total_calls = sum(r[0] for r in rows.values())
    print("%s: %d names, %d calls%s; window %s (first to last event)" % (
        title, len(rows), total_calls,
        "" if len(shown) == len(rows) else ", top %d shown" % len(shown), fmt_time(window)))
    return 0


def empty_reason(by, has_events, complete, meta):
    """Why a summary has no rows, in words (complete: how many complete
    events with a numeric ts there were)."""
    if not has_events:
        return "the file has no events (no traceEvents array, or an empty one)"
    if not complete:
        return "no complete events (ph \"X\") with a numeric ts"
    cfg = meta.get("traceprof", {}).get("configuration", {}) \
        if isinstance(meta.get("traceprof"), dict) else {}
    cupti = cfg.get("TRACEPROF_CUPTI") if isinstance(cfg, dict) else None
    if by == "kernel":
        if cupti == "off":
            return "no GPU events: CUPTI was off (TRACEPROF_CUPTI=off)"
        return ("no GPU events: CUPTI did not record (host-only mode: no GPU or driver, "
                "TRACEPROF_CUPTI=off, or another tool held CUPTI); --by api shows the "
                "CUDA calls")
    if by == "api":
        return "no CUDA API calls (the program made none while recording, or is not a CUDA program)"
    if by == "marker":
        return ("no markers (traceprof.marker(), traceprof_marker_start/finish or "
                "user_annotation events)")
    if by == "step":
        return ("no ProfilerStep#N events (traceprof_step() was not called in a recorded "
                "step?)")
    return "only steps (ProfilerStep#N): --by step shows them"


def footer_phases(meta):
    """{(step, pid as text): phase} from the file's own table ("step_phases"
    of the footer's aggregate): the phases of the start-up and teardown
    steps where the events do not carry their args (a .pftrace, whose args
    summary does not read)."""
    foot = meta.get(DOC_FOOTER)
    agg = foot.get("aggregate") if isinstance(foot, dict) else None
    rows = agg.get("step_phases") if isinstance(agg, dict) else None
    return {(r[0], str(r[1])): r[2] for r in rows or ()
            if isinstance(r, list) and len(r) == 3 and isinstance(r[2], str)}


def print_steps(a, events, window, phases=None):
    """events: (pid, tid, ts, dur, key[, phase]); phases: footer_phases(),
    for the events that carry none."""
    steps = []
    edges = []  # the start-up and teardown: no iteration (scripts/layout.spec)
    for ev in events:
        pid, key = ev[0], ev[4]
        if key is None:
            continue
        m = STEP_RE.match(key)
        phase = ev[5] if len(ev) > 5 else None
        if phase is None and phases:
            phase = phases.get((int(m.group(1)), pid))
        (edges if phase else steps).append((int(m.group(1)), ev[3], pid, phase))
    steps.sort()
    edges.sort()
    left_out = ""
    if edges and steps:
        left_out = "; left out: %s" % ", ".join(
            "%s%d (%s, %s)" % (STEP_PREFIX, s, ph, fmt_time(d)) for s, d, _, ph in edges)
        csv_note = "the step statistics leave out " + left_out[len("; left out: "):]
    elif edges:
        # Nothing but the edges (one step call or none): shown, and said.
        steps = edges
        left_out = "; only the %s: no whole iteration between two step calls" % (
            " and ".join(ph for _, _, _, ph in edges))
        csv_note = "steps: " + left_out[2:]
    steps = [(s, d, p) for s, d, p, _ in steps]
    durs = [d for _, d, _ in steps]
    n = len(durs)
    mean = sum(durs) / n
    sd = math.sqrt(sum((d - mean) ** 2 for d in durs) / (n - 1)) if n > 1 else 0.0
    shown = steps if a.top == 0 else steps[:a.top]
    multi_pid = len({p for _, _, p in steps}) > 1
    if a.csv:
        out = [["step", "duration_us"] + (["pid"] if multi_pid else [])]
        for s, d, p in shown:
            out.append([str(s), "%.3f" % d] + ([p] if multi_pid else []))
        out.append(["mean", "%.3f" % mean] + ([""] if multi_pid else []))
        out.append(["stddev", "%.3f" % sd] + ([""] if multi_pid else []))
        out.append(["min", "%.3f" % min(durs)] + ([""] if multi_pid else []))
        out.append(["max", "%.3f" % max(durs)] + ([""] if multi_pid else []))
        write_csv(out)
        if left_out:
            err(csv_note)
        return 0
    head = ["Step", "Duration", "vs mean"] + (["pid"] if multi_pid else [])
    rows = []
    for s, d, p in shown:
        rows.append([STEP_PREFIX + str(s), fmt_time(d),
                     "%+.1f%%" % (100.0 * (d - mean) / mean if mean else 0.0)]
                    + ([p] if multi_pid else []))
    print_table(head, rows)
    print("steps: %d%s; mean %s, stddev %s (%.1f%%), min %s, max %s%s" % (
        n, "" if len(shown) == n else " (first %d shown)" % len(shown), fmt_time(mean),
        fmt_time(sd), 100.0 * sd / mean if mean else 0.0, fmt_time(min(durs)),
        fmt_time(max(durs)), left_out))
    return 0
