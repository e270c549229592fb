#!/usr/bin/env python3
"""Property test of the footer's table (issue 43): random edits of real
traces never yield a table that differs from what the events give.

    table_props.py [--examples N] TRACE... [--parts PART...]

For each trace (JSON, .json.gz, .json.zst, .pftrace), hypothesis draws
edits (an event removed, duplicated or padded with white space, the file
re-indented as json.dump(indent=2) writes it (jq's layout), with or without
events removed, joined to another trace, cut short, a byte changed inside a
sample the table's digest covers); the edited file is compressed again as
the original was.  aggtable.check() must then either refuse the table or
return one whose rows are those the events give (calls exactly, times to
within the JSON's ns rounding).  PART...: the part files of one window split
in parts (TRACEPROF_MAX_FILE_MB): hypothesis draws which of them summary is
given; with one missing, aggtable.table_paths must refuse the tables, with
one line (missing_parts) that names exactly the parts missing; with all, it
uses them.  Exit 77 without hypothesis."""

import gzip
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "python"))
try:
    from hypothesis import HealthCheck, given, settings, strategies as st
except ImportError:
    print("SKIP: no hypothesis in %s (scripts/install-deps installs it in the torch venv)"
          % sys.executable)
    sys.exit(77)

from traceprof.traces import aggtable  # noqa: E402
from traceprof.traces.pftrace import PFTRACE_RE, PftraceReader  # noqa: E402
from traceprof.traces.reader import TraceError, TraceReader, open_binary  # noqa: E402
from traceprof.traces.rowacc import EventRows  # noqa: E402


def raw(path):
    f = open_binary(path)
    try:
        return f.read()
    finally:
        f.close()


def store(path, data):
    if path.endswith(".gz"):
        with gzip.open(path, "wb") as g:
            g.write(data)
    elif path.endswith(".zst"):
        subprocess.run(["zstd", "-q", "-f", "-o", path], input=data, check=True)
    else:
        with open(path, "wb") as f:
            f.write(data)


def event_rows(path):
    """summary's rows from the events, or None when they cannot be read."""
    acc = EventRows("all", want_self=True)
    try:
        r = PftraceReader(path) if PFTRACE_RE.search(path) else TraceReader(path)
        for kind, batch, _ in r.items():
            if kind == "events":
                acc.add_batch(batch)
        return acc.finish()
    except TraceError:
        return None


def same(tab, ev):
    if ev is None or set(tab) != set(ev):
        return False
    for k, t in tab.items():
        e = ev[k]
        if t[0] != e[0]:
            return False
        # ts and dur are written to the ns (1e-3 us): each call can round.
        tol = 2e-3 * t[0] + 1e-6
        if any(abs(a - b) > tol for a, b in zip(t[1:3], e[1:3])):
            return False
    return True


def edit(data, pf, covers, other, d):
    """One edit drawn by d (hypothesis's data), of the decompressed bytes."""
    kinds = ["drop", "dup", "space", "join", "cut", "sample"]
    if not pf:
        kinds += ["indent", "indent_drop"]
    kind = d.draw(st.sampled_from(kinds), label="edit")
    end = covers["bytes"]
    if kind == "join":
        return (other + data) if d.draw(st.booleans()) else (data + other)
    if kind == "cut":
        return data[:d.draw(st.integers(0, len(data) - 1))]
    if kind == "sample":
        if not covers["samples"]:
            return data + b" "
        k = d.draw(st.integers(0, covers["samples"] - 1))
        at = k * covers["stride"] + d.draw(st.integers(0, 63))
        b = data[at] ^ d.draw(st.integers(1, 255))
        return data[:at] + bytes([b]) + data[at + 1:]
    if kind in ("indent", "indent_drop"):
        doc = json.loads(data)
        ev = doc["traceEvents"]
        if kind == "indent_drop" and ev:
            i = d.draw(st.integers(0, len(ev) - 1))
            del ev[i:i + d.draw(st.integers(1, 20))]
        return json.dumps(doc, indent=2).encode()
    # Edits of the bytes before the footer.
    if pf:
        at = d.draw(st.integers(0, end))
        if kind == "space":
            return data[:at] + b"\x00" + data[at:]
        n = d.draw(st.integers(1, 64))
        return data[:at] + data[at:at + n] * (2 if kind == "dup" else 0) + data[at + n:] \
            if kind != "drop" else data[:at] + data[min(end, at + n):]
    lines = data[:end].split(b"\n")
    first = next(i for i, ln in enumerate(lines) if ln.endswith(b'"traceEvents": [')) + 1
    if first >= len(lines):
        return data + b" "
    i = d.draw(st.integers(first, len(lines) - 1))
    if kind == "drop":
        del lines[i]
        if lines[-1].endswith(b","):  # the array's last event loses its comma
            lines[-1] = lines[-1][:-1]
    elif kind == "dup":
        ln = lines[i] if lines[i].endswith(b",") else lines[i] + b","
        lines.insert(i, ln)
    else:
        lines[i] = b" " + lines[i]
    return b"\n".join(lines) + data[end:]


_KINDS = ("", ".gz", ".zst")


def keep_edit(data, path, pf, tmp, d):
    """One edit drawn by d that leaves the events and the footer as they
    are, so that the table must be kept: the file stored again with another
    (or the same) compression, under another name, in another folder, and
    for JSON, white space or members the readers ignore after the footer.
    (the edited bytes, the path they were stored at, the edit in words)."""
    said = []
    if not pf and d.draw(st.booleans(), label="after the footer"):
        close = data.rindex(b"}")
        tail = data[close:]
        if d.draw(st.booleans(), label="a member"):
            key = d.draw(st.sampled_from(["note", "x_tool", "metadata"]))
            val = d.draw(st.one_of(st.integers(), st.text(max_size=20),
                                   st.lists(st.booleans(), max_size=4)))
            data = data[:close] + (', "%s": %s' % (key, json.dumps(val))).encode() + tail
            said.append("a member after the footer")
        ws = d.draw(st.text(alphabet=" \t\r\n", max_size=40), label="white space")
        data += ws.encode()
        said.append("%d bytes of white space at the end" % len(ws))
    ext = path[path.index(".pftrace" if pf else ".json"):]
    base = ".pftrace" if pf else ".json"
    comp = d.draw(st.sampled_from(_KINDS), label="compression")
    name = d.draw(st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-.", min_size=1,
                          max_size=24).filter(lambda s: s not in (".", "..")), label="name")
    # The name must not look like a part (.partK): a part's window is
    # checked whole (missing_parts).
    name = name.replace(".part", "_part")
    sub = d.draw(st.lists(st.sampled_from(["a", "b b", "c.json.d", "rank9"]), max_size=3),
                 label="folders")
    folder = os.path.join(tmp, "keep", *sub)
    os.makedirs(folder, exist_ok=True)
    out = os.path.join(folder, name + base + comp)
    store(out, data)
    said.append("%s stored as %s" % (ext, out[len(tmp) + 1:]))
    return data, out, ", ".join(said)


def keep_prop(path, a, data, pf, tmp, examples, counts):
    """Edits that leave the events and the footer intact (keep_edit): the
    table must be kept, and equal to the events'."""
    want = aggtable.summary_rows(a, "all")[0]

    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def prop(d):
        _, out, how = keep_edit(data, path, pf, tmp, d)
        try:
            tab, _, why = aggtable.check(out)
            assert tab is not None, "%s, %s: the table is refused: %s" % (path, how, why)
            got = aggtable.summary_rows(tab, "all")[0]
            assert got == want, "%s, %s: the table kept is not the file's" % (path, how)
            assert same(got, event_rows(out)), \
                "%s, %s: the table kept differs from the events" % (path, how)
            counts[0] += 1
        finally:
            os.unlink(out)
    prop()


def parts_prop(parts, examples):
    """The property of a window's parts (see the module's text)."""
    import re
    num = {p: int(re.search(r"\.part(\d+)", os.path.basename(p)).group(1)) for p in parts}
    n = len(parts)
    assert n >= 2 and sorted(num.values()) == list(range(1, n + 1)), parts
    counts = [0, 0]

    @settings(max_examples=min(examples, 2 ** n), deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.sets(st.sampled_from(sorted(parts)), min_size=1))
    def prop(given_parts):
        notes = []
        got = aggtable.table_paths(sorted(given_parts), notes)
        line = aggtable.missing_parts(sorted(given_parts))
        gone = sorted(num[p] for p in parts if p not in given_parts)
        if not gone:
            assert got is not None and not notes and line is None, notes
            counts[0] += 1
            return
        counts[1] += 1
        assert got is None, "a window with parts %s missing: its tables used" % gone
        said = [x for x in notes if "split into parts" in x]
        assert len(said) == 1 and said[0] == line, notes
        m = re.search(r": parts? ([0-9, .]+) of (\d+) missing", line)
        assert m and int(m.group(2)) == n, line
        named = [int(x) for x in m.group(1).split(", ") if x != "..."]
        assert named == gone[:8], (line, gone)
    prop()
    print("ok: %d choices of a window's %d parts: %d incomplete refused in one line, %d whole "
          "used" % (sum(counts), n, counts[1], counts[0]))


def main():
    argv = sys.argv[1:]
    examples = 60
    if argv[:1] == ["--examples"]:
        examples, argv = int(argv[1]), argv[2:]
    if "--parts" in argv:
        k = argv.index("--parts")
        parts_prop(argv[k + 1:], examples)
        argv = argv[:k]
    tmp = tempfile.mkdtemp()
    checked = [0, 0]
    kept = [0]
    for path in argv:
        a, ft, why = aggtable.check(path)
        assert a is not None, "%s: the writer's own table is not used: %s" % (path, why)
        assert same(aggtable.summary_rows(a, "all")[0], event_rows(path)), path
        data = raw(path)
        pf = bool(PFTRACE_RE.search(path))
        others = [p for p in argv if p != path and bool(PFTRACE_RE.search(p)) == pf]
        other = raw(others[0]) if others else data
        out = os.path.join(tmp, "edited" + path[path.index(".pftrace" if pf else ".json"):])

        @settings(max_examples=examples, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(st.data())
        def prop(d):
            new = edit(data, pf, a["covers"], other, d)
            store(out, new)
            tab, _, why2 = aggtable.check(out)
            if tab is None:
                checked[1] += 1
                return
            checked[0] += 1
            ev = event_rows(out)
            assert new == data or same(aggtable.summary_rows(tab, "all")[0], ev), \
                "%s: an edit kept a table that differs from the events" % path
        prop()
        keep_prop(path, a, data, pf, tmp, examples, kept)
    print("ok: %d edits of %d traces: %d tables refused, %d kept and equal to the events"
          % (checked[0] + checked[1], len(argv), checked[1], checked[0]))
    print("ok: %d edits of %d traces that leave the events and the footer intact "
          "(recompressed, renamed, moved, text after the footer): %d tables kept and "
          "equal to the events" % (kept[0], len(argv), kept[0]))
    # Either half not exercised is a test that cannot fail: a failure.
    if not argv or checked[1] == 0 or kept[0] == 0:
        print("FAIL: %d tables refused, %d kept: the property was not exercised both ways"
              % (checked[1], kept[0]))
        sys.exit(1)


if __name__ == "__main__":
    main()
