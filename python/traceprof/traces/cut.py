"""Cut windows (issue 44): a trace that `traceprof recover` (or `traceprof
run`) finished from the temporary file of a process that died before its
window ended.  Its footer's `cut` member says so, and so does its head
(DOC_CUT, with the same last_write); each command that reads traces
(summary, merge, export) calls note_cut() once per input, so that the user
knows the file ends early: one `traceprof:` line, nothing else changes in
how the file is read."""

import re

from ..layout import DOC_CUT, FOOTER_CUT
from ..util import err
from .aggtable import footer_of
from .pftrace import PFTRACE_RE
from .reader import TraceError, TraceReader
from .tail import compressed


def cut_of(path, footer=None):
    """A dict saying path is a cut window (its last_write), or None for a
    whole one.  footer: the footer when the caller has read it already.
    The head first: a few KB even of a compressed file, whose footer costs
    a whole decompression; the footer of a plain file otherwise (a cut file
    of an older recover has only that)."""
    if isinstance(footer, dict):
        cut = footer.get(FOOTER_CUT)
        return cut if isinstance(cut, dict) else None
    if not PFTRACE_RE.search(path):
        try:
            cut = TraceReader(path).head().get(DOC_CUT)
        except (OSError, EOFError, ValueError, TraceError):
            cut = None
        if isinstance(cut, dict):
            return cut
        if compressed(path):
            return None
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
