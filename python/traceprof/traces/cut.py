"""Cut windows (issue 44): a trace that `traceprof recover` (or `traceprof
run`) finished from the temporary file of a process that died before its
window ended.  Its footer's `cut` member says so, and so does its head
(DOC_CUT, with the same last_write); each command that reads traces
(summary, merge, export) calls note_cut() once per input, so that the user
knows the file ends early: one `traceprof:` line, nothing else changes in
how the file is read."""

import json
import os
import re
import subprocess
import zlib

from ..layout import DOC_CUT, DOC_FOOTER, FOOTER_CUT
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
            return _last_frames_cut(path)
    footer = footer_of(path)
    cut = footer.get(FOOTER_CUT) if isinstance(footer, dict) else None
    return cut if isinstance(cut, dict) else None


# The closing frame the next run's library appends to a compressed cut
# window (collector/cut_codec.c) is some 1 KB: it lies within this much of
# the file's end.
_TAIL = 16384


# The most text those frames may decode to: a closing frame is some 1 KB,
# the frames before it in the tail a few hundred KB; more is a frame that
# is not the library's (a decompression bomb: reader_bounds.sh) and is not
# held in memory.
_TEXT_MAX = 8 << 20


def _decode_to_end(data, gz):
    """The text of the whole frames (gzip members) data holds up to its
    last byte, or None when it does not decode so (a false start) or
    decodes to more than _TEXT_MAX bytes."""
    if not gz:
        try:
            p = subprocess.Popen(["zstd", "-dcq"], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        except OSError:
            return None
        try:
            # data is at most _TAIL bytes: it fits in the pipe before zstd
            # reads it.
            p.stdin.write(data)
            p.stdin.close()
            text = p.stdout.read(_TEXT_MAX + 1)
        except OSError:
            text = None
        if text is None or len(text) > _TEXT_MAX:
            p.kill()
        p.stdout.close()
        rc = p.wait()
        return text if text is not None and len(text) <= _TEXT_MAX and rc == 0 else None
    out = []
    room = _TEXT_MAX
    while data:
        d = zlib.decompressobj(31)
        try:
            part = d.decompress(data, room + 1)
        except zlib.error:
            return None
        room -= len(part)
        if room < 0 or not d.eof:
            return None
        out.append(part)
        data = d.unused_data
    return b"".join(out)


def _last_frames_cut(path):
    """The footer's `cut` of a compressed window the next run's library
    finished (its head was kept as written, without DOC_CUT), or None."""
    footer = _last_frames_footer(path)
    cut = footer.get(FOOTER_CUT) if isinstance(footer, dict) else None
    return cut if isinstance(cut, dict) else None


def _last_frames_footer(path):
    """The footer of a compressed window, read from the frames within the
    file's last _TAIL bytes, found by their magic and checked by decoding
    them to the end (their checksums), without decompressing the file.
    None when they do not hold it."""
    gz = path.endswith(".gz")
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.fstat(f.fileno()).st_size - _TAIL))
            tail = f.read()
    except OSError:
        return None
    magic = b"\x1f\x8b\x08" if gz else b"\x28\xb5\x2f\xfd"
    key = ('"%s": ' % DOC_FOOTER).encode()
    for i in (m.start() for m in re.finditer(re.escape(magic), tail)):
        text = _decode_to_end(tail[i:], gz)
        if text is None:
            continue
        at = text.rfind(key)
        if at < 0:
            return None
        try:
            footer, _ = json.JSONDecoder().raw_decode(text[at + len(key):].decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            return None
        return footer if isinstance(footer, dict) else None
    return None


def library_cut(path):
    """(footer, head) of a JSON cut window that a running process's library
    finished (collector/cut.c: the footer's cut says recovered_by "the next
    run's library ..."), or None for any other file.  Cheap: the head's
    first KB, and the footer from the file's end (a compressed one's last
    frames)."""
    if PFTRACE_RE.search(path):
        return None
    footer = _last_frames_footer(path) if compressed(path) else footer_of(path)
    cut = footer.get(FOOTER_CUT) if isinstance(footer, dict) else None
    if not isinstance(cut, dict) or not str(cut.get("recovered_by", "")).startswith(
            "the next run's library"):
        return None
    try:
        head = TraceReader(path).head()
    except (OSError, EOFError, ValueError, TraceError):
        return None
    return footer, head


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
