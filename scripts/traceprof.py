"""traceprof's Python hook: steps and markers from Python (e.g. a PyTorch
training loop) for a program run under `traceprof run` or with
libtraceprof.so in LD_PRELOAD.  Standard library only (ctypes).

    import traceprof

    for batch in loader:
        with traceprof.marker("forward"):
            loss = model(batch)
        traceprof.counter("loss", "value", float(loss))
        traceprof.step()            # torch.profiler.profile.step() semantics

    @traceprof.marker("eval")      # as a decorator (Composer's Marker usage)
    def evaluate(): ...

Every call is a no-op when the library is not loaded in this process, so the
calls can stay in production code.  traceprof.enabled() says which.
"""

import ctypes
import functools

__all__ = ["step", "marker", "instant", "counter", "enabled", "Marker"]


def _lookup():
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
    return fns


_fns = _lookup()


def _b(s):
    if isinstance(s, bytes):
        return s
    return str(s).encode("utf-8", "replace")


def enabled():
    """True when libtraceprof.so is loaded in this process."""
    return _fns is not None


def step():
    """The next step starts (torch.profiler.profile.step()).  Under
    TRACEPROF_STEP=torch the optimizer makes the steps, and this is a no-op
    (else a script that also calls it would count each step twice)."""
    if _fns and not _optimizer_steps():
        _fns["step"]()


def _optimizer_steps():
    """True when TRACEPROF_STEP=torch's optimizer hook is in place
    (scripts/pyboot/traceprof_torch.py)."""
    import sys
    mod = sys.modules.get("traceprof_torch")
    return bool(mod and getattr(mod, "optimizer_steps", False))


def instant(name):
    """An instant event named `name` on the calling thread."""
    if _fns:
        _fns["instant"](_b(name))


def counter(name, key, value):
    """Series `key` of counter `name` takes `value` (a number)."""
    if _fns:
        _fns["counter"](_b(name), _b(key), float(value))


class Marker:
    """A duration event: start()/finish(), a context manager, or a
    decorator.  Composer's Marker, without its Profiler."""

    def __init__(self, name):
        self.name = name
        self._bname = _b(name)

    def start(self):
        if _fns:
            _fns["start"](self._bname)

    def finish(self):
        if _fns:
            _fns["finish"](self._bname)

    def instant(self):
        instant(self.name)

    def counter(self, values):
        """Composer's Marker.counter({"key": value, ...})."""
        for k, v in values.items():
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


def marker(name):
    """A Marker named `name`: `with traceprof.marker("x"): ...` or
    `@traceprof.marker("x")`."""
    return Marker(name)
