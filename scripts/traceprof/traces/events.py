"""What summary reads in an event: its group (CUDA API, GPU activity,
marker, step) and its numbers."""

import math
import re

from .. import layout as L

API_CATS = {L.CAT_CUDA_RUNTIME, L.CAT_CUDA_DRIVER}
GPU_CATS = {L.CAT_KERNEL, L.CAT_GPU_MEMCPY, L.CAT_GPU_MEMSET}
# python_function: nn.Module calls (--pytorch modules), which are markers too.
MARKER_CATS = {L.CAT_USER_ANNOTATION, L.CAT_GPU_USER_ANNOTATION, L.CAT_PYTHON_FUNCTION}
STEP_RE = re.compile(r"^%s(\d+)$" % re.escape(L.STEP_PREFIX))


def selected(by, cat, name):
    is_step = bool(STEP_RE.match(name))
    if by == "all":
        return not is_step
    if by == "api":
        return cat in API_CATS
    if by == "kernel":
        return cat in GPU_CATS
    if by == "marker":
        # "user_annotation,train": a marker with categories (Marker(categories=)).
        return str(cat).split(",", 1)[0] in MARKER_CATS and not is_step
    return is_step


def finite_num(v):
    """v as a finite float, or None (not a number, NaN, infinite, or an
    integer beyond a double)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    try:
        v = float(v)
    except OverflowError:
        return None
    return v if math.isfinite(v) else None
