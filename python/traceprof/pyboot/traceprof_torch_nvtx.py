"""PyTorch's NVTX emission of operator events for traceprof's PyTorch hooks
(traceprof_torch.py loads this file for --pytorch shapes, and for ops where
the library's RecordFunction observer cannot run), and how it gives the
thread's profiler slot to the program's own profilers."""

import os

_say = None


def start(torch, shapes, say):
    """What torch.autograd.profiler.emit_nvtx(record_shapes=shapes).__enter__()
    does, less its torch.cuda.synchronize(): that call fails in a CUDA build
    without a driver (the program would see an error it never caused), and on
    a GPU it would create the CUDA context at a moment the program did not
    choose.  The ranges need no synchronization: traceprof times them on the
    CPU, where PyTorch emits them.

    The emission holds this thread's profiler slot, which the program's own
    profilers (torch.profiler.profile, emit_nvtx, emit_itt, the legacy
    profile) need too: PyTorch refuses a second one with "Profiler is
    already enabled on this thread".  So the functions they enter and leave
    it by are wrapped (_give_way): the emission gives the slot up while the
    program's profiler holds it, and takes it back after."""
    import threading
    global _nvtx_tls, _say
    _say = say
    ap = torch.autograd.profiler
    cfg = ap.ProfilerConfig(ap.ProfilerState.NVTX, shapes, False, False, False, False,
                            ap._ExperimentalConfig())
    enable, disable = _give_way(torch)
    _slot.enable = lambda: enable(cfg, set())  # noqa: E731
    _slot.disable = disable
    _slot.thread = threading.get_ident()
    start = getattr(ap, "_run_on_profiler_start", None)
    if start is not None:
        start()
    if torch.autograd._profiler_enabled():
        # The program's profiler holds the slot already: the emission
        # starts when it lets go.
        _slot.yielded = True
        _say_yield()
    else:
        _slot.enable()
    # Stopped when the thread ends (the main thread's at interpreter exit):
    # a thread-local object's finalizer runs on its thread as that thread's
    # state is cleared.  PyTorch warns of a leaked callback handle on stderr
    # otherwise.
    _nvtx_tls = threading.local()
    _nvtx_tls.stop = _NvtxStop(_slot)


_nvtx_tls = None


class _Slot:
    """The thread whose profiler slot the emission uses
    (threading.get_ident()), the functions that enable and disable the
    emission there, and whether it has given the slot to the program's own
    profiler for now."""
    thread = None
    enable = None
    disable = None
    yielded = False


_slot = _Slot()

# torch's functions that take and free a thread's profiler slot, by module:
# (enable, disable) names.  Each module holds its own reference (imported by
# name), so each is wrapped where it is looked up.
_SLOT_FUNCTIONS = [
    ("torch.autograd", ("_enable_profiler", "_disable_profiler")),
    ("torch.autograd.profiler", ("_enable_profiler", "_disable_profiler")),
    ("torch.autograd", ("_enable_profiler_legacy", "_disable_profiler_legacy")),
    ("torch.autograd.profiler_legacy", ("_enable_profiler_legacy", "_disable_profiler_legacy")),
]


def _say_yield():
    _say("yield", "TRACEPROF_PYTORCH=%s: the program's own PyTorch profiler needs this "
         "thread's profiler slot, which PyTorch's NVTX emission of operator events holds; "
         "operator events pause while the program's profiler runs and resume after it "
         "(--pytorch ops records them alongside it where the observer runs)"
         % os.environ.get("TRACEPROF_PYTORCH", ""))


def _here():
    import threading
    return threading.get_ident() == _slot.thread


def _yield_slot():
    """Before the program's profiler takes the slot on the emission's thread.
    Raises nothing (the caller is the program's call)."""
    try:
        if _here() and not _slot.yielded:
            _slot.yielded = True
            _say_yield()
            _slot.disable()
    except Exception:
        pass  # not enabled after all: the program's call will say what it says


def _take_slot(torch):
    """After the program's profiler let the slot go (or failed to take it).
    Raises nothing."""
    try:
        if not (_here() and _slot.yielded):
            return
        if torch.autograd._profiler_enabled():
            return  # still held (a profiler the program nested, or its own call failed)
        _slot.yielded = False
        _slot.enable()
    except Exception as e:
        try:
            _slot.yielded = True
            _say("ops", "TRACEPROF_PYTORCH=%s: PyTorch's NVTX emission did not resume after "
                 "the program's profiler (%s: %s); no more operator events"
                 % (os.environ.get("TRACEPROF_PYTORCH", ""), type(e).__name__, e))
        except Exception:
            pass  # at interpreter exit, with this module's globals gone


def _give_way(torch):
    """Wraps the program-visible functions of _SLOT_FUNCTIONS; returns
    torch.autograd's own (enable, disable) for the emission itself."""
    import functools
    import importlib
    ours = None
    for modname, (en, dis) in _SLOT_FUNCTIONS:
        try:
            mod = importlib.import_module(modname)
        except ImportError:
            continue
        real_en, real_dis = getattr(mod, en, None), getattr(mod, dis, None)
        if real_en is None or real_dis is None or getattr(real_en, "_traceprof", False):
            continue
        if ours is None and en == "_enable_profiler":
            ours = (real_en, real_dis)

        def enable(*args, _real=real_en, **kwargs):
            _yield_slot()
            try:
                return _real(*args, **kwargs)
            except BaseException:
                _take_slot(torch)
                raise

        def disable(*args, _real=real_dis, **kwargs):
            try:
                return _real(*args, **kwargs)
            finally:
                _take_slot(torch)

        for w, real in ((enable, real_en), (disable, real_dis)):
            functools.update_wrapper(w, real)
            w._traceprof = True
        setattr(mod, en, enable)
        setattr(mod, dis, disable)
    if ours is None:
        import torch.autograd as ag
        ours = (ag._enable_profiler, ag._disable_profiler)
        ours = tuple(getattr(f, "__wrapped__", f) for f in ours)
    return ours


class _NvtxStop:
    """Made on the emission's thread, finalized there.  It keeps what it
    needs itself: at interpreter exit this module's globals may be gone
    first."""

    def __init__(self, slot):
        self.slot = slot

    def __del__(self):
        try:
            if not self.slot.yielded:
                self.slot.disable()
        except Exception:
            pass
