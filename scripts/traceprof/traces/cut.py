"""Cut windows (issue 44): a trace that `traceprof recover` (or `traceprof
run`) finished from the temporary file of a process that died before its
window ended.  Its footer's `cut` member says so; each command that reads
traces (summary, merge, export) calls note_cut() once per input, so that
the user knows the file ends early: one `traceprof:` line, nothing else
changes in how the file is read."""

import re

from ..layout import FOOTER_CUT
from ..util import err
from .aggtable import footer_of


def cut_of(path, footer=None):
    """The `cut` member of path's footer (a dict), or None for a whole
    window.  footer: the footer when the caller has read it already (its
    tail is read otherwise: for a compressed file, a decompression)."""
    if not isinstance(footer, dict):
        footer = footer_of(path)
    cut = footer.get(FOOTER_CUT) if isinstance(footer, dict) else None
    return cut if isinstance(cut, dict) else None


def note_cut(path, footer=None):
    """Prints one line when path is a cut window; returns whether it is."""
    cut = cut_of(path, footer)
    if cut is None:
        return False
    m = re.search(r"T(\d\d:\d\d:\d\d)", str(cut.get("last_write", "")))
    when = ("events after %s UTC are missing" % m.group(1) if m
            else "the events after its last write are missing")
    err("%s: a cut window (its process died; %s)" % (path, when))
    return True
