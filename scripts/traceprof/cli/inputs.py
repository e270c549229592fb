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
                fail("%s: no .json, .json.gz, .json.zst or .pftrace files in this folder" % a)
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
