"""Writing the merged trace: compact JSON text (NaN and infinities as
null), to a temporary file renamed at the end, or to stdout, a FIFO or a
device; gzip in-process, zstd through the zstd command."""

import gzip
import json
import math
import os
import re
import subprocess

from .reader import TraceError


class _Writer:
    """The merged text's way out: raw takes bytes (a file, a gzip stream, a
    zstd's stdin); files are closed in order by commit() or abort(); tmp,
    when set, is renamed to out by commit() and removed by abort()."""

    def __init__(self, raw, files=(), proc=None, tmp=None, out=None):
        self.raw = raw
        self.files = list(files)
        self.proc = proc
        self.tmp = tmp
        self.out = out
        self.parts = []
        self.size = 0

    def write(self, s):
        """Text (the JSON merge) or bytes (the Perfetto merge): one kind
        per output."""
        self.parts.append(s)
        self.size += len(s)
        if self.size > 1 << 20:
            self.flush()

    def flush(self):
        if self.parts and isinstance(self.parts[0], bytes):
            data = b"".join(self.parts)
            self.parts = []
            self.size = 0
            self.raw.write(data)
        elif self.parts:
            text = "".join(self.parts)
            self.parts = []
            self.size = 0
            try:
                data = text.encode("utf-8")
            except UnicodeEncodeError:
                # A lone surrogate ("\ud800" in an input's string) has no
                # UTF-8 form: it is written as the same JSON escape.
                data = _SURROGATE.sub(lambda m: "\\u%04x" % ord(m.group()), text).encode("utf-8")
            self.raw.write(data)

    def commit(self):
        """Finishes the output; OSError or TraceError when it cannot."""
        self.flush()
        for f in self.files:
            f.close()
        self.files = []
        if self.proc:
            rc = self.proc.wait()
            self.proc = None
            if rc != 0:
                raise TraceError("%s: zstd failed writing it (exit status %d)" % (self.out, rc))
        if self.tmp:
            os.replace(self.tmp, self.out)
            self.tmp = None

    def abort(self):
        """Closes everything and removes the temporary file; never raises."""
        for f in self.files:
            try:
                f.close()
            except (OSError, ValueError):
                pass
        self.files = []
        if self.proc:
            try:
                self.proc.kill()
                self.proc.wait()
            except OSError:
                pass
            self.proc = None
        if self.tmp:
            try:
                os.unlink(self.tmp)
            except OSError:
                pass
            self.tmp = None


_SURROGATE = re.compile("[\ud800-\udfff]")


def open_output(out, default_ext=".json"):
    """A _Writer for out.  A regular file (or a new name) is written to a
    temporary file made in its folder with O_EXCL|O_NOFOLLOW and a random
    name (mkstemp: nothing planted there can be followed or clobbered),
    then renamed over out.  stdout ('-'), FIFOs and character devices
    (-o /dev/stdout, a named pipe) are written directly: renaming over them
    would replace the node itself.  OSError or TraceError when it cannot be
    opened; nothing is left behind then.  An output named through a
    symlink is written through it, in place."""
    import stat
    import tempfile
    tmp = None
    if out == "-":
        fd = os.dup(1)
    else:
        try:
            st = os.stat(out)
        except FileNotFoundError:
            st = None
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise TraceError("%s: is a folder; give a file name, e.g. -o %s"
                             % (out, os.path.join(out, "merged" + default_ext)))
        if st is not None and (stat.S_ISBLK(st.st_mode) or stat.S_ISSOCK(st.st_mode)):
            raise TraceError("%s: is a %s; write to a file, a FIFO or '-'" % (
                out, "block device" if stat.S_ISBLK(st.st_mode) else "socket"))
        if st is not None and (not stat.S_ISREG(st.st_mode) or os.path.islink(out)):
            # Also through a symlink the user named (/dev/stdout is one, to
            # a regular file when stdout is redirected to one): renaming
            # would replace the link itself.
            fd = os.open(out, os.O_WRONLY | os.O_CLOEXEC |
                         (os.O_TRUNC if stat.S_ISREG(st.st_mode) else 0))
        else:
            folder = os.path.dirname(out) or "."
            if not os.path.isdir(folder):
                raise TraceError("%s: cannot create it: the folder %s does not exist"
                                 % (out, folder))
            try:
                fd, tmp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(out) + ".",
                                           suffix=".tmp")
            except OSError as e:
                raise TraceError("%s: cannot create a file in %s: %s"
                                 % (out, folder, e.strerror or e))
            # mkstemp makes it 0600; the output gets the usual mode.
            mask = os.umask(0)
            os.umask(mask)
            os.fchmod(fd, 0o666 & ~mask)
    f = os.fdopen(fd, "wb")
    w = _Writer(f, [f], tmp=tmp, out=out)
    try:
        if out.endswith(".gz"):
            z = gzip.GzipFile(filename="", mode="wb", compresslevel=3, fileobj=f)
            w.raw = z
            w.files.insert(0, z)
        elif out.endswith(".zst"):
            import shutil
            if not shutil.which("zstd"):
                raise TraceError("%s: writing .zst needs the zstd command, which is not on "
                                 "the PATH; install zstd, or write %s or %s.gz"
                                 % (out, default_ext, default_ext))
            w.proc = subprocess.Popen(["zstd", "-q", "-3", "-c"], stdin=subprocess.PIPE,
                                      stdout=f)
            w.raw = w.proc.stdin
            w.files.insert(0, w.proc.stdin)
    except BaseException:
        w.abort()
        raise
    return w


# allow_nan=False: NaN and infinities (not JSON) fail the encode, and
# encode() writes them as null.
_ENC = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, check_circular=False,
                        allow_nan=False)
NULLED = [0]  # non-finite numbers written as null since the last report


def _finite(v):
    """v with every non-finite float replaced by None (counted)."""
    if isinstance(v, float):
        if math.isfinite(v):
            return v
        NULLED[0] += 1
        return None
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_finite(x) for x in v]
    return v


def encode(v):
    """Compact JSON of v; NaN and infinities become null.  Raises
    TraceError when v cannot be written (nested too deep)."""
    try:
        return _ENC.encode(v)
    except ValueError:
        pass
    except RecursionError:
        raise TraceError("a value nested too deep to write")
    try:
        return _ENC.encode(_finite(v))
    except (ValueError, RecursionError):
        raise TraceError("a value nested too deep to write")
