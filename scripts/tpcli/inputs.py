"""The trace files a merge or a `summary --by rank` takes (folders
expanded; Perfetto files for a merge of Perfetto files only), and the
rank of each."""

import os
import re

from .pftrace import PFTRACE_RE
from .reader import JSON_RE
from .util import err, fail


def pftrace_note(cmd, path):
    """The one line that says a command cannot take a Perfetto file."""
    return ("%s: Perfetto files cannot be %s yet; open them in ui.perfetto.dev, or record "
            "JSON (--format json) to use traceprof %s" % (
                path, "merged" if cmd == "merge" else "summarised by rank", cmd))


def merge_inputs(args, cmd="merge"):
    """(the trace files named, with folders expanded, their format: "json"
    or "perfetto").  A folder gives its .json, .json.gz and .json.zst
    files, or its .pftrace (.gz, .zst) files when it has no JSON.  A merge
    takes files of one format; `summary --by rank` takes JSON only, and
    refuses a named Perfetto file (skips one in a folder) with one line."""
    files = []
    for a in args:
        if os.path.isdir(a):
            try:
                names = os.listdir(a)
            except OSError as e:
                fail("%s: cannot list it: %s" % (a, e.strerror or e), 1)
            found = sorted(
                os.path.join(a, n) for n in names
                if not n.startswith(".") and JSON_RE.search(n))
            pf = sorted(os.path.join(a, n) for n in names
                        if not n.startswith(".") and PFTRACE_RE.search(n))
            if pf and not found:
                if cmd != "merge":
                    fail(pftrace_note(cmd, os.path.join(a, "*.pftrace")), 1)
                found = pf
            elif pf:
                for f in pf:
                    err("skipped: %s: the folder's JSON traces are merged; name the Perfetto "
                        "files to merge them" % f if cmd == "merge" else
                        "skipped: " + pftrace_note(cmd, f))
            if not found:
                fail("%s: no .json, .json.gz, .json.zst or .pftrace files in this folder" % a)
            files.extend(found)
        elif os.path.isfile(a):
            if PFTRACE_RE.search(a) and cmd != "merge":
                fail(pftrace_note(cmd, a), 1)
            files.append(a)
        else:
            fail("%s: no such file or folder" % a)
    pf = [f for f in files if PFTRACE_RE.search(f)]
    if pf and len(pf) != len(files):
        fail("%s and %s: JSON and Perfetto traces cannot be merged into one file; merge "
             "each format on its own" % (next(f for f in files if f not in pf), pf[0]))
    return files, "perfetto" if pf else "json"


def rank_of(meta, path, index):
    di = meta.get("distributedInfo")
    if isinstance(di, dict) and isinstance(di.get("rank"), int):
        return di["rank"], True
    m = re.search(r"rank[_-]?(\d+)", os.path.basename(path))
    if m:
        return int(m.group(1)), True
    return index, False
