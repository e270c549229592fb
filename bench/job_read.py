#!/usr/bin/env python3
"""Reading a large job (issue 35): `traceprof summary --by rank` over
synthetic per-rank files, from the files' summary tables and from their
events; and `summary` of big single files.  bench/run's row 14 runs it and
prints its lines; it also runs alone:

    BUILD=build bench/job_read.py [RANKS [MB]]       (default 1000 ranks of 1 MB)

The files come from test/lib/gentrace.py --aggregate (the footer's table as
the library writes it, format/aggregate.c): two ranks are generated (an
ordinary one and a straggler, 5% slower steps) and copied to the others with
their rank rewritten, which costs seconds instead of minutes.  Times are wall
clock of the whole command (Python start included); memory is the command's
peak resident set (ru_maxrss of the child).  BENCH_BIG=1 adds 8 ranks of
500 MB (a quarter of an hour: generating them, reading the whole job's
events, 4 GB, for --by rank and one rank's for its summary, besides the
tables; the tables must agree with the events', test/lib/sumcmp.py).  BENCH_BIG_ONLY=1: only that; BENCH_BIG_MB: another size
than 500 (a smoke test).

The streaming read (issue 35 item 2): `summary --from-events` of one file of
BENCH_STREAM_MB MB (default 500; 100 with BENCH_QUICK=1; 0 leaves it out)
without a table (gentrace.py without --aggregate: what a torch.profiler or
Perfetto file without a footer takes), its time, MB/s and peak memory, and
the same of a file of a fifth of that size: the memory must not grow.

The readers' speed (issue 43 item 5): reader_speed, `summary --from-events`
and `export --parquet` of one 100 MB file and of the job, in MB/s, against
another checkout's command with BENCH_TP_BEFORE (BENCH_READERS=0 leaves it
out).

Prints lines `name: value` (seconds, MiB)."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TP = os.path.join(TOP, "python", "traceprof")
GEN = os.path.join(TOP, "test", "lib", "gentrace.py")
PY = sys.executable


def measure(args, out=None):
    """timed(args) in a process of its own, so that the peak is this
    command's alone; its output into the file out, if given."""
    code = ("import sys,resource,subprocess,time;o=sys.argv[1];"
            "f=open(o,'wb') if o else subprocess.DEVNULL;t=time.monotonic();"
            "r=subprocess.run(sys.argv[2:],stdout=f,stderr=subprocess.PIPE);"
            "dt=time.monotonic()-t;"
            "sys.stderr.write(r.stderr.decode(errors='replace')[-300:]) if r.returncode else None;"
            "u=resource.getrusage(resource.RUSAGE_CHILDREN);"
            "print(dt, u.ru_maxrss/1024.0, r.returncode, u.ru_utime+u.ru_stime)")
    out = subprocess.run([PY, "-c", code, out or ""] + args, stdout=subprocess.PIPE,
                         check=True).stdout
    dt, mib, rc, cpu = out.split()
    if int(rc):
        raise RuntimeError("%s failed" % " ".join(args))
    measure.cpu = float(cpu)
    return float(dt), float(mib)


_RANK_PATTERNS = [
    (re.compile(rb'"rank": 987654,'), b'"rank": %d,'),
    (re.compile(rb'"local_rank": 987654,'), b'"local_rank": %d,'),
    (re.compile(rb'"rank 987654: train'), b'"rank %d: train'),
    (re.compile(rb'"sort_index":987654\}'), b'"sort_index":%d}'),
    (re.compile(rb'"aggregate":\{"version":1,"rank":987654,'),
     b'"aggregate":{"version":1,"rank":%d,'),
]


_FOOTER = b'\n  ],\n  "traceprof": {'
_COVERS = re.compile(rb'"covers":\{[^}]*\}')


def _covers_again(data):
    """The table's covers (docs/trace-format.md) of the bytes as rewritten:
    a rank of fewer digits shortens what precedes the footer, and a table
    whose covers does not match is not used."""
    sys.path.insert(0, os.path.dirname(GEN))
    from gentrace import Digest
    at = data.rfind(_FOOTER)
    m = re.search(rb'"events":(\d+)', _COVERS.search(data, at).group(0))
    d = Digest()
    d.add(data[:at])
    cov = json.dumps(d.covers(int(m.group(1))), separators=(",", ":")).encode()
    return data[:at] + _COVERS.sub(lambda _: b'"covers":' + cov, data[at:], count=1)


def make_job(folder, ranks, mb):
    """ranks files of about mb MB each in folder; rank 1 the straggler."""
    os.makedirs(folder, exist_ok=True)
    tmpl = {}
    for kind, step_us in (("ordinary", 1000.0), ("slow", 1050.0)):
        path = os.path.join(folder, "template-%s" % kind)
        subprocess.run([PY, GEN, path, "--rank", "987654", "--world", str(ranks), "--mb",
                        str(mb), "--gpu", "--aggregate", "--step-us", str(step_us)],
                       check=True, stderr=subprocess.DEVNULL)
        with open(path, "rb") as f:
            tmpl[kind] = f.read()
        os.unlink(path)
    for r in range(ranks):
        data = tmpl["slow" if r == 1 else "ordinary"]
        for pat, rep in _RANK_PATTERNS:
            data = pat.sub(rep % r, data, count=1)
        data = _covers_again(data)
        with open(os.path.join(folder, "rank%d.trace.json" % r), "wb") as f:
            f.write(data)


def big_job(tmp):
    """8 ranks of 500 MB: summary --by rank from the tables and, the whole job,
    from the events; one rank's summary from its table and its events; each
    pair of tables compared."""
    big = os.path.join(tmp, "big")
    mb = float(os.environ.get("BENCH_BIG_MB", "500"))
    t0 = time.monotonic()
    make_job(big, 8, mb)
    size = sum(os.path.getsize(os.path.join(big, f)) for f in os.listdir(big)) / 1e6
    print("generate 8 ranks x %g MB (%.0f MB in all): %.1f s" % (mb, size, time.monotonic() - t0))
    fast, slow = os.path.join(tmp, "tables.csv"), os.path.join(tmp, "events.csv")
    dt, mib = measure([PY, TP, "summary", "--by", "rank", "--csv", "--top", "0", big], fast)
    print("summary --by rank, 8 ranks x %g MB, tables: %.2f s, %.2f CPU s, %.0f MiB"
          % (mb, dt, measure.cpu, mib))
    dt, mib = measure([PY, TP, "summary", "--by", "rank", "--csv", "--top", "0", "--from-events",
                       big], slow)
    print("summary --by rank, 8 ranks x %g MB, events (--from-events, the whole job): "
          "%.2f s, %.2f CPU s (%.1f MB per CPU second), %.0f MiB"
          % (mb, dt, measure.cpu, size / measure.cpu, mib))
    cmp = subprocess.run([PY, os.path.join(TOP, "test", "lib", "sumcmp.py"), fast, slow],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    with open(fast) as f:
        lines = f.read().splitlines()
    print("summary --by rank, 8 ranks x %g MB: tables and events %s (%d rows); %s"
          % (mb, "agree" if cmp.returncode == 0 else "DIFFER: " + cmp.stdout.strip()[:300],
             len(lines) - 1, " | ".join(lines[:3])))
    # One rank's summary by name (self times: the heaviest read; summary
    # takes one file but with --by rank), from its table and its events.
    one = os.path.join(big, "rank1.trace.json")
    dt, mib = measure([PY, TP, "summary", "--csv", "--top", "0", one], fast)
    print("summary, 1 file of %g MB, table: %.2f s, %.0f MiB" % (mb, dt, mib))
    dt, mib = measure([PY, TP, "summary", "--csv", "--top", "0", "--from-events", one], slow)
    sz = os.path.getsize(one) / 1e6
    print("summary, 1 file of %g MB, events (--from-events): %.2f s, %.2f CPU s "
          "(%.1f MB per CPU second), %.0f MiB" % (mb, dt, measure.cpu, sz / measure.cpu, mib))
    cmp = subprocess.run([PY, os.path.join(TOP, "test", "lib", "sumcmp.py"), fast, slow],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    with open(fast) as f:
        lines = f.read().splitlines()
    print("summary, 1 file of %g MB: table and events %s (%d rows); %s"
          % (mb, "agree" if cmp.returncode == 0 else "DIFFER: " + cmp.stdout.strip()[:300],
             len(lines) - 1, " | ".join(lines[:4])))


def _per_mb(args, path, mb, base):
    """`args path` measured: (seconds, seconds per MB above the start-up
    cost base, peak MiB)."""
    dt, mib = measure(args + [path])
    return dt, (dt - base) / mb, mib


def reader_shapes(tmp):
    """Issue 43 item 4: time per input MB of `summary --from-events`, flat in
    the input's size, over two shapes: one huge name (a .json.gz whose one
    event's name is 4, 8 and 16 MiB: the reader retried such a value after
    every 4 MiB chunk, 43 s for 400 MB), and many tiny events (a quarter, a
    half and one million events of 40 bytes).  Seconds per MB are counted
    above the command's start-up (its time on a file of one event)."""
    import gzip
    one = os.path.join(tmp, "one.json")
    with open(one, "w") as f:
        f.write('{"traceEvents": [{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1}]}')
    base = min(measure([PY, TP, "summary", "--from-events", one])[0] for _ in range(3))
    print("reading shapes: start-up of summary --from-events %.2f s" % base)
    for mib in (4, 8, 16):
        path = os.path.join(tmp, "name%d.json.gz" % mib)
        with gzip.open(path, "wb", compresslevel=1) as f:
            f.write(b'{"traceEvents": [{"ph":"X","name":"')
            for _ in range(mib):
                f.write(b"n" * (1 << 20))
            f.write(b'","pid":1,"tid":1,"ts":1,"dur":2}]}')
        dt, per, mem = _per_mb([PY, TP, "summary", "--from-events", "--max-value-mb", "32"],
                               path, mib * 1.048576, base)
        print("reading shapes: one name of %d MiB (.json.gz): %.2f s, %.3f s per MB, %.0f MiB"
              % (mib, dt, per, mem))
        os.unlink(path)
    for n in (250000, 500000, 1000000):
        path = os.path.join(tmp, "tiny%d.json" % n)
        with open(path, "w") as f:
            f.write('{"traceEvents": [\n')
            f.write(",\n".join('{"ph":"X","name":"a","ts":%d,"dur":1}' % i for i in range(n)))
            f.write("\n]}\n")
        mb = os.path.getsize(path) / 1e6
        dt, per, mem = _per_mb([PY, TP, "summary", "--from-events"], path, mb, base)
        print("reading shapes: %d tiny events (%.0f MB): %.2f s, %.3f s per MB, %.0f MiB"
              % (n, mb, dt, per, mem))
        os.unlink(path)


def export_speed(tmp, job, ranks, mb_one):
    """Issue 43 item 5: `export --parquet` of one file of mb_one MB and of
    the job (ranks x 1 MB), pyarrow's reading of the event lines against
    the per-event one (--json-reader python), in interleaved rounds
    (BENCH_EXPORT_ROUNDS, default 3): medians of wall time, MB per wall and
    per CPU second, and their ratio; the two datasets compared byte for
    byte."""
    import statistics
    rounds = int(os.environ.get("BENCH_EXPORT_ROUNDS", "3"))
    one = os.path.join(tmp, "export-one.trace.json")
    subprocess.run([PY, GEN, one, "--mb", str(mb_one), "--gpu", "--aggregate"], check=True,
                   stderr=subprocess.DEVNULL)
    for label, src in (("1 file of %g MB" % mb_one, one),
                       ("%d ranks x 1 MB" % ranks, job)):
        size = (os.path.getsize(src) if os.path.isfile(src) else
                sum(os.path.getsize(os.path.join(src, f)) for f in os.listdir(src))) / 1e6
        got = {"auto": [], "python": []}
        for _ in range(rounds):
            for how in ("auto", "python"):
                out = os.path.join(tmp, "export-" + how)
                shutil.rmtree(out, ignore_errors=True)
                dt, mib = measure([PY, TP, "export", "--json-reader", how, "--parquet", out, src])
                got[how].append((dt, measure.cpu, mib))
        same = _same_tree(os.path.join(tmp, "export-auto"), os.path.join(tmp, "export-python"))
        med = {h: [statistics.median(x[i] for x in got[h]) for i in range(3)] for h in got}
        for how, name in (("auto", "pyarrow's JSON reader"), ("python", "per event (before)")):
            dt, cpu, mib = med[how]
            print("export --parquet, %s, %s: %.2f s (%.1f MB/s), %.2f CPU s (%.1f MB per CPU "
                  "second), %.0f MiB; medians of %d interleaved rounds"
                  % (label, name, dt, size / dt, cpu, size / cpu, mib, rounds))
        print("export --parquet, %s: pyarrow / per event %.1fx (wall), %.1fx (CPU); datasets %s"
              % (label, med["python"][0] / med["auto"][0], med["python"][1] / med["auto"][1],
                 "byte-identical" if same else "DIFFER"))
    os.unlink(one)


def reader_speed(tmp, job, ranks, mb_one):
    """Issue 43 item 5, the readers' row: MB/s of `summary --from-events`
    (one file of mb_one MB without a table, and --by rank over the job of
    ranks x 1 MB) and of `export --parquet` (the same two inputs), in
    interleaved rounds (BENCH_READ_ROUNDS, default 3) of this tree's command
    and, with BENCH_TP_BEFORE=PATH (another checkout's python/traceprof),
    that one's: medians of wall and CPU time, MB per wall and per CPU
    second; the outputs of the two compared (CSV bytes; datasets byte for
    byte)."""
    import statistics
    rounds = int(os.environ.get("BENCH_READ_ROUNDS", "3"))
    before = os.environ.get("BENCH_TP_BEFORE")
    one = os.path.join(tmp, "read-one.trace.json")
    subprocess.run([PY, GEN, one, "--mb", str(mb_one), "--gpu"], check=True,
                   stderr=subprocess.DEVNULL)
    jobmb = sum(os.path.getsize(os.path.join(job, f)) for f in os.listdir(job)) / 1e6
    cases = [("summary --from-events, 1 file of %g MB" % mb_one, os.path.getsize(one) / 1e6,
              lambda tp, out: measure([PY, tp, "summary", "--from-events", "--csv", "--top", "0",
                                       one], out + ".csv")),
             ("summary --by rank --from-events, %d ranks x 1 MB" % ranks, jobmb,
              lambda tp, out: measure([PY, tp, "summary", "--by", "rank", "--from-events",
                                       "--csv", "--top", "0", job], out + ".csv")),
             ("export --parquet, 1 file of %g MB" % mb_one, os.path.getsize(one) / 1e6,
              lambda tp, out: (shutil.rmtree(out, ignore_errors=True),
                               measure([PY, tp, "export", "--parquet", out, one]))[1]),
             ("export --parquet, %d ranks x 1 MB" % ranks, jobmb,
              lambda tp, out: (shutil.rmtree(out, ignore_errors=True),
                               measure([PY, tp, "export", "--parquet", out, job]))[1])]
    tps = [("this", TP)] + ([("before", before)] if before else [])
    for label, size, run in cases:
        got = {h: [] for h, _ in tps}
        for _ in range(rounds):
            for how, tp in tps:
                dt, mib = run(tp, os.path.join(tmp, "read-" + how))
                got[how].append((dt, measure.cpu, mib))
        med = {h: [statistics.median(x[i] for x in got[h]) for i in range(3)] for h in got}
        for how, _ in tps:
            dt, cpu, mib = med[how]
            print("readers, %s, %s: %.2f s (%.1f MB/s), %.2f CPU s (%.1f MB per CPU second), "
                  "%.0f MiB; medians of %d interleaved rounds"
                  % (label, how, dt, size / dt, cpu, size / cpu, mib, rounds))
        if before:
            a, b = os.path.join(tmp, "read-this"), os.path.join(tmp, "read-before")
            same = _same_tree(a, b) if os.path.isdir(a) else _same_file(a + ".csv", b + ".csv")
            print("readers, %s: before / this %.2fx (wall), %.2fx (CPU); outputs %s"
                  % (label, med["before"][0] / med["this"][0], med["before"][1] / med["this"][1],
                     "identical" if same else "DIFFER"))
        for how, _ in tps:
            shutil.rmtree(os.path.join(tmp, "read-" + how), ignore_errors=True)
    os.unlink(one)


def _same_file(a, b):
    with open(a, "rb") as x, open(b, "rb") as y:
        return x.read() == y.read()


def _same_tree(a, b):
    files = lambda top: sorted(os.path.relpath(os.path.join(d, f), top)
                               for d, _, fs in os.walk(top) for f in fs)
    if files(a) != files(b):
        return False
    for f in files(a):
        with open(os.path.join(a, f), "rb") as x, open(os.path.join(b, f), "rb") as y:
            if x.read() != y.read():
                return False
    return True


def main():
    ranks = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    mb = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
    tmp = tempfile.mkdtemp(prefix="tp-jobread-")
    try:
        if os.environ.get("BENCH_BIG_ONLY") == "1":
            big_job(tmp)
            return 0
        t0 = time.monotonic()
        job = os.path.join(tmp, "job")
        make_job(job, ranks, mb)
        print("generate %d ranks x %g MB: %.1f s" % (ranks, mb, time.monotonic() - t0))
        # Memory flat in the number of ranks: the same command over a
        # tenth, and a hundredth, of the job.
        for n in sorted({max(1, ranks // 100), max(1, ranks // 10), ranks}):
            sub = os.path.join(tmp, "sub%d" % n)
            os.makedirs(sub)
            for r in range(n):
                os.link(os.path.join(job, "rank%d.trace.json" % r),
                        os.path.join(sub, "rank%d.trace.json" % r))
            dt, mib = measure([PY, TP, "summary", "--by", "rank", sub])
            print("summary --by rank, %d ranks x %g MB, tables: %.2f s, %.0f MiB" % (n, mb, dt, mib))
        n = max(1, ranks // 100)
        dt, mib = measure([PY, TP, "summary", "--by", "rank", "--from-events",
                           os.path.join(tmp, "sub%d" % n)])
        print("summary --by rank, %d ranks x %g MB, events (--from-events): %.2f s, %.0f MiB "
              "(%.1f s for all %d ranks at that rate)" % (n, mb, dt, mib, dt * ranks / n, ranks))
        if os.environ.get("BENCH_READERS", "1") == "1":
            reader_speed(tmp, job, ranks, 20 if os.environ.get("BENCH_QUICK") == "1" else 100)
        if os.environ.get("BENCH_EXPORT", "1") == "1":
            export_speed(tmp, job, ranks, 20 if os.environ.get("BENCH_QUICK") == "1" else 100)
        if os.environ.get("BENCH_SHAPES", "1") == "1":
            reader_shapes(tmp)
        stream_mb = float(os.environ.get("BENCH_STREAM_MB",
                                         "100" if os.environ.get("BENCH_QUICK") == "1" else "500"))
        if stream_mb > 0:
            shutil.rmtree(job, ignore_errors=True)
            for mb_one in sorted({stream_mb / 5, stream_mb}):
                one = os.path.join(tmp, "stream.trace.json")
                t0 = time.monotonic()
                subprocess.run([PY, GEN, one, "--mb", str(mb_one), "--gpu"], check=True,
                               stderr=subprocess.DEVNULL)
                gen = time.monotonic() - t0
                size = os.path.getsize(one) / 1e6
                dt, mib = measure([PY, TP, "summary", "--from-events", one])
                print("summary --from-events, 1 file of %.0f MB without a table (streaming): "
                      "%.2f s, %.2f CPU s (%.1f MB per CPU second), %.0f MiB (generated in %.0f s)"
                      % (size, dt, measure.cpu, size / measure.cpu, mib, gen))
                os.unlink(one)
        if os.environ.get("BENCH_BIG") == "1":
            shutil.rmtree(job, ignore_errors=True)
            big_job(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
