"""The module calls' prefix: the Python hooks of pyboot name module calls
with the prefix that collector/convert.c (scripts/layout.spec MODULE_PREFIX)
turns into TensorBoard's python_function module events."""

import importlib.util
import os

from traceprof import layout


def test_pyboot_names_modules_with_the_layout_prefix(top):
    path = os.path.join(top, "scripts", "traceprof", "pyboot", "traceprof_torch.py")
    spec = importlib.util.spec_from_file_location("tp_pyboot_torch", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # imports os and sys only: torch is not loaded
    assert mod.MODULE_PREFIX == layout.MODULE_PREFIX

    class Linear:  # a stand-in class: only its name is read
        pass
    assert mod._class_name(Linear()) == (layout.MODULE_PREFIX + "Linear").encode()
