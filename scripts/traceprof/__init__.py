"""traceprof's Python hook: steps and markers from Python (e.g. a PyTorch
training loop) for a program run under `traceprof run` or with
libtraceprof.so in LD_PRELOAD.  Standard library only (ctypes).

    import traceprof

    for batch in loader:
        with traceprof.marker("forward", categories=["train"]):
            loss = model(batch)
        traceprof.counter("loss", "value", float(loss))
        traceprof.step()            # torch.profiler.profile.step() semantics

    @traceprof.marker("eval")      # as a decorator (Composer's Marker usage)
    def evaluate(): ...

Every call is a no-op when the library is not loaded in this process, so the
calls can stay in production code.  traceprof.enabled() says which.
"""

import functools
import sys

from .util import version as _version

__all__ = ["step", "marker", "instant", "counter", "enabled", "Marker", "__version__"]

__version__ = _version()


def _lookup():
    import ctypes
    try:
        lib = ctypes.CDLL(None)  # the symbols already loaded in this process
    except OSError:
        return None
    try:
        fns = {
            "step": lib.traceprof_step,
            "start": lib.traceprof_marker_start,
            "finish": lib.traceprof_marker_finish,
            "instant": lib.traceprof_marker_instant,
            "counter": lib.traceprof_marker_counter,
        }
    except AttributeError:
        return None
    fns["step"].argtypes = []
    fns["step"].restype = None
    for k in ("start", "finish", "instant"):
        fns[k].argtypes = [ctypes.c_char_p]
        fns[k].restype = None
    fns["counter"].argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_double]
    fns["counter"].restype = None
    # With categories (Marker(categories=...)); older libraries lack them,
    # and the events are recorded without their categories there.
    for k in ("start_cat", "instant_cat"):
        try:
            fns[k] = getattr(lib, "traceprof_marker_" + k)
        except AttributeError:
            fns[k] = None
            continue
        fns[k].argtypes = [ctypes.c_char_p, ctypes.c_char_p]
        fns[k].restype = None
    # traceprof_active(): whether this process records (0 with
    # TRACEPROF_ENABLE=0, after a configuration error or an internal
    # failure).  Older libraries lack it: loaded means active there.
    try:
        fns["active"] = lib.traceprof_active
        fns["active"].argtypes = []
        fns["active"].restype = ctypes.c_int
    except AttributeError:
        fns["active"] = None
    return fns


class _Lazy:
    """The library's entry points, looked up at the first call, not at
    import: the `traceprof` command imports this package too, and must
    block run's signals before anything slower than a file read."""
    fns = None
    looked = False


def _get():
    if not _Lazy.looked:
        _Lazy.fns = _lookup()
        _Lazy.looked = True
    return _Lazy.fns


def _b(s):
    if isinstance(s, bytes):
        return s
    try:
        return str(s).encode("utf-8", "replace")
    except Exception:  # noqa: BLE001  (a __str__ that raises: never ours to raise)
        return b"?"


def enabled():
    """True when calls are recorded: libtraceprof.so is loaded in this
    process and profiling is on (not TRACEPROF_ENABLE=0, no configuration
    error, no internal failure).  Whether the current step falls in a
    recording window of TRACEPROF_SCHEDULE is not part of the answer."""
    if _get() is None:
        return False
    return bool(_get()["active"]()) if _get()["active"] else True


_warned = set()


def _warn_once(key, what, detail):
    # The no-op version never raises: neither does this one.  A bad value is
    # dropped with one line per kind of mistake, like the library's own;
    # silently when nothing is recorded anyway.
    if _get()["active"] and not _get()["active"]():
        return
    if key not in _warned:
        _warned.add(key)
        try:
            sys.stderr.write("traceprof: %s (%s); dropped\n" % (what, detail))
        except (OSError, ValueError):
            pass


def step():
    """The next step starts (torch.profiler.profile.step()).  Under
    TRACEPROF_STEP=torch the optimizer makes the steps, and this is a no-op
    (else a script that also calls it would count each step twice)."""
    if _get() and not _optimizer_steps():
        _get()["step"]()


def _optimizer_steps():
    """True when TRACEPROF_STEP=torch's optimizer hook is in place
    (pyboot/traceprof_torch.py)."""
    import sys
    mod = sys.modules.get("traceprof_torch")
    return bool(mod and getattr(mod, "optimizer_steps", False))


def instant(name):
    """An instant event named `name` on the calling thread."""
    if _get():
        _get()["instant"](_b(name))


def counter(name, key, value):
    """Series `key` of counter `name` takes `value` (a number)."""
    if _get():
        try:
            v = float(value)
        except (TypeError, ValueError, OverflowError) as e:
            _warn_once((name, e.__class__), "counter %r: value %.40r is not a number"
                       % (name, value), e.__class__.__name__)
            return
        try:
            _get()["counter"](_b(name), _b(key), v)
        except Exception as e:  # noqa: BLE001  (e.g. a NUL in a name)
            _warn_once((name, "call"), "counter %r: cannot be recorded" % (name,), e)


def _cats(categories):
    """Composer's categories (a list or tuple of strings; one string is one
    category) as the library takes them: b"forward,train", or None."""
    if categories is None:
        return None
    if isinstance(categories, (str, bytes)):
        categories = [categories]
    try:
        parts = [c.decode("utf-8", "replace") if isinstance(c, bytes) else str(c)
                 for c in categories]
    except Exception:  # noqa: BLE001  (not iterable, a __str__ that raises)
        parts = [str(categories)] if not isinstance(categories, type) else []
    joined = ",".join(p for p in parts if p)
    return _b(joined.replace("\0", "")) if joined else None


class Marker:
    """Composer's Marker, without its Profiler: a duration event
    (start()/finish(), a context manager, or a decorator), instant() and
    counter(values).  categories reach the events' "cat"
    ("user_annotation,<categories>") and their args.categories;
    record_instant_on_start / record_instant_on_finish also record an
    instant event of the marker's name when it starts / finishes.

    Unlike Composer's, it never raises: a second start() before finish()
    opens a nested event of the same name (a decorated recursive function
    works), and finish() without start() is recorded as an instant."""

    def __init__(self, name, categories=None, record_instant_on_start=False,
                 record_instant_on_finish=False):
        self.name = name
        self.categories = tuple(categories) if isinstance(categories, (list, tuple)) \
            else categories
        self.record_instant_on_start = bool(record_instant_on_start)
        self.record_instant_on_finish = bool(record_instant_on_finish)
        self._bname = _b(name)
        self._bcats = _cats(categories)

    def _call(self, plain, with_cats=None):
        f = _get()
        if not f:
            return
        try:
            if self._bcats and with_cats and f[with_cats]:
                f[with_cats](self._bname, self._bcats)
            else:
                f[plain](self._bname)
        except Exception as e:  # noqa: BLE001  (e.g. a NUL in the name)
            _warn_once((self.name, "call"), "marker %r: cannot be recorded" % (self.name,), e)

    def start(self):
        self._call("start", "start_cat")
        if self.record_instant_on_start:
            self.instant()

    def finish(self):
        self._call("finish")  # by name: the start's record has the categories
        if self.record_instant_on_finish:
            self.instant()

    def instant(self):
        self._call("instant", "instant_cat")

    def counter(self, values):
        """Composer's Marker.counter({"key": value, ...}): one counter
        event per key, named after the marker (categories are not
        recorded on counters)."""
        try:
            items = list(values.items())
        except Exception as e:  # noqa: BLE001  (not a mapping)
            if _get():
                _warn_once((self.name, "values"), "marker %r: counter values %.40r are not "
                           "a mapping" % (self.name, values), e.__class__.__name__)
            return
        for k, v in items:
            counter(self.name, k, v)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.finish()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return wrapper


def marker(name, categories=None, record_instant_on_start=False, record_instant_on_finish=False):
    """A Marker named `name` (Composer's Profiler.marker()):
    `with traceprof.marker("x"): ...`, `@traceprof.marker("x")`, or
    m = traceprof.marker("x", categories=["train"]); m.start() ...
    m.finish()."""
    return Marker(name, categories, record_instant_on_start, record_instant_on_finish)
