"""torch.compile under TRACEPROF_PYTORCH=modules: Dynamo must not see the
module hooks.  Loaded by traceprof_torch.py (its _on_dynamo, once the
program imports torch._dynamo), which it acts on through install(tt, ...).

Dynamo traces a module call inside a compiled region through _call_impl
when any global forward hook exists, and cannot trace ours (builtins, or
Python that calls ctypes): fullgraph=True fails with Unsupported, and
without it every module call becomes a graph break, which splits the graph
and changes what Inductor fuses (and so the losses' last bits).  A compiled
region runs no module call at run time anyway: its modules are in the
graph.  So the hooks leave PyTorch's dicts
  - while Dynamo compiles (its compile start and end callbacks,
    torch._dynamo.callback), so that it traces what it traces without
    traceprof, and the guards it makes (on empty dicts, as without us) need
    no recompile while the hooks are back between compiles;
  - during a call of a torch.compile(module) wrapper (OptimizedModule): its
    __call__ warns on stderr when a global hook exists, and its module's
    own call is the compiled region's; the event for the call is recorded
    here, named after the compiled module.
The dicts are global: another thread's module calls meanwhile get no
events.  Module events inside a compiled region (between its graphs) are
not recorded; its ops are (--pytorch ops).
"""

import sys


def install(tt, dynamo):
    """tt: the traceprof_torch module; dynamo: torch._dynamo."""
    handler = getattr(sys.modules.get("torch._dynamo.callback"), "callback_handler", None)
    ef = sys.modules.get("torch._dynamo.eval_frame")
    if handler is None or not hasattr(handler, "register_start_callback") or \
            not hasattr(ef, "set_code_exec_strategy"):
        tt._say("compile", "TRACEPROF_PYTORCH=modules: this PyTorch (%s) has no Dynamo compile "
                "callbacks; torch.compile will trace the module hooks (graph breaks, and "
                "fullgraph=True fails): use --pytorch ops without modules with torch.compile"
                % getattr(sys.modules.get("torch"), "__version__", "?"))
        return

    def start(*_args):
        try:
            tt._hide_hooks(1)
        except Exception as e:
            tt._hook_failed(e)

    def end(*_args):
        try:
            tt._hide_hooks(-1)
        except Exception as e:
            tt._hook_failed(e)

    # Dynamo compiles each new frame that runs while a compiled function's
    # callback is set, ours too: the hooks of a module that runs there
    # (model.compile(), or a module called by a compiled function), the
    # namer and what they call (WeakKeyDictionary) would be compiled, and
    # fullgraph=True fails on the ctypes calls.  Our entry points and
    # everything they call run as plain Python.
    skip = ef.FrameExecStrategy(ef.FrameAction.SKIP, ef.FrameAction.SKIP)
    for f in tt._entries + [start, end]:
        ef.set_code_exec_strategy(f.__code__, skip)
    handler.register_start_callback(start)
    handler.register_end_callback(end)
    # torch._dynamo.reset() clears the callbacks: ours come back after it.
    real_clear = handler.clear

    def clear():
        real_clear()
        handler.register_start_callback(start)
        handler.register_end_callback(end)

    handler.clear = clear
    _wrap_optimized_module(tt, ef)


def _wrap_optimized_module(tt, eval_frame):
    cls = getattr(eval_frame, "OptimizedModule", None)
    real = getattr(cls, "__dict__", {}).get("__call__")
    if real is None:
        return

    def __call__(self, *args, **kwargs):
        if not tt._handles:  # no hooks now (between windows, in a compile): nothing to hide
            return real(self, *args, **kwargs)
        name = None
        try:
            tt._hide_hooks(1)
            name = _compiled_name(tt, self)
            tt._lib[1](name)
        except Exception as e:
            tt._hook_failed(e)
        try:
            return real(self, *args, **kwargs)
        finally:
            try:
                if name is not None:
                    tt._lib[2](name)
                tt._hide_hooks(-1)
            except Exception as e:
                tt._hook_failed(e)

    __call__.__wrapped__ = real
    __call__.__doc__ = real.__doc__
    cls.__call__ = __call__


def _compiled_name(tt, opt):
    """The event name of a torch.compile(module) wrapper's call: its
    module's, or the wrapper's class name where it has none."""
    mod = getattr(opt, "_orig_mod", None)
    if mod is None:
        return tt._class_name(opt)
    return tt._name_of(mod, getattr(tt._tls, "stack", None) or ())
