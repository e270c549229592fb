"""Reading a JSON trace's events at the speed of a columnar JSON parser
(pyarrow's, in C++ and threaded) instead of a Python loop per event, for
files in the writer's layout: one event on a line (docs/trace-format.md,
"One event per line"):

    {... "traceEvents": [
    {"ph":"X",...},
    {"ph":"X",...}
      ],
      "traceprof": {...}
    }

line_tables(path, pa, schema) yields pyarrow Tables of the events' fields
in the schema (fields the schema does not name are ignored), in file order.
It raises NotLines, at any point, when the file is not in that layout or a
value does not fit the schema (a string where a number was asked for, a
duplicate key, a number past int64); the caller then reads the file again
with TraceReader, which reads any JSON, and must have written nothing of it
yet for good.  What the layout checks:
  - the text before the array parses as the start of a JSON object whose
    last member is traceEvents (TraceReader.head's metadata);
  - each line of the array is one object, every line but the last ending in
    "}," and the last in "}" (a "}" at a line's end before the last is a
    missing comma: NotLines, and TraceReader reports it);
  - the text after the array's "]" is the object's other members and its
    "}", and nothing else.
Memory: one block (BLOCK) of text and its table at a time; a line longer
than reader.max_value is NotLines (TraceReader then refuses it)."""

import io
import json
import re
import zlib

from ..layout import DOC_TRACE_EVENTS
from . import reader
from .reader import TraceError, open_binary

BLOCK = 1 << 22
# The array's opening as the writer puts it: the key, then a line break.
_START = ('"%s": [\n' % DOC_TRACE_EVENTS).encode()
# The line that closes the array: only white space before its "]" (an
# event's line starts with "{").
_END = re.compile(rb"\n[ \t]*\]")
_CLOSE = re.compile(rb"[ \t]*\]")
# The text after the array read to check it, at most.
_TAIL_MAX = 1 << 26


class NotLines(Exception):
    """The file is not one event per line (or a value does not fit the
    schema): read it with TraceReader."""


def _head(head):
    """The members before traceEvents when head (the text before "[" of
    traceEvents) is "{", members, and the traceEvents key; else None."""
    try:
        doc = json.loads(head.decode("utf-8") + "[]}")
    except (ValueError, RecursionError):
        return None
    if not isinstance(doc, dict) or list(doc)[-1:] != [DOC_TRACE_EVENTS]:
        return None
    del doc[DOC_TRACE_EVENTS]
    return doc


def _tail(tail):
    """The members after the array when tail (the text after its "]") is
    the object's other members and its end; else None."""
    try:
        doc = json.loads('{"%s": []' % DOC_TRACE_EVENTS + tail.decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    if not isinstance(doc, dict):
        return None
    doc.pop(DOC_TRACE_EVENTS, None)
    return doc


def _parse(pa, pj, text, opts):
    """The table of text (complete lines, commas taken off)."""
    try:
        return pj.read_json(io.BytesIO(text), read_options=opts[0], parse_options=opts[1])
    except pa.ArrowException as e:
        # Lines longer than the parser's block: once more in one block.
        if "straddl" not in str(e):
            raise NotLines(str(e))
    try:
        return pj.read_json(io.BytesIO(text), parse_options=opts[1],
                            read_options=pj.ReadOptions(block_size=len(text) + 1))
    except pa.ArrowException as e:
        raise NotLines(str(e))


def _lines(text, last, pick=None):
    """The events' lines of text (whole lines) as ndjson: each line's
    comma taken off; NotLines where a line that is not the array's last
    lacks it.  last: whether text ends the array.  With pick, the commas
    stay: _tables takes them off the lines it picks only."""
    body = text[:-1] if last and text.endswith(b"}\n") else text
    if b"}\n" in body:
        raise NotLines("a line without its comma")
    return text if pick is not None else text.replace(b"},\n", b"}\n")


def _picked(text, pick):
    """The lines of text (ndjson, each ending in a newline) that hold the
    bytes pick; all of text where an escape (\\uXXXX) could spell them
    otherwise."""
    if b"\\u" in text:
        return text
    out = []
    i = text.find(pick)
    while i >= 0:
        a = text.rfind(b"\n", 0, i) + 1
        b = text.find(b"\n", i) + 1 or len(text)
        out.append(text[a:b])
        i = text.find(pick, b)
    return b"".join(out)


def _tables(pa, pj, text, opts, pick=None, held=None, last=False):
    """The table of text (none when it is empty).  With pick, its picked
    lines are held (in the list held) until they make a block or the
    array ends (last), then parsed at once: pyarrow's cost per call showed
    over the few lines each block gives."""
    if pick is not None:
        held.append(_picked(text, pick).replace(b"},\n", b"}\n"))
        if not last and sum(len(x) for x in held) < BLOCK:
            return
        text = b"".join(held)
        del held[:]
    if text and not text.isspace():
        t = _parse(pa, pj, text, opts)
        if t.num_rows:
            yield t


def line_tables(path, pa, schema, meta=None, pick=None):
    """Tables of the events of path (see the module's text).  meta, a dict,
    gets the top-level members but traceEvents once the file was read
    whole (what TraceReader.items yields as "meta").  pick (bytes): only
    the events whose line holds them, as far as the text shows without
    parsing (every event where a block has an escape that could spell
    them): the layout is checked as for all, but the other lines are not
    parsed, so a value pyarrow would refuse in them is not seen (a reading
    of every event must follow, as export's second one does)."""
    import pyarrow.json as pj
    # Blocks of 4 MiB: pyarrow's per-block cost showed at 1 MiB (a 1 MB
    # file parsed in 19 ms instead of 7).
    opts = (pj.ReadOptions(block_size=1 << 22),
            pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore",
                            newlines_in_values=False))
    f = open_binary(path)
    try:
        buf = f.read(BLOCK)
        if buf.startswith(b"\xef\xbb\xbf"):
            buf = buf[3:]
        at = buf.find(_START, 0, 1 << 20)
        head = _head(buf[:at + len(_START) - 2]) if at >= 0 else None
        if head is None:
            raise NotLines("no traceEvents line")
        buf = buf[at + len(_START):]
        first = True
        held = []  # picked lines not yet parsed
        while True:
            m = _CLOSE.match(buf)
            if m:
                if not first:
                    raise NotLines("a comma before the array's end")
                rest = buf[m.end():]
                break
            m = _END.search(buf)
            if m:
                rest = buf[m.end():]
                yield from _tables(pa, pj, _lines(buf[:m.start() + 1], True, pick), opts, pick,
                                  held, True)
                break
            # Whole lines up to the last comma's: the last event's line
            # (no comma) stays until the array's end is seen.
            k = buf.rfind(b"},\n") + 3
            more = f.read(BLOCK)
            if not more:
                raise NotLines("the event array is not closed")
            if k < 3:
                if len(buf) > reader.max_value:
                    raise NotLines("a line longer than the limit")
                buf += more
                continue
            text, buf = buf[:k], buf[k:] + more
            first = False
            yield from _tables(pa, pj, _lines(text, False, pick), opts, pick, held)
        tail = rest
        while len(tail) <= _TAIL_MAX:
            more = f.read(BLOCK)
            if not more:
                break
            tail += more
        foot = _tail(tail) if len(tail) <= _TAIL_MAX else None
        if foot is None:
            raise NotLines("the text after the event array")
        if meta is not None:
            meta.update(head)
            meta.update(foot)
    except TraceError as e:
        raise NotLines(str(e))
    except (OSError, EOFError, zlib.error) as e:
        # A corrupt or cut stream: TraceReader says what and where.
        raise NotLines(str(e))
    finally:
        f.close()
