"""The cases of row 9's in-process loops (bench/torch_ab.py in wall time,
bench/torch_instr.py in instructions): one training loop
(test/programs/torch_block.py) in a process running under traceprof with
TRACEPROF_STEP=torch and TRACEPROF_PYTORCH=modules,ops, switched between
  plain     traceprof's module hooks removed, no operator source (the
            optimizer's step hook stays: a few microseconds);
  profiler  the same, inside torch.profiler.profile with CPU activity;
  modules   traceprof's module hooks, as `--pytorch modules` installs them;
  ops       those hooks and the library's RecordFunction observer, as
            `--pytorch ops` starts it (preload/torch_ops.c; x86-64);
  ops_nvtx  those hooks and PyTorch's NVTX emission, the way ops go where
            the observer cannot run and with `shapes` (CUDA builds only).
"""
import ctypes
import os
import sys
from contextlib import contextmanager

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "programs"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch_block import setup  # noqa: E402


class Loop:
    def __init__(self, who):
        tt = sys.modules.get("traceprof_torch")
        if tt is None or not tt._handles:
            sys.exit("%s: run it under traceprof with TRACEPROF_PYTORCH=modules,ops" % who)
        self.tt = tt
        self.hooks = [(h.hooks_dict_ref(), h.id) for h in tt._handles]
        self.saved = {k: d[k] for d, k in self.hooks}
        self.ap = torch.autograd.profiler
        self.model, self.opt, self.x, self.y = setup()
        self.it()  # the first module call starts the NVTX emission: stop it again
        if tt._nvtx:
            self.ap._disable_profiler()
        self.nvtx_cfg = self.ap.ProfilerConfig(self.ap.ProfilerState.NVTX, False, False, False,
                                               False, False, self.ap._ExperimentalConfig())
        stop = ctypes.CDLL(None).traceprof_torch_ops_stop
        stop.argtypes, stop.restype = [], None
        self.stop = stop
        stop()
        self.cases = ["plain", "profiler", "modules"] + (["ops"] if tt.observer else []) + \
            (["ops_nvtx"] if tt._nvtx or (tt.observer and torch.backends.cuda.is_built()) else [])

    def it(self):
        self.opt.zero_grad()
        loss = F.cross_entropy(self.model(self.x), self.y)
        loss.backward()
        self.opt.step()

    def _hooks(self, on):
        for d, k in self.hooks:
            if on:
                d[k] = self.saved[k]
            else:
                d.pop(k, None)

    @contextmanager
    def case(self, c):
        """Runs the body in case c, and leaves it plain again."""
        self._hooks(c in ("modules", "ops", "ops_nvtx"))
        prof = None
        if c == "profiler":
            prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU])
            prof.__enter__()
        elif c == "ops":
            self.tt._start_observer(torch)
        elif c == "ops_nvtx":
            self.ap._enable_profiler(self.nvtx_cfg, set())
        try:
            yield
        finally:
            if prof is not None:
                prof.__exit__(None, None, None)
            elif c == "ops":
                self.stop()
            elif c == "ops_nvtx":
                self.ap._disable_profiler()
            self._hooks(False)
