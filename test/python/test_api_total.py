"""import traceprof's calls are total (issue 41 item 3): step(), instant(),
counter(), marker() and every Marker method raise nothing that the same
call would not raise without the library, whatever the arguments: objects
whose __float__, __str__, __repr__, __hash__, __iter__, __bool__ or items()
raise any exception (a meta tensor's RuntimeError, NotImplementedError,
SystemExit ...), unhashable names, NUL bytes, str and bytes subclasses.

Property-based (hypothesis, from PyPI; the test skips without it), against
the stand-in of the library's entry points of test_marker_api.py (so the
arguments that reach C are checked too: bytes and a float) and with no
library.  test/integration/python_api_total.sh runs the same calls against
the real library, from threads and at interpreter finalization."""

import os
import tempfile
import threading

import pytest

import traceprof

hypothesis = pytest.importorskip("hypothesis", reason="no hypothesis (scripts/install-deps "
                                 "--with-optional installs it in the torch venv)")
from hypothesis import given, settings, strategies as st  # noqa: E402
from hypothesis.configuration import set_hypothesis_home_dir  # noqa: E402

# Hypothesis keeps caches in ./.hypothesis: not in the source tree.
set_hypothesis_home_dir(os.path.join(tempfile.gettempdir(),
                                     "traceprof-hypothesis-%d" % os.getuid()))

from test_marker_api import FakeLib  # noqa: E402

# What a dunder of a hostile object raises.  KeyboardInterrupt is left out:
# the calls let it through on purpose (it is the program's ^C).
ERRORS = [RuntimeError, NotImplementedError, TypeError, ValueError, OverflowError,
          AttributeError, KeyError, IndexError, ZeroDivisionError, RecursionError,
          MemoryError, UnicodeError, StopIteration, GeneratorExit, SystemExit,
          AssertionError, OSError, DeprecationWarning, Exception, BaseException]
DUNDERS = ["__float__", "__str__", "__repr__", "__hash__", "__iter__", "__bool__",
           "__index__", "__len__", "__eq__", "items", "encode", "decode"]


def hostile_class(raises, err, base):
    """A class (of base) whose methods named in raises raise err."""
    def boom(*a, **k):
        raise err("hostile")
    ns = {d: boom for d in raises}
    if "__hash__" in raises:
        ns["__hash__"] = boom
    try:
        return type("Hostile", (base,), ns)
    except TypeError:
        return type("Hostile", (object,), ns)


@st.composite
def hostile(draw):
    raises = draw(st.lists(st.sampled_from(DUNDERS), unique=True, max_size=5))
    err = draw(st.sampled_from(ERRORS))
    base = draw(st.sampled_from([object, str, bytes, float, int, dict, list]))
    cls = hostile_class(raises, err, base)
    init = {str: "x\0y", bytes: b"\xff\0", float: 1.5, int: 3, dict: {"a": 1}, list: [1]}
    try:
        return cls(init[base]) if base in init else cls()
    except BaseException:  # noqa: BLE001  (a constructor the dunders broke)
        return object()


def unhashable():
    return st.one_of(st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=3),
                                                                           st.integers(), max_size=2),
                     st.sets(st.integers(), max_size=2).map(list))


anything = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(), st.binary(),
              st.complex_numbers(), hostile(), unhashable(), st.just(float), st.just(object()),
              st.just(threading), st.just(Ellipsis), st.just(NotImplemented)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.tuples(inner, inner),
                            st.dictionaries(st.text(max_size=4), inner, max_size=3)),
    max_leaves=6)

CALLS = ["step", "instant", "counter", "marker", "enabled"]
METHODS = ["start", "finish", "instant", "counter", "with", "decorate", "decorate_call"]


def run_calls(args, method, values):
    name, key, value, cats, on_start, on_finish = args
    traceprof.step()
    traceprof.instant(name)
    traceprof.counter(name, key, value)
    traceprof.enabled()
    m = traceprof.marker(name, categories=cats, record_instant_on_start=on_start,
                         record_instant_on_finish=on_finish)
    m2 = traceprof.Marker(name, cats, on_start, on_finish)
    for mk in (m, m2):
        if method == "start":
            mk.start()
        elif method == "finish":
            mk.finish()
        elif method == "instant":
            mk.instant()
        elif method == "counter":
            mk.counter(values)
        elif method == "with":
            with mk:
                pass
        elif method in ("decorate", "decorate_call"):
            f = mk(lambda: 7)
            if method == "decorate_call":
                assert f() == 7


def check_calls(lib):
    """The arguments that reached the library: what ctypes takes."""
    for c in lib.calls:
        kind, args = c[0], c[1:]
        if kind == "counter":
            assert type(args[0]) is bytes and type(args[1]) is bytes, c
            assert type(args[2]) is float, c
        else:
            assert all(type(a) is bytes for a in args), c


ARGS = st.tuples(anything, anything, anything, anything, anything, anything)


@settings(max_examples=400, deadline=None, database=None)
@given(args=ARGS, method=st.sampled_from(METHODS), values=anything)
def test_total_with_library(args, method, values):
    lib = FakeLib()
    saved = traceprof._Lazy.fns, traceprof._Lazy.looked
    traceprof._Lazy.fns, traceprof._Lazy.looked = lib, True
    try:
        run_calls(args, method, values)
    finally:
        traceprof._Lazy.fns, traceprof._Lazy.looked = saved
    check_calls(lib)


@settings(max_examples=200, deadline=None, database=None)
@given(args=ARGS, method=st.sampled_from(METHODS), values=anything)
def test_total_without_library(args, method, values):
    saved = traceprof._Lazy.fns, traceprof._Lazy.looked
    traceprof._Lazy.fns, traceprof._Lazy.looked = None, True
    try:
        run_calls(args, method, values)
    finally:
        traceprof._Lazy.fns, traceprof._Lazy.looked = saved


@settings(max_examples=100, deadline=None, database=None)
@given(err=st.sampled_from(ERRORS), where=st.sampled_from(["start", "counter", "active",
                                                             "instant_cat", "step"]))
def test_library_call_that_raises(err, where):
    """A ctypes call that raises (an ArgumentError, a broken stand-in): dropped."""
    lib = FakeLib()

    def boom(*a):
        raise err("from the library")
    lib[where] = boom
    saved = traceprof._Lazy.fns, traceprof._Lazy.looked
    traceprof._Lazy.fns, traceprof._Lazy.looked = lib, True
    try:
        run_calls(("n", "k", 1.0, ["c"], True, True), "with", {"a": 1})
        traceprof.marker("n", categories="c").start()
    finally:
        traceprof._Lazy.fns, traceprof._Lazy.looked = saved


def test_found_cases(monkeypatch, capsys):
    """The cases users hit, named: a meta-device loss's float() raises
    RuntimeError, NotImplementedError, and an unhashable name with a bad
    value; each is dropped with one line per kind."""
    lib = FakeLib()
    monkeypatch.setattr(traceprof._Lazy, "fns", lib)
    monkeypatch.setattr(traceprof._Lazy, "looked", True)
    traceprof._warned.clear()

    class MetaLoss:
        def __float__(self):
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")

    class NotImpl:
        def __float__(self):
            raise NotImplementedError

    for _ in range(2):
        traceprof.counter("loss", "value", MetaLoss())
        traceprof.counter("loss", "value", NotImpl())
        traceprof.counter(["un", "hashable"], "v", "not a number")
        traceprof.counter({"a": 1}, "v", object())
    err = capsys.readouterr().err
    assert err.count("traceprof: counter 'loss': value") == 2, err
    assert "(RuntimeError); dropped" in err and "(NotImplementedError); dropped" in err, err
    assert err.count("counter ['un', 'hashable']") == 1, err
    assert lib.calls == [], lib.calls
    # A good value still goes through.
    traceprof.counter("loss", "value", 2)
    assert lib.calls == [("counter", b"loss", b"value", 2.0)]


def test_warnings_are_bounded(monkeypatch, capsys):
    """One line per kind of mistake, and at most _WARN_KEYS kinds: a loop
    over new names cannot grow memory or flood stderr."""
    monkeypatch.setattr(traceprof._Lazy, "fns", FakeLib())
    monkeypatch.setattr(traceprof._Lazy, "looked", True)
    traceprof._warned.clear()
    for i in range(traceprof._WARN_KEYS * 3):
        traceprof.counter("c%d" % i, "v", "x")
    assert len(traceprof._warned) == traceprof._WARN_KEYS
    assert capsys.readouterr().err.count("\n") == traceprof._WARN_KEYS


def test_stderr_gone(monkeypatch):
    """sys.stderr None or closed (finalization, a daemon): the drop is silent."""
    import io
    import sys
    monkeypatch.setattr(traceprof._Lazy, "fns", FakeLib())
    monkeypatch.setattr(traceprof._Lazy, "looked", True)
    traceprof._warned.clear()
    monkeypatch.setattr(sys, "stderr", None)
    traceprof.counter("a", "v", "x")
    closed = io.StringIO()
    closed.close()
    monkeypatch.setattr(sys, "stderr", closed)
    traceprof.counter("b", "v", "x")
    traceprof.marker("m").counter(5)


def test_threads():
    """From many threads at once, with hostile arguments."""
    lib = FakeLib()
    saved = traceprof._Lazy.fns, traceprof._Lazy.looked
    traceprof._Lazy.fns, traceprof._Lazy.looked = lib, True
    errors = []

    class Bad:
        def __float__(self):
            raise RuntimeError

        def __str__(self):
            raise NotImplementedError

        __hash__ = None

    def work():
        try:
            for _ in range(200):
                run_calls((Bad(), Bad(), Bad(), Bad(), Bad(), Bad()), "with", Bad())
        except BaseException as e:  # noqa: BLE001
            errors.append(e)
    try:
        ts = [threading.Thread(target=work) for _ in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    finally:
        traceprof._Lazy.fns, traceprof._Lazy.looked = saved
    assert not errors, errors
