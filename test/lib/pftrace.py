"""Reading a .pftrace for the tests: decoded by the real `protoc` with
Perfetto's published schema (../shared/clients/perfetto_trace.proto, or
$TP_PERFETTO_PROTO), then the text format parsed here into nested dicts.

    python3 pftrace.py FILE            prints a summary (slices by name, ...)
    python3 pftrace.py --compare FILE.pftrace FILE.json
                                       the same run's slice names and counts
                                       must be equal; each track balanced

Exit 77 (SKIP) when protoc or the schema is missing."""
import collections
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))


def schema():
    p = os.environ.get("TP_PERFETTO_PROTO") or os.path.join(
        os.path.dirname(TOP), "shared", "clients", "perfetto_trace.proto")
    return p if os.path.exists(p) else None


def skip_reason():
    if not shutil.which("protoc"):
        return "protoc not installed (Debian: protobuf-compiler)"
    if not schema():
        return "Perfetto's schema not found (../shared/clients/perfetto_trace.proto or $TP_PERFETTO_PROTO)"
    return None


def _unquote(s):
    """A text-format string literal (C escapes, octal bytes) to str."""
    assert s[0] == '"' and s[-1] == '"', s
    out = bytearray()
    i, body = 0, s[1:-1]
    while i < len(body):
        c = body[i]
        if c != "\\":
            out += c.encode()
            i += 1
            continue
        n = body[i + 1]
        if n in "01234567":
            j = i + 1
            while j < len(body) and j < i + 4 and body[j] in "01234567":
                j += 1
            out.append(int(body[i + 1:j], 8))
            i = j
            continue
        out += {"n": b"\n", "t": b"\t", "r": b"\r", '"': b'"', "'": b"'", "\\": b"\\"}.get(
            n, n.encode())
        i += 2
    return out.decode("utf-8", "replace")


def _value(v):
    if v.startswith('"'):
        return _unquote(v)
    try:
        return int(v)
    except ValueError:
        pass
    try:
        return float(v)
    except ValueError:
        return v  # an enum name, true/false


def parse_text(text):
    """protoc's text format (one field per line) to a dict of lists."""
    root = collections.defaultdict(list)
    stack = [root]
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line == "}":
            stack.pop()
        elif line.endswith("{"):
            d = collections.defaultdict(list)
            stack[-1][line[:-1].strip()].append(d)
            stack.append(d)
        else:
            k, _, v = line.partition(":")
            stack[-1][k.strip()].append(_value(v.strip()))
    assert len(stack) == 1, "unbalanced text format"
    return root


def decompress(path):
    data = open(path, "rb").read()
    if path.endswith(".zst"):
        data = subprocess.run(["zstd", "-dc"], input=data, stdout=subprocess.PIPE, check=True).stdout
    elif path.endswith(".gz"):
        import gzip
        data = gzip.decompress(data)
    return data


def decode(path):
    proto = schema()
    r = subprocess.run(["protoc", "--decode=perfetto.protos.Trace", "-I", os.path.dirname(proto),
                        proto], input=decompress(path), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    if r.returncode != 0:
        raise SystemExit("protoc could not decode %s: %s" % (path, r.stderr.decode()[:500]))
    # A string field must be UTF-8: protoc (as protobuf's other parsers)
    # logs an error for each one that is not, and protobuf's libraries hand
    # it over as bytes.
    bad = [l for l in r.stderr.decode("utf-8", "replace").splitlines() if "invalid UTF-8" in l]
    if bad:
        raise SystemExit("%s: %d string fields of invalid UTF-8, e.g. %s" % (path, len(bad), bad[0]))
    return parse_text(r.stdout.decode("utf-8", "replace"))


def one(d, k, default=None):
    v = d.get(k)
    return v[0] if v else default


def timestamps(trace):
    """Each packet's absolute time in ns: a packet's timestamp is in its
    timestamp_clock_id, else in the default clock of trace_packet_defaults;
    an incremental clock (a ClockSnapshot's is_incremental) adds deltas to
    its value from the snapshot.  Clocks are taken as one time line (the
    writer ties its incremental clock to CLOCK_MONOTONIC)."""
    default, inc, out = None, {}, []
    for p in trace.get("packet", []):
        for snap in p.get("clock_snapshot", []):
            for c in snap.get("clocks", []):
                if one(c, "is_incremental"):
                    inc[one(c, "clock_id")] = one(c, "timestamp", 0)
        for d in p.get("trace_packet_defaults", []):
            default = one(d, "timestamp_clock_id", default)
        ts = one(p, "timestamp")
        clock = one(p, "timestamp_clock_id", default)
        if ts is not None and clock in inc:
            inc[clock] += ts
            ts = inc[clock]
        out.append(ts or 0)
    return out


def events(trace):
    """(type, name, category, track_uuid, timestamp, packet) for each track event, names
    resolved through the interned data (one sequence: the state as it goes)."""
    names, cats, out = {}, {}, []
    for p, ts in zip(trace.get("packet", []), timestamps(trace)):
        if one(p, "sequence_flags", 0) & 1:  # SEQ_INCREMENTAL_STATE_CLEARED
            names, cats = {}, {}
        for inter in p.get("interned_data", []):
            for n in inter.get("event_names", []):
                names[one(n, "iid")] = one(n, "name")
            for n in inter.get("event_categories", []):
                cats[one(n, "iid")] = one(n, "name")
        for te in p.get("track_event", []):
            name = one(te, "name")
            if name is None and one(te, "name_iid") is not None:
                name = names.get(one(te, "name_iid"), "<iid %s unresolved>" % one(te, "name_iid"))
            cat = one(te, "categories")
            if cat is None and te.get("category_iids"):
                cat = cats.get(te["category_iids"][0])
            out.append((one(te, "type"), name, cat, one(te, "track_uuid"), ts, te))
    return out


def tracks(trace):
    """uuid -> descriptor dict."""
    t = {}
    for p in trace.get("packet", []):
        for d in p.get("track_descriptor", []):
            t[one(d, "uuid")] = d
    return t


def summary(trace):
    ev = events(trace)
    slices = collections.Counter(n for ty, n, *_ in ev if ty in ("TYPE_SLICE_BEGIN",))
    # The writer's documents (footer, header, devices, frames, name) are
    # instants without a category; events always have one.
    instants = collections.Counter(n for ty, n, c, *_ in ev if ty == "TYPE_INSTANT" and c)
    counters = len([1 for ty, *_ in ev if ty == "TYPE_COUNTER"])
    return slices, instants, counters


def check_balance(trace):
    """Each track's begins and ends balance and never go below zero in time order."""
    per = collections.defaultdict(list)
    for i, (ty, n, c, tr, ts, te) in enumerate(events(trace)):
        if ty in ("TYPE_SLICE_BEGIN", "TYPE_SLICE_END"):
            per[tr].append((ts, i, ty))
    for tr, xs in per.items():
        depth = 0
        for ts, i, ty in sorted(xs):
            depth += 1 if ty == "TYPE_SLICE_BEGIN" else -1
            if depth < 0:
                raise SystemExit("track %s: an end before its begin at ts %s" % (tr, ts))
        if depth:
            raise SystemExit("track %s: %d slices never end" % (tr, depth))


def json_summary(path):
    d = json.loads(decompress(path))
    ev = d["traceEvents"]
    slices = collections.Counter(e["name"] for e in ev if e.get("ph") == "X")
    instants = collections.Counter(e["name"] for e in ev if e.get("ph") == "i")
    counters = len([1 for e in ev if e.get("ph") == "C"])
    return slices, instants, counters


def compare(pf, js):
    t = decode(pf)
    check_balance(t)
    a, b = summary(t), json_summary(js)
    for what, x, y in (("slices", a[0], b[0]), ("instants", a[1], b[1])):
        if x != y:
            diff = {k: (x.get(k, 0), y.get(k, 0)) for k in set(x) | set(y) if x.get(k, 0) != y.get(k, 0)}
            raise SystemExit("%s differ (name: pftrace, json): %s" % (what, dict(list(diff.items())[:10])))
    if a[2] != b[2]:
        raise SystemExit("counter samples differ: pftrace %d, json %d" % (a[2], b[2]))
    print("same: %d slices (%d names), %d instants, %d counter samples" % (
        sum(a[0].values()), len(a[0]), sum(a[1].values()), a[2]))


def main(argv):
    why = skip_reason()
    if why:
        print("SKIP: " + why)
        return 77
    if argv[:1] == ["--compare"]:
        compare(argv[1], argv[2])
        return 0
    t = decode(argv[0])
    check_balance(t)
    s, i, c = summary(t)
    print("slices %d (%d names), instants %d, counter samples %d, tracks %d" % (
        sum(s.values()), len(s), sum(i.values()), c, len(tracks(t))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
