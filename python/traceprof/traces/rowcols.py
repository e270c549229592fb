"""summary's aggregates (rowacc.EventRows) fed from pyarrow tables of the
events (traces/lines.py) instead of one Python dict per event: the same
table, number for number, at the speed of pyarrow's JSON parser.

add_table does what EventRows.add_batch does for each event of the table,
in the same order where order changes a float: each name's total is summed
in file order (a running total, then the table's durations, through
numpy.cumsum, which adds left to right), and the complete events go to the
same SelfTimes sort with the same thread numbers and positions, so self
times are added in the same order too.  Where a table holds something the
per-event reading treats in a way a column cannot say (a null name: "None"
there, missing: ""), NotColumns is raised and the caller reads the file
again with TraceReader."""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .events import STEP_RE, selected
from .pftrace import DOCS
from .rowacc import SelfTimes, nest
from ..layout import STEP_PHASE_ARG

# Complete events whose sort records stay as numpy arrays (32 bytes each,
# 64 MiB; about 500 MB of the library's traces): a file of no more is
# sorted by numpy.lexsort, in one piece; past it the records go, a run at a
# time, to SelfTimes' sorted runs in temporary files, so that memory stays
# bounded whatever the file's size.
COL_RUN = 1 << 21
_CHUNK = 1 << 16


class NotColumns(Exception):
    """The table holds a value only the per-event reading reads as it
    should."""


class ColSelf(SelfTimes):
    """SelfTimes whose records arrive as arrays (add_arrays): the same
    sort, the same nesting (rowacc.nest), the same results in the same
    order."""

    def __init__(self):
        super().__init__()
        self.cols = []   # (thread, start, -duration, position, name id) arrays
        self.ncols = 0

    def add_arrays(self, t, ts, ndur, kid):
        seq = np.arange(self.seq, self.seq + len(ts), dtype=np.int64)
        self.seq += len(ts)
        self.cols.append((t, ts, ndur, seq, kid))
        self.ncols += len(ts)
        if self.ncols >= COL_RUN:
            self._to_run()

    def _sorted(self):
        """The buffered records as tuples, sorted, made _CHUNK at a time
        (a Python float takes 24 bytes, its double 8); the buffer emptied."""
        cols = [np.concatenate([c[i] for c in self.cols]) for i in range(5)]
        self.cols, self.ncols = [], 0
        order = np.lexsort((cols[3], cols[2], cols[1], cols[0]))
        for i in range(0, len(order), _CHUNK):
            part = order[i:i + _CHUNK]
            yield from zip(*(c[part].tolist() for c in cols))

    def _to_run(self):
        self.buf = list(self._sorted())
        self.spill()

    def results(self):
        if self.spilled or self.kept:
            if self.cols:
                self.buf = list(self._sorted())
            yield from super().results()
            return
        if self.cols:
            yield from nest(self._sorted())


def schema(by):
    """The events' fields summary --by by reads (lines.line_tables)."""
    fields = [("ph", pa.string()), ("cat", pa.string()), ("name", pa.string()),
              ("pid", pa.int64()), ("tid", pa.int64()), ("ts", pa.float64()),
              ("dur", pa.float64())]
    if by == "step":
        fields.append(("args", pa.struct([(STEP_PHASE_ARG, pa.string())])))
    return pa.schema(fields)


def _codes(col):
    """(int64 codes, unique values as Python objects) of a string column,
    null a value of its own (None)."""
    d = pc.dictionary_encode(col.combine_chunks(), null_encoding="encode")
    return d.indices.to_numpy(zero_copy_only=False).astype(np.int64), d.dictionary.to_pylist()


def _threads(t):
    """Per row, an int64 key of its (pid, tid), null distinct from every
    number, and the (str(pid), str(tid)) of each key: the per-event
    reading's thread."""
    keys = []
    for c in ("pid", "tid"):
        col = t[c].combine_chunks()
        null = col.is_null().to_numpy(zero_copy_only=False)
        v = pc.fill_null(col, 0).to_numpy(zero_copy_only=False)
        keys.append((v, null))
    both = np.stack([keys[0][0], keys[0][1].astype(np.int64), keys[1][0],
                     keys[1][1].astype(np.int64)], axis=1)
    uniq, first, inv = np.unique(both, axis=0, return_index=True, return_inverse=True)
    names = [(("None" if u[1] else str(int(u[0]))), ("None" if u[3] else str(int(u[2]))))
             for u in uniq.tolist()]
    return inv.reshape(-1), first, names


def add_table(acc, t):
    """EventRows.add_batch(acc, the events of table t), from its columns."""
    n = t.num_rows
    if not n:
        return
    acc.has_events = True
    ph = t["ph"]
    keep = pc.and_(pc.fill_null(pc.not_equal(ph, "M"), True),
                   pc.fill_null(pc.is_finite(t["ts"]), False))
    # A .pftrace's document instant (ph "i", a document's name, no
    # category) is not an event.
    doc = pc.and_(pc.and_(pc.fill_null(pc.equal(ph, "i"), False), pc.is_null(t["cat"])),
                  pc.fill_null(pc.is_in(t["name"], value_set=pa.array(list(DOCS))), False))
    t = t.filter(pc.and_(keep, pc.invert(doc)))
    if not t.num_rows:
        return
    is_x = pc.fill_null(pc.equal(t["ph"], "X"), False).to_numpy(zero_copy_only=False)
    ts_all = t["ts"].to_numpy()
    other = ts_all[~is_x]
    x = t.filter(pa.array(is_x))
    ts = ts_all[is_x]
    dur = x["dur"].to_numpy(zero_copy_only=False) if x.num_rows else np.zeros(0)
    # finite_num(dur) or 0.0, and 0.0 for a negative one (-0.0 stays).
    dur = np.where(np.isfinite(dur), dur, 0.0)
    dur = np.where(dur < 0, 0.0, dur)
    lo, hi = acc.lo, acc.hi
    if other.size:
        lo, hi = min(lo, float(other.min())), max(hi, float(other.max()))
    m = x.num_rows
    if not m:
        acc.lo, acc.hi = lo, hi
        return
    lo, hi = min(lo, float(ts.min())), max(hi, float((ts + dur).max()))
    acc.lo, acc.hi = lo, hi
    acc.complete += m
    if x["name"].null_count:
        raise NotColumns("a complete event with a null name")
    ncode, nvals = _codes(x["name"])
    ccode, cvals = _codes(x["cat"])
    pair = ncode * len(cvals) + ccode
    upair, pinv = np.unique(pair, return_inverse=True)
    pinv = pinv.reshape(-1)
    by, picked = acc.by, acc.picked
    sel_of = np.zeros(len(upair), dtype=bool)
    for i, p in enumerate(upair.tolist()):
        name, cat = nvals[p // len(cvals)], cvals[p % len(cvals)]
        try:
            s = picked[cat, name]
        except KeyError:
            s = picked[cat, name] = selected(by, cat, name)
        sel_of[i] = bool(s)
    sel = sel_of[pinv]
    acc.keyed += int(sel.sum())
    step_name = np.array([bool(STEP_RE.match(v)) for v in nvals], dtype=bool)[ncode]
    if by == "step":
        _steps(acc, x.filter(pa.array(sel)), ts[sel], dur[sel])
        kid = np.full(m, -1, dtype=np.int64)
        rest = ~sel
    else:
        kid = _rows(acc, ncode, nvals, sel, dur)
        rest = np.ones(m, dtype=bool)
    st = acc.self_times
    if st is None:
        return
    # The complete events but steps (and, --by step, the steps kept):
    # SelfTimes records, threads numbered in order of first appearance.
    rec = rest & ~step_name
    if not rec.any():
        return
    tinv, tfirst, tnames = _threads(x.filter(pa.array(rec)))
    tid_of = np.empty(len(tnames), dtype=np.int64)
    for k in np.argsort(tfirst, kind="stable").tolist():
        key = tnames[k]
        t_id = st.threads.get(key)
        if t_id is None:
            t_id = st.threads[key] = len(st.threads)
        tid_of[k] = t_id
    st.add_arrays(tid_of[tinv], ts[rec], -dur[rec], kid[rec])


def _rows(acc, ncode, nvals, sel, dur):
    """Adds the selected events to acc's rows, each name's durations summed
    after its running total in file order; the name id of each event (-1
    where not selected)."""
    kid = np.full(len(ncode), -1, dtype=np.int64)
    if not sel.any():
        return kid
    idx = np.nonzero(sel)[0]
    codes = ncode[idx]
    order = np.argsort(codes, kind="stable")
    codes_sorted = codes[order]
    cuts = np.flatnonzero(np.diff(codes_sorted)) + 1
    starts = np.concatenate(([0], cuts))
    ends = np.concatenate((cuts, [len(codes_sorted)]))
    # Names get their ids in the order of their first event, as per event.
    firsts = idx[order[starts]]
    ids, names, rows = acc.ids, acc.names, acc.rows.rows
    for g in np.argsort(firsts, kind="stable").tolist():
        a, b = int(starts[g]), int(ends[g])
        name = nvals[int(codes_sorted[a])]
        k = ids.get(name)
        if k is None:
            k = ids[name] = len(names)
            names.append(name)
        members = idx[order[a:b]]
        kid[members] = k
        d = dur[members]
        r = rows.get(name)
        if r is None:
            total = float(np.cumsum(d)[-1])
            rows[name] = [b - a, total, 0.0, float(d.min()), float(d.max())]
        else:
            r[0] += b - a
            r[1] = float(np.cumsum(np.concatenate(([r[1]], d)))[-1])
            r[3] = min(r[3], float(d.min()))
            r[4] = max(r[4], float(d.max()))
    return kid


def _steps(acc, x, ts, dur):
    """The steps (--by step) of the selected complete events x."""
    if not x.num_rows:
        return
    phase = pc.struct_field(x["args"], [0]) if "args" in x.column_names else None
    pids = [str(v) for v in x["pid"].to_pylist()]
    tids = [str(v) for v in x["tid"].to_pylist()]
    names = x["name"].to_pylist()
    phases = phase.to_pylist() if phase is not None else [None] * len(names)
    for row in zip(pids, tids, ts.tolist(), dur.tolist(), names, phases):
        acc.steps.append(row)


def finish(acc):
    """EventRows.finish(acc): each name's self times added to its row in
    the order rowacc.nest yields them (np.cumsum after the running value,
    as add_self's `+= max(0.0, s)` one by one)."""
    st = acc.self_times
    if st is None:
        return acc.rows.rows
    got = np.fromiter((v for r in st.results() for v in r), dtype=np.float64)
    kid = got[0::2].astype(np.int64)
    s = got[1::2]
    s = np.where(s > 0.0, s, 0.0)
    if not kid.size:
        return acc.rows.rows
    order = np.argsort(kid, kind="stable")
    ks, vs = kid[order], s[order]
    cuts = np.flatnonzero(np.diff(ks)) + 1
    rows, names = acc.rows.rows, acc.names
    for a, b in zip(np.concatenate(([0], cuts)).tolist(), np.concatenate((cuts, [len(ks)])).tolist()):
        r = rows[names[int(ks[a])]]
        r[2] = float(np.cumsum(np.concatenate(([r[2]], vs[a:b])))[-1])
    return rows
