"""summary's rows, accumulated in bounded memory (issue 35 item 2).

Rows is the one bookkeeping of summary's table {name: [calls, total, self,
min, max]} (us): the files' own tables (aggtable.summary_rows) and the
events (EventRows) both add to it, so the two paths cannot count apart.

EventRows reads events as they stream and keeps running aggregates only:
calls, total, min and max per name as each event arrives, the span, and the
steps (one per step, not per event).  Self time (a name's time less that of
the events nested in it on the same thread) needs each thread's events in
start order, longest first on ties, nesting as a call stack.  The files do
not come in that order: the library writes a host call when it ends (a
parent after its children), CUPTI's activity records arrive per buffer,
windows are written as they fill, and other tools' orders are their own.  So
the (thread, start, -duration, file position, name) of every complete event
is sorted in runs of RUN events; a run that fills is spilled to an unnamed
temporary file (32 bytes an event) and the runs are merged (heapq.merge) at
the end, the last run from memory.  The file position breaks exact ties as
the earlier in-memory sort (a stable sort in file order) did, so the same
event is the parent of its identical twin.  The stack that nests each
thread's merged events is as deep as its nesting, whatever the file's size.

Resident memory is one run plus a small buffer per spilled run; a file of
at most RUN complete events is sorted in memory with no temporary file.
Where no temporary file can be written, one line says so and the runs stay
in memory: the same table, in memory that grows with the file."""

import heapq
import math
import struct
import tempfile

from .events import STEP_RE, finite_num, selected
from .pftrace import DOCS
from ..layout import STEP_PHASE_ARG
from ..util import err

# Complete events sorted in memory at once: about 170 bytes each as Python
# tuples (6 MB), and 1 MB of temporary file per run once spilled; a 500 MB
# trace of the library has about 2 million, 64 runs, merged with 32 KiB
# read back from each at a time.
RUN = 1 << 15
# Records read back at once from each spilled run while merging.
_READ = 1024
_REC = struct.Struct("<iddqi")  # thread, start, -duration, position, name id


class Rows:
    """{name: [calls, total, self, min, max]} (us)."""

    def __init__(self):
        self.rows = {}

    def add(self, name, calls, total, self_, lo, hi):
        r = self.rows.get(name)
        if r is None:
            self.rows[name] = [calls, total, max(0.0, self_), lo, hi]
            return
        r[0] += calls
        r[1] += total
        r[2] += max(0.0, self_)
        if lo < r[3]:
            r[3] = lo
        if hi > r[4]:
            r[4] = hi

    def add_self(self, name, self_):
        self.rows[name][2] += max(0.0, self_)


def _run_records(f):
    """The records of one spilled run, in order."""
    f.seek(0)
    while True:
        data = f.read(_REC.size * _READ)
        if not data:
            return
        yield from _REC.iter_unpack(data)


def nest(merged):
    """Yields (name id, self time) per record with a name id >= 0 of
    merged, the (thread, start, -duration, position, name id) records in
    sorted order, nesting each thread's events as a call stack."""
    thread = None
    stack = []  # [start, end, dur, self, name id], innermost last
    for t, ts, ndur, _, kid in merged:
        dur = -ndur
        if t != thread:
            for x in stack:
                if x[4] >= 0:
                    yield x[4], x[3]
            stack = []
            thread = t
        # The enclosing events that ended by ts are done (a
        # zero-length event at the very start of a zero-length one
        # at the same time stays its child, as before).
        while stack:
            top = stack[-1]
            if top[1] <= ts + 1e-9 and not (dur == 0 and top[1] == ts and top[0] == ts):
                stack.pop()
                if top[4] >= 0:
                    yield top[4], top[3]
            else:
                break
        end = ts + dur
        if stack:
            top = stack[-1]
            top[3] -= max(0.0, min(end, top[1]) - ts)
        stack.append([ts, end, dur, dur, kid])
    for x in stack:
        if x[4] >= 0:
            yield x[4], x[3]


class SelfTimes:
    """Self time per name id of the complete events added, whatever their
    order in the file (see the module's comment)."""

    def __init__(self, run=None):
        self.run = run or RUN
        self.buf = []
        self.spilled = []  # temporary files, one sorted run each
        self.kept = []     # sorted runs kept in memory (no temporary file)
        self.seq = 0
        self.threads = {}

    def add(self, thread, ts, dur, kid):
        """One complete event (EventRows.add_batch does the same inline)."""
        t = self.threads.get(thread)
        if t is None:
            t = self.threads[thread] = len(self.threads)
        self.buf.append((t, ts, -dur, self.seq, kid))
        self.seq += 1
        if len(self.buf) >= self.run:
            self.spill()

    def spill(self):
        """Sorts the run and writes it to a temporary file.  Where no
        temporary file can be written (TMPDIR missing, read-only or full),
        says so once and keeps the events in memory from then on: the
        summary is the same, its memory grows with the file."""
        self.buf.sort()
        f = None
        try:
            f = tempfile.TemporaryFile(prefix="traceprof-summary-")
            pack = _REC.pack
            for i in range(0, len(self.buf), _READ):
                f.write(b"".join(pack(*r) for r in self.buf[i:i + _READ]))
            f.flush()
        except OSError as e:
            if f is not None:
                f.close()
            err("cannot write a temporary file for the sort of the events (%s; TMPDIR=%s): "
                "keeping them in memory instead" % (e.strerror or e, tempfile.gettempdir()))
            self.run = math.inf
            self.kept.append(self.buf)
            self.buf = []
            return
        self.buf = []
        self.spilled.append(f)

    def results(self):
        """Yields (name id, self time) per event with a name id >= 0."""
        try:
            self.buf.sort()
            runs = [_run_records(f) for f in self.spilled] + self.kept
            if self.buf:
                runs.append(self.buf)
            merged = runs[0] if len(runs) == 1 else heapq.merge(*runs)
            yield from nest(merged)
        finally:
            self.buf = []
            self.kept = []
            for f in self.spilled:
                f.close()
            self.spilled = []


class EventRows:
    """summary's aggregates of a stream of event dicts (add_batch), in
    memory bounded by the names, the steps and one sort run."""

    def __init__(self, by, want_self=True):
        self.by = by
        self.rows = Rows()
        self.names = []     # name id -> name
        self.ids = {}       # name -> name id
        self.self_times = SelfTimes() if want_self else None
        self.steps = []     # (pid, tid, ts, dur, key, phase) of the steps (--by step)
        self.lo, self.hi = math.inf, -math.inf
        self.has_events = False
        self.complete = 0   # complete events with a numeric ts
        self.keyed = 0      # of which selected
        self.picked = {}    # (category, name) -> selected(by, ...)

    def add_batch(self, batch):
        self.has_events = True
        by = self.by
        add_row = self.rows.add
        st = self.self_times
        buf = st.buf if st is not None else None
        threads = st.threads if st is not None else None
        ids, names = self.ids, self.names
        picked = self.picked
        lo, hi = self.lo, self.hi
        complete = keyed = 0
        for ev in batch:
            if not isinstance(ev, dict):
                continue
            ph = ev.get("ph")
            if ph == "M":
                continue
            ts = ev.get("ts")
            # A finite float (the common case) as it is; anything else
            # through finite_num (ints, NaN, infinities, not numbers).
            if ts.__class__ is not float or ts - ts != 0.0:
                ts = finite_num(ts)
                if ts is None:
                    continue
            if ph != "X":
                if ph == "i" and ev.get("name") in DOCS and ev.get("cat") is None:
                    continue  # a .pftrace's document instant, not an event
                if ts < lo:
                    lo = ts
                if ts > hi:
                    hi = ts
                continue
            dur = ev.get("dur")
            if dur.__class__ is not float or dur - dur != 0.0:
                dur = finite_num(dur)
                if dur is None:
                    dur = 0.0
            if dur < 0:
                dur = 0.0
            if ts < lo:
                lo = ts
            if ts + dur > hi:
                hi = ts + dur
            complete += 1
            name = ev.get("name", "")
            if name.__class__ is not str:
                name = str(name)
            cat = ev.get("cat")
            try:
                sel = picked[cat, name]
            except KeyError:
                sel = picked[cat, name] = selected(by, cat, name)
            except TypeError:  # a category that is not a string or number
                sel = selected(by, cat, name)
            kid = -1
            if sel:
                keyed += 1
                if by == "step":
                    args = ev.get("args")
                    phase = args.get(STEP_PHASE_ARG) if args.__class__ is dict else None
                    self.steps.append((str(ev.get("pid")), str(ev.get("tid")), ts, dur, name,
                                       phase if phase.__class__ is str else None))
                    continue
                kid = ids.get(name)
                if kid is None:
                    kid = ids[name] = len(names)
                    names.append(name)
                add_row(name, 1, dur, 0.0, dur, dur)
            if buf is not None and not STEP_RE.match(name):
                # Steps stay out of the nesting, as in the files' tables
                # (format/aggregate.c): no parent, no child for self time.
                thread = (str(ev.get("pid")), str(ev.get("tid")))
                t = threads.get(thread)
                if t is None:
                    t = threads[thread] = len(threads)
                buf.append((t, ts, -dur, st.seq, kid))
                st.seq += 1
                if len(buf) >= st.run:
                    st.spill()
                    buf = st.buf
        self.lo, self.hi = lo, hi
        self.complete += complete
        self.keyed += keyed

    def window(self):
        return self.hi - self.lo if self.hi > self.lo else 0.0

    def close(self):
        """Lets go of the spilled runs (a reading given up half way)."""
        st = self.self_times
        if st is not None:
            for f in st.spilled:
                f.close()
            st.spilled, st.buf, st.kept = [], [], []

    def finish(self):
        """{name: [calls, total, self, min, max]} (us), self time included."""
        if self.self_times is not None:
            names = self.names
            add_self = self.rows.add_self
            for kid, s in self.self_times.results():
                add_self(names[kid], s)
        return self.rows.rows
