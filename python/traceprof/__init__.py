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
        try:
            fns = _lookup()
        except BaseException:  # noqa: BLE001  (ctypes unimportable, e.g. at finalization)
            return None  # not cached: a later call may find it
        _Lazy.fns = fns
        _Lazy.looked = True
    return _Lazy.fns


# Every public call runs its body inside _total(): without the library the
# calls are no-ops that raise nothing, so with it they raise nothing either
# (issue 41 item 3): not what an argument's __float__, __str__, __repr__ or
# __hash__ raises, not a ctypes error, not a closed or missing sys.stderr at
# finalization.  KeyboardInterrupt alone goes through: it is the program's
# ^C arriving while this code runs, which the no-op would have seen at its
# next bytecode just the same.
def _total(fn, *args):
    try:
        return fn(*args)
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001
        return None


def _b(s):
    """s as the library takes a name: bytes (exactly bytes: a subclass may
    override anything); C reads it up to its first NUL."""
    try:
        if not isinstance(s, bytes):
            s = str(s)
            # A str subclass may override encode(): the plain one encodes.
            s = str.encode(s, "utf-8", "replace") if isinstance(s, str) else b"?"
        s = bytes(s) if type(s) is not bytes else s
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001  (a __str__ that raises: never ours to raise)
        return b"?"
    return s


def _show(x, n=60):
    """repr(x) cut to n characters for a message; never raises."""
    try:
        r = repr(x)
        r = str.__str__(r) if isinstance(r, str) else "?"
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001
        r = "<%s>" % type(x).__name__
    return r if len(r) <= n else r[:n - 3] + "..."


def enabled():
    """True when calls are recorded: libtraceprof.so is loaded in this
    process and profiling is on (not TRACEPROF_ENABLE=0, no configuration
    error, no internal failure).  Whether the current step falls in a
    recording window of TRACEPROF_SCHEDULE is not part of the answer."""
    f = _get()
    if f is None:
        return False
    return bool(_total(f["active"])) if f["active"] else True


_warned = set()
_WARN_KEYS = 256  # kinds of mistakes remembered: a loop of new names cannot grow it


def _warn_once(key, what, detail):
    # A bad value is dropped with one line per kind of mistake, like the
    # library's own; silently when nothing is recorded anyway.  key is made
    # of bytes and classes only: always hashable.
    f = _get()
    if f and f["active"] and not f["active"]():
        return
    if key in _warned or len(_warned) >= _WARN_KEYS:
        return
    _warned.add(key)
    sys.stderr.write("traceprof: %s (%s); dropped\n" % (what, detail))


def step():
    """The next step starts (torch.profiler.profile.step()).  Under
    TRACEPROF_STEP=torch the optimizer makes the steps, and this is a no-op
    (else a script that also calls it would count each step twice)."""
    _total(_step)


def _step():
    f = _get()
    if f and not _optimizer_steps():
        f["step"]()


def _optimizer_steps():
    """True when TRACEPROF_STEP=torch's optimizer hook is in place
    (pyboot/traceprof_torch.py)."""
    import sys
    mod = sys.modules.get("traceprof_torch")
    return bool(mod and getattr(mod, "optimizer_steps", False))


def instant(name):
    """An instant event named `name` on the calling thread."""
    _total(_instant, name)


def _instant(name):
    f = _get()
    if f:
        f["instant"](_b(name))


def counter(name, key, value):
    """Series `key` of counter `name` takes `value` (a number)."""
    _total(_counter, name, key, value)


def _counter(name, key, value):
    f = _get()
    if not f:
        return
    bname = _b(name)
    try:
        v = float(value)
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # noqa: BLE001  (any __float__: a meta tensor's RuntimeError)
        cls = type(e)
        _total(_warn_once, (bname, cls), "counter %s: value %s is not a number"
               % (_show(name), _show(value, 40)), cls.__name__)
        return
    try:
        f["counter"](bname, _b(key), v)
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # noqa: BLE001  (a ctypes error)
        _warn_once((bname, "call"), "counter %s: cannot be recorded" % _show(name),
                   type(e).__name__)


def _cats(categories):
    """Composer's categories (a list or tuple of strings; one string is one
    category) as the library takes them: b"forward,train", or None."""
    if categories is None:
        return None
    if isinstance(categories, (str, bytes)):
        categories = [categories]
    try:
        parts = [bytes.decode(_b(c), "utf-8", "replace") for c in categories]
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001  (not iterable, an __iter__ that raises)
        parts = [bytes.decode(_b(categories), "utf-8", "replace")] \
            if not isinstance(categories, type) else []
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
        self.categories = categories
        self.record_instant_on_start = self.record_instant_on_finish = False
        self._bname, self._bcats = b"?", None
        _total(self._setup, name, categories, record_instant_on_start, record_instant_on_finish)

    def _setup(self, name, categories, on_start, on_finish):
        if isinstance(categories, (list, tuple)):
            self.categories = tuple(categories)
        self._bname = _b(name)
        self._bcats = _cats(categories)
        self.record_instant_on_start = bool(on_start)
        self.record_instant_on_finish = bool(on_finish)

    def _call(self, plain, with_cats=None):
        _total(self._call_lib, plain, with_cats)

    def _call_lib(self, plain, with_cats):
        f = _get()
        if not f:
            return
        try:
            if self._bcats and with_cats and f[with_cats]:
                f[with_cats](self._bname, self._bcats)
            else:
                f[plain](self._bname)
        except KeyboardInterrupt:
            raise
        except BaseException as e:  # noqa: BLE001  (a ctypes error)
            _warn_once((self._bname, "call"), "marker %s: cannot be recorded"
                       % _show(self.name), type(e).__name__)

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
        _total(self._counter, values)

    def _counter(self, values):
        if not _get():
            return
        try:
            items = list(values.items())
        except KeyboardInterrupt:
            raise
        except BaseException as e:  # noqa: BLE001  (not a mapping)
            _warn_once((self._bname, "values"), "marker %s: counter values %s are not "
                       "a mapping" % (_show(self.name), _show(values, 40)), type(e).__name__)
            return
        for kv in items:
            try:
                k, v = kv
            except KeyboardInterrupt:
                raise
            except BaseException:  # noqa: BLE001  (an items() that yields no pairs)
                continue
            counter(self.name, k, v)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.finish()
        return False

    def __call__(self, fn):
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        # fn's name and doc, when its attributes can be read.
        return _total(_wraps, fn, wrapper) or wrapper


def _wraps(fn, wrapper):
    return functools.wraps(fn)(wrapper)


def marker(name, categories=None, record_instant_on_start=False, record_instant_on_finish=False):
    """A Marker named `name` (Composer's Profiler.marker()):
    `with traceprof.marker("x"): ...`, `@traceprof.marker("x")`, or
    m = traceprof.marker("x", categories=["train"]); m.start() ...
    m.finish()."""
    return Marker(name, categories, record_instant_on_start, record_instant_on_finish)


def _own_namespace():
    """At interpreter exit CPython sets the globals of every module still
    alive to None, this one's before those of the modules imported earlier
    (the program's __main__ among them).  A Marker or a function the program
    holds would then raise TypeError ('NoneType' object is not callable)
    from a __del__ or an atexit handler of its own.  So every function here
    runs on a copy of the module's namespace, which nothing clears: the
    objects in it (_Lazy, _warned) are the module's own, so state is shared."""
    import types
    ns = dict(globals())

    def rebuilt(f):
        g = types.FunctionType(f.__code__, ns, f.__name__, f.__defaults__, f.__closure__)
        g.__kwdefaults__ = f.__kwdefaults__
        g.__doc__, g.__qualname__, g.__module__ = f.__doc__, f.__qualname__, f.__module__
        return g

    for k, v in list(ns.items()):
        if isinstance(v, types.FunctionType) and v.__module__ == __name__:
            ns[k] = rebuilt(v)
    for k, v in list(vars(Marker).items()):
        if isinstance(v, types.FunctionType):
            setattr(Marker, k, rebuilt(v))
    globals().update((k, v) for k, v in ns.items() if isinstance(v, types.FunctionType))


_own_namespace()
del _own_namespace
