"""The trace files a merge or a `summary --by rank` takes (folders
expanded, Perfetto files refused), and the rank of each."""

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
    """The trace files named, with folders expanded to their .json,
    .json.gz and .json.zst files.  .pftrace files (Perfetto's protobuf)
    are refused with one line when named, and skipped, with one line, in
    a folder."""
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
                fail(pftrace_note(cmd, os.path.join(a, "*.pftrace")), 1)
            for f in pf:
                err("skipped: " + pftrace_note(cmd, f))
            if not found:
                fail("%s: no .json, .json.gz or .json.zst files in this folder" % a)
            files.extend(found)
        elif os.path.isfile(a):
            if PFTRACE_RE.search(a):
                fail(pftrace_note(cmd, a), 1)
            files.append(a)
        else:
            fail("%s: no such file or folder" % a)
    return files


def rank_of(meta, path, index):
    di = meta.get("distributedInfo")
    if isinstance(di, dict) and isinstance(di.get("rank"), int):
        return di["rank"], True
    m = re.search(r"rank[_-]?(\d+)", os.path.basename(path))
    if m:
        return int(m.group(1)), True
    return index, False
