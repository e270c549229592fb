"""`traceprof merge`: the per-rank trace files of one job into one
timeline (the command line, the inputs' metadata, progress; the writing
is mergewrite.py's)."""

import argparse
import os
import sys
import time

from . import readopts
from .inputs import merge_inputs, rank_of
from ..traces.cut import note_cut
from ..traces.mergewrite import write_merged
from ..traces.output import open_output
from ..traces.pftrace import PFTRACE_RE
from ..traces.pfmerge import meta_of, scan, write_pftrace
from ..traces.reader import TraceError
from ..traces.tail import load_meta
from ..util import err, fail, human_bytes


class Progress:
    def __init__(self, total, label):
        self.total = max(total, 1)
        self.done = 0
        self.label = label
        self.start = time.monotonic()
        self.last = 0.0
        self.on = sys.stderr.isatty() and total >= 64 << 20

    def __call__(self, n):
        self.done += n
        if not self.on:
            return
        now = time.monotonic()
        if now - self.last < 0.5:
            return
        self.last = now
        rate = self.done / max(now - self.start, 1e-6) / 1e6
        sys.stderr.write("\r%s: %3d%% (%d/%d MB, %.0f MB/s)   " % (
            self.label, min(100, self.done * 100 // self.total), self.done >> 20,
            self.total >> 20, rate))
        sys.stderr.flush()

    def finish(self):
        if self.on:
            sys.stderr.write("\r" + " " * 60 + "\r")
            sys.stderr.flush()


def cmd_merge(argv):
    p = argparse.ArgumentParser(
        prog="traceprof merge",
        description="Merges the per-rank trace files of one job (traceprof's, or Chrome/"
                    "Kineto JSON from other profilers such as PyTorch's) into one timeline: "
                    "one process group per rank, sorted by rank, timestamps aligned through "
                    "each file's baseTimeNanoseconds.  Perfetto files (.pftrace) merge into "
                    "one .pftrace, aligned through their REALTIME clock.  Streams: memory "
                    "does not grow with the input size.")
    p.add_argument("-o", "--output", default=None,
                   help="output file (.json, .json.gz or .json.zst; .pftrace, .pftrace.gz or "
                        ".pftrace.zst for Perfetto inputs); default: merged.json (merged.pftrace)"
                        " in the input folder, or in the current folder; '-' for stdout")
    p.add_argument("inputs", nargs="+", metavar="FILES|FOLDER")
    readopts.add(p)
    a = p.parse_args(argv)
    readopts.apply(p, a)
    files, fmt = merge_inputs(a.inputs)
    ext = ".pftrace" if fmt == "perfetto" else ".json"
    out = a.output
    if out is None:
        d = a.inputs[0] if len(a.inputs) == 1 and os.path.isdir(a.inputs[0]) else "."
        out = os.path.join(d, "merged" + ext)
    elif out != "-" and bool(PFTRACE_RE.search(out)) != (fmt == "perfetto"):
        fail("%s: Perfetto traces merge into a .pftrace file and JSON traces into a .json "
             "one; name the output %s" % (out, "merged" + ext))
    outreal = os.path.realpath(out) if out != "-" else None
    files = [f for f in files if os.path.realpath(f) != outreal]
    if not files:
        fail("nothing to merge")

    inputs = []
    for i, path in enumerate(files):
        sc = None
        try:
            if fmt == "perfetto":
                sc = scan(path)
                meta = meta_of(sc)
            else:
                meta = load_meta(path)
        except TraceError as e:
            fail(str(e), 1)
        di = meta.get("distributedInfo")
        earlier = sc["merged"] if sc else isinstance(di, dict) and "merged_ranks" in di
        if earlier and os.path.isdir(a.inputs[0]) and len(files) > 1:
            err("%s: skipped: an earlier merge output (name it to merge it)" % path)
            continue
        base = meta.get("baseTimeNanoseconds")
        if not isinstance(base, int):
            err("%s: no baseTimeNanoseconds; its timestamps are taken as they are "
                "(already aligned)" % path)
            base = None
        rank, known = rank_of(meta, path, i)
        note_cut(path, meta.get("traceprof"))
        inputs.append({"path": path, "meta": meta, "base": base, "rank": rank,
                       "rank_known": known, "index": i, "scan": sc})
    if not inputs:
        fail("nothing to merge")
    inputs.sort(key=lambda x: (x["rank"], x["index"]))
    bases = [x["base"] for x in inputs if x["base"] is not None]
    out_base = min(bases) if bases else 0
    total = sum(os.path.getsize(x["path"]) for x in inputs)
    prog = Progress(total, "merge")

    t0 = time.monotonic()
    w = None
    try:
        w = open_output(out, ext)
        if fmt == "perfetto":
            stats = write_pftrace(w, inputs, prog)
        else:
            stats = write_merged(w, inputs, out_base, os.path.basename(out), prog)
        w.commit()
    except BrokenPipeError:
        if w:
            w.abort()
        raise  # a reader of stdout or a FIFO went away: exit 141, as cat does
    except (TraceError, OSError) as e:
        prog.finish()
        if w:
            w.abort()
        if isinstance(e, OSError):
            e = "%s: cannot write it: %s" % (out, e.strerror or e)
        fail(str(e), 1)
    except BaseException:
        if w:
            w.abort()  # ^C: no temporary file left behind
        raise
    prog.finish()
    secs = time.monotonic() - t0
    err("merged %d file%s (%d events, %s in %.1f s, %.0f MB/s) into %s" % (
        len(inputs), "" if len(inputs) == 1 else "s", stats["events"], human_bytes(total),
        secs, total / max(secs, 1e-6) / 1e6, out))

