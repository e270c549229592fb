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
flat in the job's size.  Needs pyarrow (pip install pyarrow).

Two readings, the same Parquet file byte for byte: a JSON file with one
event on a line (the writer's layout, docs/trace-format.md) is parsed by
pyarrow's JSON reader and its rows computed by pyarrow and numpy
(export_file_lines; a file of up to KEEP bytes of tables is parsed once);
any other file, or one with an event only Python's reading writes as it
should, event by event (export_file)."""

import argparse
import bisect
import os
import re
import shutil
import sys

from . import readopts
from ..layout import CAT_KERNEL, STEP_PREFIX
from ..traces import aggtable
from ..traces import arrow
from ..traces.cut import note_cut
from ..traces.events import STEP_RE, finite_num
from ..traces.pfmerge import meta_of, scan
from ..traces.pftrace import PFTRACE_RE, PftraceReader
from ..traces.lines import NotLines, line_tables
from ..traces.reader import TraceError, TraceReader
from ..util import fail
from .inputs import merge_inputs, rank_of

ROWS = 65536
COLUMNS = ("pid", "tid", "step", "name", "category", "start_ns", "duration_ns", "kernel",
           "grid", "block", "bytes", "stream", "correlation", "result")
INT_ARGS = ("bytes", "stream", "correlation", "result")


def _pyarrow():
    """pyarrow and pyarrow.parquet, without pandas (traces/arrow.py)."""
    try:
        pa = arrow.load("pyarrow.parquet")
    except ImportError:
        fail("export --parquet needs pyarrow, which this Python (%s) does not have: "
             "pip install pyarrow" % sys.executable)
    return pa, pa.parquet


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
            # Every integer column within int64 (null past it): a step
            # number, a time or a duration that big is no real one, and
            # pyarrow refuses it with an OverflowError.
            cols.add((_int(ev.get("pid")), _int(ev.get("tid")), _int(step), name,
                      cat if isinstance(cat, str) else None,
                      _int(base + round(ts * 1000)), _int(round(dur * 1000)),
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


# The events' fields the columnar reading asks pyarrow for (traces/lines.py).
def _in_schema(pa):
    return pa.schema([
        ("ph", pa.string()), ("cat", pa.string()), ("name", pa.string()),
        ("pid", pa.int64()), ("tid", pa.int64()), ("ts", pa.float64()), ("dur", pa.float64()),
        ("args", pa.struct([("kernel", pa.string()), ("grid", pa.list_(pa.int64())),
                            ("block", pa.list_(pa.int64()))]
                           + [(k, pa.int64()) for k in INT_ARGS]))])


# The tables of a file's first reading kept for its second, at most (in
# bytes of Arrow memory): a file of a few MB is parsed once.
KEEP = 16 << 20
# Files larger than this on disk have only their steps' lines parsed by the
# first reading (lines.line_tables' pick): parsing every event twice was
# half of export's time for a 100 MB file.
PICK_FROM = 8 << 20


def _line_steps(pa, pc, path, insch):
    """(_steps(path), the file's tables or None) from the events' tables
    (lines.NotLines when the file is not one event per line); the tables
    are kept when they fit in KEEP."""
    out = []
    kept, size = [], 0
    pick = None
    try:
        if os.path.getsize(path) > PICK_FROM:
            # Too large to keep: the steps' lines only are parsed (the
            # second reading parses all).
            pick, kept = STEP_PREFIX.encode(), None
    except OSError:
        pass
    def steps_of(tabs):
        # Names that can match STEP_RE (a few per file), matched in Python;
        # the tables taken together (pyarrow's per-call cost showed).
        t = pa.concat_tables(tabs)
        m = pc.and_(pc.and_(pc.equal(t["ph"], "X"), pc.is_finite(t["ts"])),
                    pc.and_(pc.is_finite(t["dur"]), pc.starts_with(t["name"], STEP_PREFIX)))
        t = t.filter(pc.fill_null(m, False))
        for name, ts, dur in zip(*(t[c].to_pylist() for c in ("name", "ts", "dur"))):
            sm = STEP_RE.match(name) if name is not None else None
            if sm:
                out.append((ts, ts + dur, int(sm.group(1))))

    pending, npend = [], 0
    for t in line_tables(path, pa, insch, pick=pick):
        if kept is not None:
            size += t.nbytes
            kept = kept + [t] if size <= KEEP else None
        pending.append(t)
        npend += t.nbytes
        if npend >= KEEP:
            steps_of(pending)
            pending, npend = [], 0
    if pending:
        steps_of(pending)
    out.sort()
    return out, kept


def _name_steps(pa, pc, names):
    """The step number of each name that is a ProfilerStep#N (STEP_RE, as
    the per-event reading matches it), null for the others: matched once
    per distinct name."""
    d = pc.dictionary_encode(names).combine_chunks()
    per = [int(m.group(1)) if m else None
           for m in (STEP_RE.match(n) for n in d.dictionary.to_pylist())]
    return pc.take(pa.array(per, pa.int64()), d.indices)


def _dims(pa, pc, v):
    """_dim of a list<int64> column: "x,y,z", null for a missing, empty or
    partly null list."""
    s = pc.binary_join(pc.cast(v, pa.list_(pa.string())), ",")
    return pc.if_else(pc.fill_null(pc.greater(pc.list_value_length(v), 0), False), s,
                      pa.scalar(None, pa.string()))


def _ns(np, x):
    """round(x * 1000) of each finite double, as int64 (Python's round: to
    nearest, ties to even); None when one is past int64."""
    v = np.rint(x * 1000.0)
    if v.size and not (-2.0 ** 62 < v.min() and v.max() < 2.0 ** 62):
        return None
    return v.astype(np.int64)


def _line_rows(pa, pc, np, t, steps, starts, base, schema):
    """The exported rows of one table of events, as export_file's loop
    makes them; None when one differs in a way only the per-event reading
    writes (a null name, a time past int64)."""
    ph = t["ph"]
    keep = pc.and_(pc.is_in(ph, value_set=pa.array(["X", "i", "I"])), pc.is_finite(t["ts"]))
    t = t.filter(pc.fill_null(keep, False))
    if t["name"].null_count:
        return None   # str(None) or "" per event: its own reading says which
    ts = t["ts"].to_numpy()
    dur = pc.if_else(pc.equal(t["ph"], "X"), t["dur"], 0.0)
    dur = pc.if_else(pc.fill_null(pc.and_(pc.is_finite(dur), pc.greater_equal(dur, 0.0)),
                                  False), dur, 0.0).to_numpy()
    start_ns, dur_ns = _ns(np, ts), _ns(np, dur)
    if start_ns is None or dur_ns is None or (
            start_ns.size and not (-(1 << 62) < base + int(start_ns.min()) and
                                   base + int(start_ns.max()) < 1 << 62)):
        return None
    k = np.searchsorted(np.asarray(starts, dtype=np.float64), ts, side="right") - 1
    ends = np.asarray([s[1] for s in steps] or [0.0], dtype=np.float64)
    nums = np.asarray([s[2] for s in steps] or [0], dtype=np.int64)
    kk = np.maximum(k, 0)
    inside = (k >= 0) & (ts < ends[kk]) if steps else np.zeros(len(ts), dtype=bool)
    step = pa.array(nums[kk], pa.int64(), mask=~inside)
    by_name = _name_steps(pa, pc, t["name"])
    step = pc.if_else(pc.is_null(by_name), step, by_name)
    args = t["args"].combine_chunks()
    cat = t["cat"]
    kernel = args.field("kernel")
    kernel = pc.if_else(pc.fill_null(pc.and_(pc.equal(cat, CAT_KERNEL), pc.is_null(kernel)),
                                     False), t["name"], kernel)
    cols = [t["pid"], t["tid"], step, t["name"], cat, pa.array(start_ns + base),
            pa.array(dur_ns), kernel, _dims(pa, pc, args.field("grid")),
            _dims(pa, pc, args.field("block"))] + [args.field(a) for a in INT_ARGS]
    return pa.table([pa.chunked_array([c]) if not isinstance(c, pa.ChunkedArray) else c
                     for c in cols], schema=schema)


def export_file_lines(pa, pq, path, out_path, schema, base_ns):
    """export_file of a JSON file in the one-event-per-line layout, read by
    pyarrow's JSON reader (traces/lines.py) and turned into rows by pyarrow
    and numpy, the same rows in the same row groups; None when the file is
    not in that layout (lines.NotLines) or has an event only the per-event
    reading writes as it should (then nothing of out_path is left)."""
    import numpy as np
    import pyarrow.compute as pc
    insch = _in_schema(pa)
    try:
        steps, kept = _line_steps(pa, pc, path, insch)
    except (NotLines, pa.ArrowException, UnicodeDecodeError, OverflowError):
        return None
    starts = [s[0] for s in steps]
    writer = pq.ParquetWriter(out_path, schema, compression="zstd")
    count, pending, npend = 0, [], 0
    ok = False
    try:
        for t in kept if kept is not None else line_tables(path, pa, insch):
            rows = _line_rows(pa, pc, np, t, steps, starts, base_ns, schema)
            if rows is None:
                return None
            count += rows.num_rows
            pending.append(rows)
            npend += rows.num_rows
            if npend >= ROWS:
                whole = pa.concat_tables(pending).combine_chunks()
                at = 0
                while npend - at >= ROWS:
                    writer.write_table(whole.slice(at, ROWS))
                    at += ROWS
                pending, npend = [whole.slice(at)], npend - at
        if npend:
            writer.write_table(pa.concat_tables(pending).combine_chunks())
        ok = True
    except (NotLines, pa.ArrowException, UnicodeDecodeError, OverflowError):
        # A value pyarrow's computing refuses (or a name that is not UTF-8,
        # which its JSON reader lets through): the per-event reading's turn.
        return None
    finally:
        writer.close()
        if not ok:
            os.unlink(out_path)
    return count


def cmd_export(argv):
    p = argparse.ArgumentParser(
        prog="traceprof export",
        description="Writes every event of a job (its per-rank files, or their folder) as a "
                    "Parquet dataset partitioned by rank and window (OUT/rank=R/window_id=W/), "
                    "for DuckDB, Spark, Trino and other engines: see README's \"Reading the "
                    "result\" and docs/export-queries.sql.  Needs pyarrow.")
    p.add_argument("--parquet", metavar="OUT", required=True,
                   help="the dataset's folder (created; an existing one is refused unless "
                        "--overwrite is given)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace OUT when it exists (everything in it is removed first)")
    p.add_argument("files", nargs="+", metavar="FILE", help="trace files, or a folder of them")
    p.add_argument("--json-reader", choices=["auto", "python"], default="auto",
                   help="auto (default): JSON files with one event on a line (as traceprof "
                        "writes them) are parsed by pyarrow's JSON reader, others event by "
                        "event in Python; python: every file event by event (slower, the "
                        "same output)")
    readopts.add(p)
    a = p.parse_args(argv)
    readopts.apply(p, a)
    pa, pq = _pyarrow()
    files, _ = merge_inputs(a.files, "export")
    _make_out(a.parquet, a.overwrite)
    try:
        total = _export_all(a, pa, pq, files)
    except SystemExit:
        # A failed export leaves no dataset: half of one would be read as
        # the whole, and the next run would need --overwrite.
        shutil.rmtree(a.parquet, ignore_errors=True)
        raise
    rows = _read_back(pa, a.parquet, total)
    print("traceprof: %d events of %d files written to %s (Parquet, partitioned by rank and "
          "window)" % (rows, len(files), a.parquet))
    return 0


def _export_all(a, pa, pq, files):
    """Writes every file's events into a.parquet; the rows written."""
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
        out = _out_file(a.parquet, rank, window, i, path)
        base = base if isinstance(base, int) else 0
        try:
            n = None if pf or a.json_reader == "python" else \
                export_file_lines(pa, pq, path, out, schema, base)
            total += export_file(pa, pq, path, out, schema, base, pf) if n is None else n
        except TraceError as e:
            fail(str(e), 1)
        except OSError as e:
            fail("%s: cannot write its events to %s: %s" % (
                path, a.parquet, e.strerror or e), 1)
    return total


def _make_out(out, overwrite):
    """Creates the dataset's folder, or fails in one line: an existing one is
    kept unless overwrite (as pyarrow's dataset writer and DuckDB's COPY
    refuse a non-empty target by default)."""
    if os.path.lexists(out):
        if not overwrite:
            fail("%s exists: give --overwrite to replace it, or name a new folder" % out)
        if not os.path.isdir(out) or os.path.islink(out):
            fail("%s exists and is not a folder: --overwrite replaces only a dataset's "
                 "folder; remove it or name a new one" % out)
        try:
            shutil.rmtree(out)
        except OSError as e:
            fail("%s: cannot remove it for --overwrite: %s" % (out, e.strerror or e))
    try:
        os.makedirs(out)
    except OSError as e:
        fail("cannot create the dataset's folder %s: %s (name a folder that can be "
             "created)" % (out, e.strerror or e))


def _out_file(out, rank, window, i, path):
    """The Parquet file of the i-th input: its name starts with i, so that
    inputs of the same name (from other folders, runs or hosts) never
    replace one another in rank=R/window_id=W/."""
    folder = os.path.join(out, "rank=%d" % rank, "window_id=%d" % window)
    os.makedirs(folder, exist_ok=True)
    stem = re.sub(r"\.(json|pftrace)(\.gz|\.zst)?$", "", os.path.basename(path))
    return os.path.join(folder, "%05d-%s.parquet" % (i, stem))


def _read_back(pa, out, written):
    """The rows the dataset at out holds, read back from its files' footers;
    fails in one line when they are not the rows written."""
    import pyarrow.dataset as ds
    try:
        rows = ds.dataset(out, format="parquet", partitioning="hive").count_rows()
    except (OSError, pa.ArrowException) as e:
        fail("%s: cannot read the dataset back: %s" % (out, e), 1)
    if rows != written:
        fail("%s: %d events were written but the dataset holds %d rows (something else "
             "wrote into it meanwhile?)" % (out, written, rows), 1)
    return rows
