"""traceprof's PyTorch hooks for unmodified scripts (loaded by this folder's
sitecustomize.py; acts only once the program itself imports torch).

TRACEPROF_STEP=torch
    A step ends each time an optimizer's step() returns, counted as
    PyTorch's own step tracking counts it (torch.profiler's
    KinetoStepTracker, fed by the optimizer step post-hook): every step()
    call of every optimizer, subclasses included.
      PyTorch 2.x: torch.optim.optimizer.register_optimizer_step_post_hook.
      PyTorch 1.13 has no global hook: every Optimizer wraps its class's
      step() at its first instance (Optimizer._hook_for_profile) and the
      wrapper calls Optimizer._optimizer_step_code() after each step; that
      method (a no-op there) becomes the hook.
TRACEPROF_PYTORCH=modules[,ops][,shapes]
    modules: one complete event per nn.Module forward call, named
      "nn.Module: CLASS QUALIFIED.NAME", through the global module forward
      hooks: the library's own, in C (preload/torch_modules.c), on PyTorch
      2.1+ with a GIL; the Python ones below otherwise.
    ops: the library's RecordFunction observer (preload/torch_ops.c), on
      x86-64 where this torch's headers show the layout it was written
      for: one "cpu_op" slice per op and autograd node, named as
      torch.profiler names them, on every thread.
    shapes (and ops where the observer cannot run): PyTorch's NVTX emission
      (what torch.autograd.profiler.emit_nvtx enters, without its device
      synchronization) started for the run at the first module call, on
      that thread (and the autograd threads it starts); traceprof's NVTX
      injection records the ranges, and the collector takes PyTorch's text
      ("aten::mm, seq = 3, op_id = 9, sizes = [...]") apart into the
      op's name, "Sequence number" and "Input Dims" (collector/nvtx_decode.c).
      It works with no GPU.  A PyTorch built without CUDA has no NVTX
      emission, which one "traceprof:" line says.  The emission holds the
      thread's profiler slot: it gives it up while the program's own
      profiler runs (_give_way).

Nothing here may break the program: every hook catches its own errors,
reports the first one, and stops itself.
"""

import os
import sys

# ctypes, threading and weakref are imported only once torch is: a program
# that never imports torch must not load anything for us.
_lib = None
_self = None
_said = set()
# True once the optimizer hook is in place; traceprof.step() then leaves the
# steps to it (a script that also calls traceprof.step() would count twice).
optimizer_steps = False


def _say(key, msg):
    if key in _said:
        return
    _said.add(key)
    sys.stderr.write("traceprof: %s\n" % msg)


def _functions():
    import ctypes
    try:
        lib = ctypes.CDLL(None)
        fns = (lib.traceprof_step, lib.traceprof_marker_start, lib.traceprof_marker_finish,
               lib.traceprof_recording)
    except (OSError, AttributeError):
        return None
    fns[0].argtypes = []
    fns[0].restype = None
    for f in fns[1:3]:
        f.argtypes = [ctypes.c_char_p]
        f.restype = None
    fns[3].argtypes = []
    fns[3].restype = ctypes.c_int
    return fns


def _words():
    v = os.environ.get("TRACEPROF_PYTORCH", "")
    w = set(x for x in v.split(",") if x)
    if w - {"modules", "ops", "shapes"}:
        return None  # the library has already said what is wrong with it
    return w


def install(module):
    """Adds the import hook (module: this module, put into sys.modules once
    torch is imported, for traceprof.step())."""
    global _self
    if os.environ.get("TRACEPROF_ENABLE", "1").lower() in ("0", "false", "no", "off"):
        return
    if _words() is None:
        return  # the library has already said what is wrong with it
    _self = module
    if "torch" in sys.modules:
        _on_torch(sys.modules["torch"])
        return
    sys.meta_path.insert(0, _TorchFinder())


class _TorchFinder:
    """A meta path finder that finds nothing itself: when the module named
    `name` ("torch" by default) is imported, it asks the other finders for
    its spec and wraps the loader so that `then` (_on_torch) runs right
    after the module's code.  It then leaves sys.meta_path (it acts once)."""

    def __init__(self, name="torch", then=None):
        self.name = name
        self.then = then or _on_torch

    def find_spec(self, name, path=None, target=None):
        if name != self.name:
            return None
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass
        import importlib.util
        spec = importlib.util.find_spec(name)
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        real = loader.exec_module

        then = self.then

        def exec_module(module):
            real(module)
            then(module)

        try:
            loader.exec_module = exec_module
        except (AttributeError, TypeError):
            pass
        return spec

    def find_module(self, name, path=None):  # Python < 3.4 protocol: never used
        return None


def _on_torch(torch):
    global _lib
    try:
        _lib = _functions()
        if _lib is None:
            return  # libtraceprof.so is not loaded here: nothing to record into
        sys.modules.setdefault("traceprof_torch", _self)
        if os.environ.get("TRACEPROF_STEP") == "torch":
            _hook_optimizer(torch)
        w = _words() or set()
        if "modules" in w:
            _hook_modules(torch)
        if "ops" in w or "shapes" in w:
            _hook_ops(torch, "shapes" in w)
    except Exception as e:
        _say("install", "the PyTorch hooks could not be installed (%s: %s); "
             "the program runs without them" % (type(e).__name__, e))


# ---------------------------------------------------------------------------
# Steps from the optimizer.

def _step_done(*_args, **_kwargs):
    _lib[0]()
    if _mod_hooks:
        _modules_follow()


def _hook_optimizer(torch):
    global optimizer_steps
    import torch.optim.optimizer as optmod
    reg = getattr(optmod, "register_optimizer_step_post_hook", None)
    if reg is not None:
        reg(_step_done)  # PyTorch 2.x: hook(optimizer, args, kwargs)
    else:
        opt = torch.optim.Optimizer
        if not hasattr(opt, "_optimizer_step_code"):
            _say("optimizer", "TRACEPROF_STEP=torch: this PyTorch (%s) has neither "
                 "register_optimizer_step_post_hook nor Optimizer._optimizer_step_code; "
                 "no steps will be counted" % getattr(torch, "__version__", "?"))
            return
        real = opt._optimizer_step_code

        def _optimizer_step_code(self):
            real(self)
            _step_done()

        opt._optimizer_step_code = _optimizer_step_code
    optimizer_steps = True


# ---------------------------------------------------------------------------
# Module forward events.

_tls = None
# module -> the bytes name of its events.  Weak: a model that goes away takes
# its names with it.
_names = None
# The prefix the collector knows module calls by (scripts/layout.spec
# MODULE_PREFIX; collector/convert.c writes them as python_function slices
# for TensorBoard's Module view).  pyboot imports nothing of traceprof's
# package; test/python/test_module_prefix.py checks the two agree.
MODULE_PREFIX = "nn.Module: "


def _name_tree(root):
    """Names every module under root by its qualified name in root."""
    for qual, m in root.named_modules():
        try:
            _names[m] = ("%s%s%s%s" % (MODULE_PREFIX, type(m).__name__, " " if qual else "", qual)
                         ).encode("utf-8", "replace")
        except TypeError:  # a module that is not hashable or weak-referenceable
            pass


def _class_name(module):
    return (MODULE_PREFIX + type(module).__name__).encode("utf-8", "replace")


def _name_of(module, stack):
    try:
        n = _names.get(module)
        if n is None:
            # Unknown: name the tree of the outermost module running on this
            # thread (or this one's when none is), once; a module outside
            # any tree keeps its class name alone.
            _name_tree(stack[0][0] if stack else module)
            n = _names.get(module)
            if n is None:
                n = _names[module] = _class_name(module)
        return n
    except TypeError:  # not hashable: no cache
        return _class_name(module)


def _running(a, f):
    """Whether frame a is f or one of the frames that called it."""
    while f is not None:
        if f is a:
            return True
        f = f.f_back
    return False


def _pre(module, _inputs):
    try:
        st = getattr(_tls, "stack", None)
        if st is None:
            st = _tls.stack = []
        # The module's call (the frame that called this hook).  Modules on
        # the stack whose call is no longer running end here: a
        # BaseException (KeyboardInterrupt, SystemExit) went through them,
        # which PyTorch's always_call does not see.
        f = sys._getframe(1)
        while st and not _running(st[-1][2], f):
            _lib[2](st.pop()[1])
        n = _name_of(module, st)
        st.append((module, n, f))
        _lib[1](n)
    except Exception as e:
        _hook_failed(e)


def _post(module, _inputs, _output):
    try:
        st = getattr(_tls, "stack", None) or ()
        # Pop to this module.  Without always_call (PyTorch < 2.1) a forward
        # that raised left its entry above it: its end is first seen here,
        # so it ends here, inside this module, rather than never.  A module
        # not on the stack (its pre hook did not run) ends nothing.
        for k in range(len(st) - 1, -1, -1):
            if st[k][0] is module:
                for _m, n, _f in reversed(st[k:]):
                    _lib[2](n)
                del st[k:]
                return
    except Exception as e:
        _hook_failed(e)


# The functions PyTorch calls (hooks, the namer, weak reference callbacks):
# Dynamo must not compile them (_on_dynamo).
_entries = [_step_done, _pre, _post]

_handles = []
# The module hooks as (register function, hook, keyword arguments), each
# registered while _handles holds its handle.  With --step torch they are
# registered only while a step records (_modules_follow, after each step):
# any global forward hook sends every module call down _call_impl's slow
# path, so between windows the program runs as with no hook at all, as it
# does between torch.profiler's windows.  With other step sources (which
# run no Python of ours at a step) they stay registered.
_mod_hooks = []
# Whether the schedule wants the hooks registered, and how many compiles and
# compiled-module calls want them out of PyTorch's dicts (traceprof_compile.py).
# _lock (an RLock) orders changes to these and _handles between threads.
_want = False
_hide = 0
_lock = None
_unwind_c = None  # the library's traceprof_torch_module_unwind (C hooks only)


def _modules_set(on):
    global _want
    with _lock:
        _want = on
        _modules_apply()


def _modules_apply():
    """Registers or removes the hooks as _want and _hide say (_lock held)."""
    on = _want and not _hide
    if on == bool(_handles):
        return
    if on:
        for reg, hook, kw in _mod_hooks:
            _handles.append(reg(hook, **kw))
    else:
        for h in _handles:
            h.remove()
        del _handles[:]


def _modules_follow():
    try:
        _modules_set(bool(_lib[3]()))
    except Exception as e:
        _hook_failed(e)


def _hook_failed(e):
    del _mod_hooks[:]
    for h in _handles:
        h.remove()
    del _handles[:]
    _say("modules", "TRACEPROF_PYTORCH=modules: module events stopped after an internal "
         "error (%s: %s)" % (type(e).__name__, e))


def _hook_modules(torch):
    global _tls, _names, _lock
    import threading
    import weakref
    _tls = threading.local()
    _lock = threading.RLock()
    _names = weakref.WeakKeyDictionary()
    mm = torch.nn.modules.module
    # Test only (test/integration/torch_modules_py.sh, docs/development.md):
    # TP_TEST_TORCH_MODULE_HOOKS=python[-no-always-call] runs the Python
    # hooks below where the C ones would be.
    force = os.environ.get("TP_TEST_TORCH_MODULE_HOOKS", "")
    if force.startswith("python") or not _sibling("traceprof_modules_c").hook(_self, mm, weakref):
        _mod_hooks.append((mm.register_module_forward_pre_hook, _pre, {}))
        if force != "python-no-always-call" and _always_call(mm):
            # A forward that raised ends when it raised (see _post).
            _mod_hooks.append((mm.register_module_forward_hook, _post, {"always_call": True}))
        else:
            _mod_hooks.append((mm.register_module_forward_hook, _post, {}))
    if optimizer_steps:
        _modules_follow()
    else:
        _modules_set(True)
    import atexit
    atexit.register(_modules_exit)
    if "torch._dynamo" in sys.modules:
        _on_dynamo(sys.modules["torch._dynamo"])
    else:
        sys.meta_path.insert(0, _TorchFinder("torch._dynamo", _on_dynamo))


def _modules_exit():
    """At exit, the module events still open here end (a BaseException)."""
    try:
        if _unwind_c is not None:
            _unwind_c()
        st = getattr(_tls, "stack", None) or []
        while st:
            _lib[2](st.pop()[1])
    except Exception:
        pass


def _always_call(mm):
    """Whether PyTorch has always_call (2.1+): a global forward hook that
    also runs after a forward that raised."""
    import inspect
    try:
        return "always_call" in inspect.signature(mm.register_module_forward_hook).parameters
    except (AttributeError, TypeError, ValueError):
        return False


def _sibling(name):
    """NAME.py from this folder (not on sys.path), loaded as this file is."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), name + ".py")
    mod = type(sys)(name)
    mod.__file__ = path
    with open(path) as f:
        exec(compile(f.read(), path, "exec"), mod.__dict__)
    return mod


def _hide_hooks(d):
    """1: the hooks leave PyTorch's dicts until the matching -1."""
    global _hide
    with _lock:
        _hide += d
        _modules_apply()


def _on_dynamo(dynamo):
    """Runs once torch._dynamo is imported (torch.compile imports it)."""
    try:
        _sibling("traceprof_compile").install(_self, dynamo)
    except Exception as e:
        _say("compile", "TRACEPROF_PYTORCH=modules: the torch.compile support could not be "
             "installed (%s: %s); compiled code may see the module hooks"
             % (type(e).__name__, e))


# ---------------------------------------------------------------------------
# Operators: the library's RecordFunction observer, or PyTorch's NVTX
# emission.

_nvtx = None

# at::RecordFunctionCallback's data members, in order, as (type, name) with
# the spaces taken out: the layout preload/torch_ops.c passes by value.
_CALLBACK_MEMBERS = [
    ("StartCallback", "start_"),
    ("EndCallback", "end_"),
    ("double", "sampling_prob_"),
    ("std::array<bool,static_cast<size_t>(RecordScope::NUM_SCOPES)>", "scopes_"),
    ("bool", "needs_inputs_"),
    ("bool", "needs_outputs_"),
    ("bool", "needs_ids_"),
]
_CALLBACK_TYPES = [
    "usingStartCallback=std::unique_ptr<ObserverContext>(*)(constRecordFunction&);",
    "usingEndCallback=void(*)(constRecordFunction&,ObserverContext*);",
]


def _uncomment(text):
    import re
    return re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)


def _record_scopes(text):
    """(NUM_SCOPES, USER_SCOPE) from ATen/record_function.h's RecordScope;
    None when the enum is not the plain list it has always been."""
    import re
    m = re.search(r"enum\s+class\s+(?:\w+\s+)*RecordScope\s*:\s*uint8_t\s*\{(.*?)\}", text,
                  flags=re.S)
    if not m:
        return None
    names = [x.strip() for x in m.group(1).split(",") if x.strip()]
    names = [n.split("=")[0].strip() if n.split("=")[-1].strip() == "0" else n for n in names]
    if not all(re.match(r"^\w+$", n) for n in names) or "NUM_SCOPES" not in names \
            or "USER_SCOPE" not in names:
        return None
    return names.index("NUM_SCOPES"), names.index("USER_SCOPE")


def _callback_layout_ok(text):
    """Whether RecordFunctionCallback's data members and callback types are
    the ones preload/torch_ops.c lays out (and it has no virtual table)."""
    import re
    m = re.search(r"class\s+TORCH_API\s+RecordFunctionCallback\s*\{(.*?)\n\};", text, flags=re.S)
    if not m or "virtual" in m.group(1):
        return False
    body = m.group(1)
    flat = re.sub(r"\s+", "", body)
    if not all(t in flat for t in _CALLBACK_TYPES):
        return False
    priv = body.rsplit("private:", 1)
    if len(priv) != 2 or "public:" in priv[1] or "protected:" in priv[1]:
        return False
    members = []
    for decl in priv[1].split(";"):
        decl = decl.split("=")[0].strip()
        if not decl:
            continue
        typ, _, name = decl.rpartition(" ")
        members.append((re.sub(r"\s+", "", typ), name))
    return members == _CALLBACK_MEMBERS


def _libtorch_cpu(torch):
    """The path of the libtorch_cpu.so this process loaded."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.rstrip("\n").split(None, 5)[-1]
                if path.endswith("/libtorch_cpu.so"):
                    return path
    except OSError:
        pass
    return os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")


def _start_observer(torch):
    """The library's RecordFunction observer (preload/torch_ops.c): every
    op and autograd node of every thread, at the cost of RecordFunction and
    one record, without the text PyTorch's NVTX emission formats for each
    op.  Only where this torch's own headers show the callback layout the
    library was written for, and its bindings agree on the scopes.  False:
    the caller uses the NVTX emission."""
    import ctypes
    import platform
    if platform.machine() not in ("x86_64", "AMD64") or \
            os.environ.get("TP_TEST_TORCH_OPS") == "nvtx":
        return False
    hdr = os.path.join(os.path.dirname(torch.__file__), "include", "ATen", "record_function.h")
    try:
        with open(hdr) as f:
            text = _uncomment(f.read())
        from torch._C._profiler import RecordScope
        members = RecordScope.__members__
        scopes = _record_scopes(text)
        if scopes is None or not _callback_layout_ok(text) or len(members) != scopes[0] \
                or int(members["USER_SCOPE"]) != scopes[1]:
            return False
        start = ctypes.CDLL(None).traceprof_torch_ops_start
    except (AttributeError, ImportError, KeyError, OSError, TypeError, ValueError):
        return False
    start.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
    start.restype = ctypes.c_int
    return start(_libtorch_cpu(torch).encode(), scopes[0], scopes[1]) == 1


# True once the observer is in place (bench/torch_ab.py reads it).
observer = False


def _hook_ops(torch, shapes):
    global observer
    if not shapes and _start_observer(torch):
        observer = True
        return
    built = False
    try:
        built = bool(torch.backends.cuda.is_built())
    except Exception:
        built = getattr(torch.version, "cuda", None) is not None
    if not built:
        _say("ops", "TRACEPROF_PYTORCH=%s: this PyTorch (%s) is built without CUDA, and "
             "operator events come from its NVTX emission, which needs a CUDA build; "
             "recording the rest" % (os.environ.get("TRACEPROF_PYTORCH", ""),
                                     getattr(torch, "__version__", "?")))
        return
    mm = torch.nn.modules.module
    handle = []

    def enter(_module, _inputs):
        # Entered at the first module call, not at import: PyTorch's NVTX
        # callbacks are per thread (the autograd threads inherit them), and
        # the first module call is on the thread that trains.
        global _nvtx
        handle[0].remove()
        if _nvtx is not None:
            return
        try:
            _nvtx = True
            _start_nvtx(torch, shapes)
        except Exception as e:
            _nvtx = False
            _say("ops", "TRACEPROF_PYTORCH=ops: PyTorch's NVTX emission did not start "
                 "(%s: %s); no operator events" % (type(e).__name__, e))

    handle.append(mm.register_module_forward_pre_hook(enter))


def _start_nvtx(torch, shapes):
    """PyTorch's NVTX emission, from traceprof_torch_nvtx.py beside this file
    (loaded as sitecustomize.py loads this one: this folder is not on
    sys.path)."""
    global _nvtx_mod
    if _nvtx_mod is None:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "traceprof_torch_nvtx.py")
        mod = type(sys)("traceprof_torch_nvtx")
        mod.__file__ = path
        with open(path) as f:
            exec(compile(f.read(), path, "exec"), mod.__dict__)
        _nvtx_mod = mod
    _nvtx_mod.start(torch, shapes, _say)


_nvtx_mod = None
