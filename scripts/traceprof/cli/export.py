"""`traceprof export --parquet OUT FILES... | FOLDER`: every event of a job
as a Parquet dataset, for the engines that scale past one Python process
(DuckDB on one machine; Spark, Trino and others on a cluster).

The dataset is partitioned Hive-style by rank and window (window_id: "window"
is a keyword of SQL):
OUT/rank=R/window_id=W/<input file's name>.parquet, one file per input file (a
window split into parts gives one file per part).  W is the window's first
step (the footer's "steps"), else the input's position.  Columns of each
file (rank and window come from the path):

    pid, tid (int64); step (int64: the ProfilerStep#N whose span holds the
    event's start, null outside every step); name, category (string);
    start_ns (int64: JSON, wall-clock ns, baseTimeNanoseconds + ts; Perfetto,
    the trace clock's ns); duration_ns (int64; 0 for instants); and the
    common args: kernel (string), grid, block (string "x,y,z"), bytes,
    stream, correlation, result (int64), each null where the event has none.

Complete events (ph "X") and instants ("i") are exported; counters, flows
and metadata are not.  Each input is read twice (its steps, then its
events), streaming, and written in row groups of 65,536 events: memory stays
flat in the job's size.  Needs pyarrow (pip install pyarrow)."""

import argparse
import bisect
import os
import re

from ..layout import CAT_KERNEL
from ..traces import aggtable
from ..traces.cut import note_cut
from ..traces.events import STEP_RE, finite_num
from ..traces.pfmerge import meta_of, scan
from ..traces.pftrace import PFTRACE_RE, PftraceReader
from ..traces.reader import TraceError, TraceReader
from ..util import fail
from .inputs import merge_inputs, rank_of

ROWS = 65536
COLUMNS = ("pid", "tid", "step", "name", "category", "start_ns", "duration_ns", "kernel",
           "grid", "block", "bytes", "stream", "correlation", "result")
INT_ARGS = ("bytes", "stream", "correlation", "result")


def _pyarrow():
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        fail("export --parquet needs pyarrow, which this Python (%s) does not have: "
             "pip install pyarrow" % __import__("sys").executable)
    return pyarrow, pyarrow.parquet


def _int(v):
    if isinstance(v, bool) or not isinstance(v, int) or not -(1 << 63) <= v < (1 << 63):
        return None
    return v


def _dim(v):
    if isinstance(v, list) and v and all(isinstance(x, int) and not isinstance(x, bool)
                                         for x in v):
        return ",".join(str(x) for x in v)
    if isinstance(v, str):
        return v
    return None


def _events(path):
    pf = PFTRACE_RE.search(path)
    for kind, batch, _ in (PftraceReader(path) if pf else TraceReader(path)).items():
        if kind == "events":
            yield from batch


def _steps(path):
    """Sorted (start us, end us, step) of the file's ProfilerStep#N slices."""
    out = []
    for ev in _events(path):
        if not isinstance(ev, dict) or ev.get("ph") != "X":
            continue
        m = STEP_RE.match(str(ev.get("name", "")))
        ts, dur = finite_num(ev.get("ts")), finite_num(ev.get("dur"))
        if m and ts is not None and dur is not None:
            out.append((ts, ts + dur, int(m.group(1))))
    out.sort()
    return out


class _Columns:
    def __init__(self):
        self.c = {k: [] for k in COLUMNS}
        self.n = 0

    def add(self, row):
        for k, v in zip(COLUMNS, row):
            self.c[k].append(v)
        self.n += 1


def export_file(pa, pq, path, out_path, schema, base_ns, pf):
    steps = _steps(path)
    starts = [s[0] for s in steps]
    base = 0 if pf else base_ns
    writer = pq.ParquetWriter(out_path, schema, compression="zstd")
    cols = _Columns()
    count = 0

    def flush():
        nonlocal cols
        if cols.n:
            writer.write_table(pa.table(cols.c, schema=schema))
        cols = _Columns()
    try:
        for ev in _events(path):
            if not isinstance(ev, dict):
                continue
            ph = ev.get("ph")
            if ph not in ("X", "i", "I"):
                continue
            ts = finite_num(ev.get("ts"))
            if ts is None:
                continue
            dur = finite_num(ev.get("dur")) if ph == "X" else 0.0
            if dur is None or dur < 0:
                dur = 0.0
            name = str(ev.get("name", ""))
            k = bisect.bisect_right(starts, ts) - 1
            step = steps[k][2] if k >= 0 and ts < steps[k][1] else None
            if STEP_RE.match(name):
                step = int(STEP_RE.match(name).group(1))
            args = ev.get("args")
            args = args if isinstance(args, dict) else {}
            kernel = args.get("kernel")
            if ev.get("cat") == CAT_KERNEL and not isinstance(kernel, str):
                kernel = name
            cat = ev.get("cat")
            cols.add((_int(ev.get("pid")), _int(ev.get("tid")), step, name,
                      cat if isinstance(cat, str) else None,
                      base + round(ts * 1000), round(dur * 1000),
                      kernel if isinstance(kernel, str) else None,
                      _dim(args.get("grid")), _dim(args.get("block")))
                     + tuple(_int(args.get(a)) for a in INT_ARGS))
            count += 1
            if cols.n >= ROWS:
                flush()
        flush()
    finally:
        writer.close()
    return count


def cmd_export(argv):
    p = argparse.ArgumentParser(
        prog="traceprof export",
        description="Writes every event of a job (its per-rank files, or their folder) as a "
                    "Parquet dataset partitioned by rank and window (OUT/rank=R/window_id=W/), "
                    "for DuckDB, Spark, Trino and other engines: see README's \"Reading the "
                    "result\" and docs/export-queries.sql.  Needs pyarrow.")
    p.add_argument("--parquet", metavar="OUT", required=True,
                   help="the dataset's folder (created; files of the same inputs are replaced)")
    p.add_argument("files", nargs="+", metavar="FILE", help="trace files, or a folder of them")
    a = p.parse_args(argv)
    pa, pq = _pyarrow()
    files, _ = merge_inputs(a.files, "export")
    schema = pa.schema([("pid", pa.int64()), ("tid", pa.int64()), ("step", pa.int64()),
                        ("name", pa.string()), ("category", pa.string()),
                        ("start_ns", pa.int64()), ("duration_ns", pa.int64()),
                        ("kernel", pa.string()), ("grid", pa.string()), ("block", pa.string()),
                        ("bytes", pa.int64()), ("stream", pa.int64()),
                        ("correlation", pa.int64()), ("result", pa.int64())])
    total = 0
    for i, path in enumerate(files):
        pf = bool(PFTRACE_RE.search(path))
        try:
            meta = meta_of(scan(path)) if pf else TraceReader(path).head()
        except TraceError as e:
            fail(str(e), 1)
        rank, _ = rank_of(meta, path, i)
        ft = aggtable.footer_of(path) or {}
        note_cut(path, ft)
        st = ft.get("steps")
        window = st[0] if isinstance(st, list) and st and isinstance(st[0], int) else i
        base = meta.get("baseTimeNanoseconds")
        folder = os.path.join(a.parquet, "rank=%d" % rank, "window_id=%d" % window)
        os.makedirs(folder, exist_ok=True)
        stem = re.sub(r"\.(json|pftrace)(\.gz|\.zst)?$", "", os.path.basename(path))
        try:
            total += export_file(pa, pq, path, os.path.join(folder, stem + ".parquet"),
                                 schema, base if isinstance(base, int) else 0, pf)
        except TraceError as e:
            fail(str(e), 1)
    print("traceprof: %d events of %d files written to %s (Parquet, partitioned by rank and "
          "window)" % (total, len(files), a.parquet))
    return 0
