"""Reading JSON traces (Chrome/Kineto event format), plain, .gz or .zst,
as a stream: TraceReader yields the top-level members and batches of
events through Python's JSON parser, never holding the whole file.
Shared by merge and summary."""

import codecs
import gzip
import json
import math
import re
import signal
import subprocess
import sys
import zlib

from ..layout import DOC_TRACE_EVENTS


# The names of JSON trace files, plain or compressed.
JSON_RE = re.compile(r"\.json(\.gz|\.zst)?$")


class TraceError(Exception):
    pass


class _ZstdStream:
    """A binary reader over `zstd -dc FILE`."""

    def __init__(self, path):
        try:
            self.proc = subprocess.Popen(["zstd", "-dc", "--", path], stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE)
        except OSError as e:
            raise TraceError("%s: cannot run zstd to decompress it (%s); install zstd"
                             % (path, e))
        self.path = path

    def read(self, n=-1):
        return self.proc.stdout.read(n)

    def close(self):
        self.proc.stdout.close()
        errtext = self.proc.stderr.read().decode(errors="replace").strip()
        self.proc.stderr.close()
        rc = self.proc.wait()
        if rc != 0 and rc != -signal.SIGPIPE:
            raise TraceError("%s: zstd -dc failed: %s" % (self.path, errtext or rc))


def open_binary(path):
    """A binary stream of the decompressed bytes of path."""
    if path.endswith(".zst"):
        return _ZstdStream(path)
    try:
        if path.endswith(".gz"):
            return gzip.open(path, "rb")
        return open(path, "rb")
    except OSError as e:
        raise TraceError("%s: %s" % (path, e.strerror or e))


CHUNK = 1 << 22
# Text decoded into one batch of events at most: a batch of dicts takes
# several times its text in memory.
BATCH_TEXT = 1 << 20
WS = " \t\r\n"
_NOT_WS = re.compile(r"[^ \t\r\n]")

# The largest single JSON value (an event, a top-level member, one string)
# or Perfetto packet a reader decodes, in MiB of text: beyond it the input
# is refused (TraceError) instead of being held and decoded, so that a file
# of one huge name (a decompression bomb: 38 KB of .zst holding a 1.2 GB
# string) costs bounded time and memory.  The commands' --max-value-mb
# (cli/readopts.py) sets it.
MAX_VALUE_MB = 16
max_value = MAX_VALUE_MB << 20


def set_max_value_mb(mb):
    """Sets the limit (max_value) to mb MiB."""
    global max_value
    max_value = int(mb) << 20


def too_big(path, at):
    """The TraceError of a value past max_value starting at byte `at`."""
    return TraceError("%s: a value at byte %d is larger than %d MiB: not read (a trace's "
                      "events and names are far smaller; --max-value-mb N raises the limit)"
                      % (path, at, max_value >> 20))


def _maybe_cut(e, text):
    """Whether JSONDecodeError e, raised decoding text, may only mean that
    the value goes on past the text's end (then more text may complete it):
    an unterminated string, or an error within the last few characters.  An
    error before that is in the text itself and stays whatever follows."""
    return e.msg.startswith("Unterminated string") or e.pos >= len(text) - 32


def _big_int(text):
    """A JSON integer too long for Python to convert (more digits than
    sys.get_int_max_str_digits(), 4300 by default: a guard against
    quadratic conversions) cannot be any trace's number: it is read as an
    infinity, and written as null, like NaN."""
    try:
        return int(text)
    except ValueError:
        return -math.inf if text.startswith("-") else math.inf


def _utf8_len(text):
    """Bytes of text in UTF-8 (the file's encoding): positions in messages
    are byte offsets, and the buffer holds decoded characters."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


class TraceReader:
    """Streams one trace: top-level keys in file order, and the events of
    traceEvents (or of a bare array) without holding them all.

    for kind, a, b in TraceReader(path).items():
        kind == "meta":  a is a top-level key, b its value
        kind == "events": a is a list of event dicts (a batch), b unused
    """

    def __init__(self, path, progress=None):
        self.path = path
        self.progress = progress
        self.f = open_binary(path)
        self.dec = codecs.getincrementaldecoder("utf-8")("replace")
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.bytes_read = 0
        self.base = 0          # byte offset in the file of buf[0]
        # NaN, Infinity, -Infinity (not JSON, but Python's and some tools'
        # writers produce them) are read as floats, as 1e400 is; integers
        # too long to convert as infinity.  Readers skip non-finite numbers
        # (math.isfinite) and merge writes them as null (encode).
        self.jd = json.JSONDecoder()
        self.bigjd = json.JSONDecoder(parse_int=_big_int)

    def byte_at(self, pos):
        """The file offset of buf[pos]."""
        return self.base + _utf8_len(self.buf[:pos])

    def fail_at(self, pos, what):
        raise TraceError("%s: invalid JSON at byte %d: %s" % (self.path, self.byte_at(pos), what))

    def decode(self, text, pos):
        """raw_decode at pos; JSONDecodeError for text that is not JSON
        (perhaps only cut short), TraceError for what Python cannot hold."""
        for jd in (self.jd, self.bigjd):
            try:
                return jd.raw_decode(text, pos)
            except json.JSONDecodeError:
                raise
            except RecursionError:
                raise TraceError("%s: nested deeper than %d levels near byte %d" % (
                    self.path, sys.getrecursionlimit(), self.byte_at(pos)))
            except ValueError:
                pass  # an integer too long to convert: bigjd reads it (_big_int)
        raise TraceError("%s: a number at byte %d cannot be read"
                         % (self.path, self.byte_at(pos)))

    def close(self):
        f, self.f = self.f, None
        if f:
            f.close()

    def _more(self, want=0):
        """Reads one more chunk, and more until the text not yet consumed
        holds `want` characters (or the file ends), joined to the buffer in
        one concatenation: a value that spans many chunks is retried after
        its text doubles, not after each chunk (which was quadratic).
        False when the file had ended."""
        if self.eof:
            return False
        rest = len(self.buf) - self.pos
        parts = []
        while True:
            text = self._chunk()
            if text is None:
                break
            parts.append(text)
            rest += len(text)
            if rest >= want:
                break
        if not parts:
            return False
        self.base += _utf8_len(self.buf[:self.pos])
        self.buf = self.buf[self.pos:] + "".join(parts)
        self.pos = 0
        return True

    def _chunk(self):
        """The text of the next chunk; None at the end of the file."""
        if self.eof:
            return None
        try:
            data = self.f.read(CHUNK)
        except (OSError, EOFError, zlib.error) as e:
            # gzip: not a gzip file, a corrupt stream, or cut short.
            what = "the compressed stream is cut short" if isinstance(e, EOFError) \
                else (getattr(e, "strerror", None) or str(e))
            raise TraceError("%s: cannot read it%s: %s" % (
                self.path, " after %d bytes of contents" % self.bytes_read
                if self.bytes_read else "", what))
        if not self.bytes_read and data.startswith(codecs.BOM_UTF8):
            # A UTF-8 byte order mark: allowed before JSON text, and skipped.
            data = data[3:]
            self.bytes_read = self.base = 3
        if not data:
            self.eof = True
            tail = self.dec.decode(b"", final=True)
            return tail or None
        self.bytes_read += len(data)
        if self.progress:
            self.progress(len(data))
        return self.dec.decode(data)

    def _skip_ws(self):
        while True:
            m = _NOT_WS.search(self.buf, self.pos)
            if m:
                self.pos = m.start()
                return self.buf[self.pos]
            self.pos = len(self.buf)
            if not self._more():
                return ""

    def _decode_more(self, what=""):
        """(value, end) of the JSON value at pos, reading more while it may
        only be cut short by the buffer's end: its text is retried after it
        doubles, so a value of n bytes costs O(n) in all; one longer than
        max_value is refused (too_big) before it is held whole."""
        while True:
            try:
                return self.decode(self.buf, self.pos)
            except json.JSONDecodeError as e:
                if self.eof or not _maybe_cut(e, self.buf):
                    self.fail_at(e.pos, what + e.msg)
                pending = len(self.buf) - self.pos
                if pending > max_value:
                    raise too_big(self.path, self.byte_at(self.pos))
                if not self._more(min(2 * pending, max_value + 1)):
                    self.fail_at(e.pos, what + e.msg)

    def _expect(self, ch):
        c = self._skip_ws()
        if c != ch:
            raise TraceError("%s: not a trace: expected '%s' at byte %d, found %r"
                             % (self.path, ch, self.byte_at(self.pos), c or "end of file"))
        self.pos += 1

    def _value(self):
        """Decodes one JSON value at pos, reading more as needed."""
        self._skip_ws()
        while True:
            v, end = self._decode_more()
            # A number at the very end of the buffer may be cut short.
            if end >= len(self.buf) and not self.eof and isinstance(v, (int, float)):
                if self._more():
                    continue
            self.pos = end
            return v

    def _events(self):
        """Yields batches of events of the array whose '[' was consumed."""
        c = self._skip_ws()
        if c == "]":
            self.pos += 1
            return
        while True:
            # Fast path: everything up to the last "}," in the buffer is
            # usually a run of complete events; one json.loads parses it at C
            # speed.  A cut inside a string or a nested object leaves an
            # unbalanced text and fails, and then the slow path decodes event
            # by event, which is always right.
            # In a file read whole the last "}," may be past the array's end
            # (in the footer): the array then closes inside the text, and
            # raw_decode stops at its "]" (end short of the text's), which
            # ends the events; failing there and taking the slow path for
            # every 256 events was quadratic in the file (1 s a MB).
            b = self.buf
            last = b.rfind("},", self.pos, self.pos + BATCH_TEXT)
            if last - self.pos > 4096:
                text = "[" + b[self.pos:last + 1] + "]"
                try:
                    batch, end = self.jd.raw_decode(text)
                except (ValueError, RecursionError):
                    batch = None  # the slow path says what and where
                if batch is not None and end < len(text):
                    self.pos += end - 1
                    yield batch
                    return
                if batch is not None:
                    self.pos = last + 2
                    yield batch
                    if self._skip_ws() == "":
                        raise TraceError("%s: truncated: the event array is not closed"
                                         % self.path)
                    continue
            # Slow path: a handful of events one by one.
            batch = []
            for _ in range(256):
                self._skip_ws()
                ev, end = self._decode_more("an event: ")
                self.pos = end
                batch.append(ev)
                c = self._skip_ws()
                if c == ",":
                    self.pos += 1
                    continue
                if c == "]":
                    self.pos += 1
                    yield batch
                    return
                raise TraceError("%s: expected ',' or ']' in traceEvents at byte %d, found %r"
                                 % (self.path, self.byte_at(self.pos), c or "end of file"))
            yield batch
            if self._skip_ws() == "":
                raise TraceError("%s: truncated: the event array is not closed" % self.path)

    def _array(self):
        for batch in self._events():
            yield "events", batch, None

    def items(self):
        try:
            c = self._skip_ws()
            if c == "[":
                self.pos += 1
                yield from self._array()
                self._end()
                return
            self._expect("{")
            if self._skip_ws() == "}":
                self.pos += 1
                self._end()
                return
            while True:
                at = self.pos
                key = self._value()
                if not isinstance(key, str):
                    raise TraceError("%s: not a trace: the key at byte %d is not a string"
                                     % (self.path, self.byte_at(at)))
                self._expect(":")
                if key == DOC_TRACE_EVENTS:
                    self._expect("[")
                    yield from self._array()
                else:
                    yield "meta", key, self._value()
                c = self._skip_ws()
                if c == ",":
                    self.pos += 1
                    continue
                if c == "}":
                    self.pos += 1
                    self._end()
                    return
                if not c:
                    raise TraceError("%s: truncated at byte %d: the top-level object is not "
                                     "closed (no final '}')" % (self.path, self.byte_at(self.pos)))
                raise TraceError("%s: not a trace: expected ',' or '}' after key %r at byte %d"
                                 % (self.path, key, self.byte_at(self.pos)))
        finally:
            self.close()

    def _end(self):
        """Only white space may follow the top-level value."""
        if self._skip_ws():
            raise TraceError("%s: invalid JSON at byte %d: extra data after the end of the "
                             "trace" % (self.path, self.byte_at(self.pos)))

    def head(self):
        """The top-level keys before traceEvents (reads no events)."""
        meta = {}
        try:
            c = self._skip_ws()
            if c == "[":
                return meta
            self._expect("{")
            if self._skip_ws() == "}":
                return meta
            while True:
                key = self._value()
                self._expect(":")
                if key == DOC_TRACE_EVENTS:
                    return meta
                meta[key] = self._value()
                c = self._skip_ws()
                if c != ",":
                    return meta
                self.pos += 1
        finally:
            self.close()
