"""The trace files a merge or a `summary --by rank` takes (folders
expanded), and the rank of each."""

import os
import re
import stat

from ..layout import DI_RANK, DOC_DISTRIBUTED_INFO
from ..traces.pftrace import PFTRACE_RE
from ..traces.reader import JSON_RE
from ..util import err, fail


def regular(path):
    """Whether path is a regular file (after symlinks).  Only those are
    read: opening a FIFO named like a trace would wait for a writer
    forever, and a device or socket is no trace either."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def merge_inputs(args, cmd="merge"):
    """(the trace files named, with folders expanded, their format: "json"
    or "perfetto", or "mixed" for a summary).  A folder gives its .json,
    .json.gz and .json.zst files, or its .pftrace (.gz, .zst) files when it
    has no JSON.  A merge takes files of one format."""
    files = []
    for a in args:
        if os.path.isdir(a):
            try:
                names = os.listdir(a)
            except OSError as e:
                fail("%s: cannot list it: %s" % (a, e.strerror or e), 1)
            traces = [n for n in names if not n.startswith(".")
                      and (JSON_RE.search(n) or PFTRACE_RE.search(n))]
            for n in sorted(traces):
                if not regular(os.path.join(a, n)):
                    err("skipped: %s: not a regular file (a FIFO, device, socket or "
                        "folder named like a trace); only regular files are read"
                        % os.path.join(a, n))
            traces = [n for n in traces if regular(os.path.join(a, n))]
            found = sorted(os.path.join(a, n) for n in traces if JSON_RE.search(n))
            pf = sorted(os.path.join(a, n) for n in traces if PFTRACE_RE.search(n))
            if pf and not found:
                found = pf
            elif pf:
                for f in pf:
                    err("skipped: %s: the folder's JSON traces are read; name the Perfetto "
                        "files to %s them" % (f, "merge" if cmd == "merge" else "read"))
            if not found:
                fail("%s: no .json, .json.gz, .json.zst or .pftrace files in this folder%s"
                     % (a, subfolder_hint(a)))
            files.extend(found)
        elif regular(a):
            files.append(a)
        elif os.path.exists(a):
            fail("%s: not a regular file (a FIFO, device or socket); only regular files "
                 "are read" % a)
        else:
            fail("%s: no such file or folder" % a)
    pf = [f for f in files if PFTRACE_RE.search(f)]
    if pf and len(pf) != len(files) and cmd != "merge":
        return files, "mixed"
    if pf and len(pf) != len(files):
        fail("%s and %s: JSON and Perfetto traces cannot be merged into one file; merge "
             "each format on its own" % (next(f for f in files if f not in pf), pf[0]))
    return files, "perfetto" if pf else "json"


def rank_of(meta, path, index):
    di = meta.get(DOC_DISTRIBUTED_INFO)
    if isinstance(di, dict) and isinstance(di.get(DI_RANK), int):
        return di[DI_RANK], True
    m = re.search(r"rank[_-]?(\d+)", os.path.basename(path))
    if m:
        return int(m.group(1)), True
    return index, False


# ---- What `summary` is handed: a file, a run's folder, or the folder of
# runs (traceprof_traces/, whose subfolders are the runs).  Kept apart from
# merge_inputs(): these only choose the paths, which merge_inputs() and the
# readers then take as before.

def _traces_in(folder):
    """The regular trace files directly in folder, JSON first (as
    merge_inputs() reads a folder), sorted; [] when it cannot be listed."""
    try:
        names = sorted(n for n in os.listdir(folder) if not n.startswith("."))
    except OSError:
        return []
    paths = [os.path.join(folder, n) for n in names if JSON_RE.search(n) or PFTRACE_RE.search(n)]
    paths = [p for p in paths if regular(p)]
    js = [p for p in paths if JSON_RE.search(p)]
    return js or paths


def run_subfolders(folder):
    """The subfolders of folder that hold traces (runs), sorted."""
    try:
        names = sorted(n for n in os.listdir(folder) if not n.startswith("."))
    except OSError:
        return []
    return [os.path.join(folder, n) for n in names
            if os.path.isdir(os.path.join(folder, n)) and _traces_in(os.path.join(folder, n))]


def subfolder_hint(folder):
    """"; the runs are in its subfolders: ..." with the command to use, or
    "" when folder has no subfolder with traces."""
    subs = run_subfolders(folder)
    if not subs:
        return ""
    shown = ", ".join(os.path.basename(x) for x in subs[:5]) + (", ..." if len(subs) > 5 else "")
    return "; it is a folder of runs (%s): name one, e.g. %s" % (shown, subs[0])


def summary_folders(paths, by="rank", all_runs=False):
    """--by rank's inputs with a folder of runs replaced by its one run
    folder (said on stderr), or with all_runs (--all-runs) by every run
    folder; otherwise a folder of several runs is refused with the list, as
    their ranks would mix.  Files and run folders are kept."""
    out = []
    for p in paths:
        if os.path.isdir(p) and not _traces_in(p):
            subs = run_subfolders(p)
            if len(subs) == 1:
                err("%s: reading its one run, %s" % (p, subs[0]))
                p = subs[0]
            elif subs and all_runs:
                err("%s: reading its %d runs together (--all-runs)" % (p, len(subs)))
                out.extend(subs)
                continue
            elif subs:
                fail("%s: no trace files here; it is a folder of %d runs (%s): name one, e.g. "
                     "traceprof summary --by %s %s%s" % (
                         p, len(subs), ", ".join(os.path.basename(x) for x in subs[:5]) +
                         (", ..." if len(subs) > 5 else ""), by, subs[0],
                         ", or pass --all-runs to count them together" if by == "rank" else ""))
        out.append(p)
    return out


def summary_file(path, by):
    """The one trace file a summary (not --by rank) reads, for a file, a
    run's folder holding one trace, or a folder of runs holding one;
    anything else fails with one line saying what to name instead."""
    if not os.path.isdir(path):
        return path
    folder = summary_folders([path], by)[0]
    traces = _traces_in(folder)
    if len(traces) == 1:
        err("%s: reading its one trace, %s" % (path, traces[0]))
        return traces[0]
    if not traces:
        fail("%s: no .json, .json.gz, .json.zst or .pftrace files in this folder%s" % (
            path, subfolder_hint(folder) or "; name a trace file"))
    fail("%s: %d trace files here; summary --by %s reads one: name one, e.g. %s, or use "
         "summary --by rank %s for every rank's steps" % (folder, len(traces), by, traces[0],
                                                         folder))
